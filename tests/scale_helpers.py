"""Helpers for the Ray / fault / concurrency tests (issue 8): a small demo warehouse, a tiny model
saved as a local folder (so subprocesses and Ray workers load it by path), score-table snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

SCORE_TABLES = {
    "persuasion": "query_form_id, fact_id, context_id, persuasion, entropy",
    "susceptibility": "query_form_id, fact_id, susceptibility, mixture_entropy, mean_conditional_entropy, "
    "n_contexts, prior_entropy, prior_kl",
    "prior_topk": "query_form_id, fact_id, rank, token_id, token, prob",
}


def smollm2_folder() -> str:
    from ctxprior.scoring.models import _gguf_cache, alias_path

    folder, _ = _gguf_cache(alias_path("smollm2-135m"))
    return str(folder)


def make_tiny_folder(dest: Path, seed: int = 0, poison: str | None = None) -> str:
    """A tiny random llama with SmolLM2's tokenizer, saved to ``dest``; ``poison`` = nan | inf sets
    the output head's weights to that value (a broken model)."""
    import torch
    from scoring_helpers import tiny_model
    from transformers import AutoTokenizer

    if (dest / "config.json").exists():
        return str(dest)
    tok = AutoTokenizer.from_pretrained(smollm2_folder())
    lm = tiny_model(tok, seed=seed)
    if poison:
        with torch.no_grad():
            lm.model.get_output_embeddings().weight.fill_(float(poison))
    lm.model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))
    return str(dest)


def make_demo_db(dest: Path, relations=("capital",), entities: int = 4, contexts: int = 12) -> str:
    """A warehouse with the demo dataset and one small sample (id 1)."""
    from click.testing import CliRunner

    from ctxprior.cli import cli

    r = CliRunner()
    args = ["--db", str(dest)]
    res = r.invoke(cli, [*args, "ingest", "demo"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rel = [x for rv in relations for x in ("--relation", rv)]
    res = r.invoke(
        cli,
        [
            *args,
            "sample",
            "--dataset",
            "demo",
            *rel,
            "--entities",
            str(entities),
            "--contexts",
            str(contexts),
        ],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    return str(dest)


def copy_db(src: str, dest: Path) -> str:
    shutil.copyfile(src, dest)
    return str(dest)


def snapshot(db: str, run_id: int | None = None) -> dict:
    """Score rows of a run (run_id left out so two runs compare), sorted, plus run_unit facts."""
    from ctxprior.storage import open_store

    with open_store(db, read_only=True, wait=30) as store:
        if run_id is None:
            run_id = store.scalar("SELECT max(run_id) FROM run")
        out = {
            t: store.query(f"SELECT {cols} FROM {t} WHERE run_id = ? ORDER BY ALL", [run_id])
            for t, cols in SCORE_TABLES.items()
        }
        out["units"] = store.query(
            "SELECT unit_id, status FROM run_unit WHERE run_id = ? ORDER BY 1", [run_id]
        )
        out["status"] = store.scalar("SELECT status FROM run WHERE run_id = ?", [run_id])
    return out


def duplicates(db: str) -> int:
    """Score rows that appear more than once for the same key (must be 0)."""
    from ctxprior.storage import open_store

    with open_store(db, read_only=True, wait=30) as store:
        return int(
            store.scalar(
                """SELECT (SELECT count(*) FROM (SELECT run_id, query_form_id, fact_id, context_id, count(*) n
                                             FROM persuasion GROUP BY ALL HAVING n > 1))
                    + (SELECT count(*) FROM (SELECT run_id, query_form_id, fact_id, count(*) n
                                             FROM susceptibility GROUP BY ALL HAVING n > 1))
                    + (SELECT count(*) FROM (SELECT run_id, unit_id, count(*) n
                                             FROM run_unit GROUP BY ALL HAVING n > 1))"""
            )
        )


# ------------------------------------------------------------------ child processes
# Crash tests run the real CLI in forked children of a forkserver that imported torch,
# transformers and ctxprior once (no per-child 10-30 s import); a child is a separate process
# that can be SIGKILLed, resource-limited, or stripped of root's file-permission override.


def _drop_dac_override() -> None:
    """Remove CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: this root process now obeys file modes."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    class Hdr(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    h, d = Hdr(0x20080522, 0), (Data * 2)()
    if libc.capget(ctypes.byref(h), d) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    mask = ~((1 << 1) | (1 << 2)) & 0xFFFFFFFF
    for f in ("effective", "permitted", "inheritable"):
        setattr(d[0], f, getattr(d[0], f) & mask)
    if libc.capset(ctypes.byref(h), d) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def cli_child(
    argv: list[str], env: dict, out_path: str, fsize: int | None = None, no_dac: bool = False
) -> None:
    """Child body: env, limits, stdout/stderr to a file, then the real `ctxprior` entry point."""
    import os
    import resource
    import signal

    os.environ.update(env)
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    if fsize is not None:  # a disk that is full beyond `fsize` bytes per file
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if no_dac:
        _drop_dac_override()
    import torch

    # one intra-op thread, as in the test process (conftest.one_torch_thread): a reduction split over
    # two threads adds in another order, so rows a child computes would differ in the last bit
    # from the same rows computed in the test process (and two threads are slower on 2 cores)
    torch.set_num_threads(1)
    from ctxprior.cli import main

    main(list(argv))


_CTX = None


def forkserver():
    import multiprocessing as mp

    global _CTX
    if _CTX is None:
        _CTX = mp.get_context("forkserver")
        _CTX.set_forkserver_preload(
            [
                "torch",
                "transformers",
                "ctxprior.cli",
                "ctxprior.scoring.runs",
                "ctxprior.scoring.engine",
                "scale_helpers",
            ]
        )
    return _CTX


def start_cli(argv, out_path, env=None, **kw):
    p = forkserver().Process(
        target=cli_child, args=(list(map(str, argv)), dict(env or {}), str(out_path)), kwargs=kw
    )
    p.start()
    return p


def run_cli_child(argv, out_path, env=None, timeout: float = 600, **kw) -> tuple[int, str]:
    """Run `ctxprior argv` in a forked child; (exit code, -9 = SIGKILL) and its output."""
    p = start_cli(argv, out_path, env, **kw)
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        raise TimeoutError(f"ctxprior {' '.join(map(str, argv))} did not finish in {timeout} s")
    return p.exitcode, Path(out_path).read_text(errors="replace")


def max_float_diff(a: dict, b: dict) -> float:
    """Same rows (keys, ints, strings, status) in both snapshots; the largest float difference."""
    assert a.keys() == b.keys()
    worst = 0.0
    for t in a:
        if not isinstance(a[t], list):
            assert a[t] == b[t], t
            continue
        assert len(a[t]) == len(b[t]), t
        for ra, rb in zip(a[t], b[t]):
            for x, y in zip(ra, rb):
                if isinstance(x, float) and isinstance(y, float):
                    worst = max(worst, abs(x - y))
                else:
                    assert x == y, (t, ra, rb)
    return worst


# The process, fault and lock tests' run: its outcome generations are 4 tokens, not the source's 64
# (the same code path and the same rows per unit; 64 steps of a tiny model with SmolLM2's 49,152-entry
# vocabulary made one run take 168 s instead of 27 s with no generation, on a loaded 2-core machine)
OUTCOME_TOKENS = 4
SCORE = [
    "score",
    "--sample",
    "1",
    "--query-types",
    "open",
    "--shard-size",
    "1",
    "--max-new-tokens",
    str(OUTCOME_TOKENS),
    "--quiet",
]


def scored_base(d: Path) -> dict:
    """A one-relation demo warehouse, a tiny model folder, and the rows of an uninterrupted run."""
    db = make_demo_db(d / "base.duckdb", relations=("capital",), entities=4, contexts=12)
    tiny = make_tiny_folder(d / "tiny")
    ref = copy_db(db, d / "ref.duckdb")
    code, out = run_cli_child(["--db", ref, *SCORE, "--model", tiny], d / "ref.log")
    assert code == 0, out
    return {"db": db, "tiny": tiny, "ref": snapshot(ref), "refdb": ref, "dir": d}


def open_handles(path: str) -> int:
    """How many file descriptors of this process point at ``path`` (Linux: /proc/self/fd)."""
    import os

    real = os.path.realpath(path)
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == real
        except OSError:
            pass
    return n
