"""The GPU check: one command for anyone with an NVIDIA GPU (and for us), offline, under a deadline.

    bash scripts/fetch-wheels.sh .whl 3.12        # once, on a machine that reaches PyPI
    python3 benchmarks/gpu_check.py --wheels .whl          # raw files in results/gpu/<UTC date>-<card>/
    python3 benchmarks/gpu_check.py --smoke --out /tmp/smoke   # the CPU smoke mode (the test suite runs it)

It needs torch, transformers, numpy, pandas and pyarrow, plus the warehouse's three wheels
(duckdb, sqlalchemy, duckdb-engine: ``scripts/fetch-wheels.sh`` downloads them for a Python
version; ``--wheels DIR`` installs them into the work folder when they are not importable). It runs
from a checkout without installing ctxprior (``src`` goes on ``PYTHONPATH``), and in order:

1. the environment (GPU, driver, torch, CUDA, cuDNN, transformers, Python);
2. ``attention_probe.py``: NaN on fully masked rows per SDPA backend, the engine's 16-bit scores
   against CPU float32, the output-head path;
3. end to end into a DuckDB warehouse: a random-init Pythia-shape model with a BPE tokenizer trained
   offline (``gpu_model.py``), ``ctxprior ingest demo`` -> ``sample`` -> ``score --device cuda``,
   then the run's prompts/s, the engine's counters and the rows written; and the engine alone on the
   same unit shape, so the ratio says whether the warehouse starves the GPU;
4. ``gpu.py`` on the real-template unit (``real_units.py``: the demo's templates under SmolLM2's
   BPE, ids committed): throughput per Pythia shape and dtype against the unique-token FLOP floor
   (the run's measured matmul peak and the card's nominal one), the competent baseline (its ψ/χ
   checked against the engine's) and the naive scorer, each ratio measured in the same run; a
   profile of one whole 6.9b unit; precision by dtype;
5. ``gpu.py`` again on the synthetic unit of the earlier figures (float16), while time is left.

The raw files go to ``--out`` (default ``results/gpu/<UTC date>-<card>``, the folder committed
with the figures: results/gpu/README.md): ``results.jsonl`` (every result, appended the moment it
exists), ``log.txt`` (everything printed), ``environment.json``, ``gpu.json`` and
``gpu-synthetic.json`` (the two benchmark runs), ``profile.json`` (the profile rows); a crash or a
timeout keeps all that was measured before it (the scratch folder ``scratch/`` is not for committing).
Each step runs as a child process with the time left before ``--deadline`` (default 540 s); the
last line is a summary against issue 34's goals; the exit code is 1 when a step failed or the
competent baseline's ψ/χ differ from the engine's.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# issue 34's goals on one H100, float16, the real-template unit (floors against the run's measured peak)
GOALS = {
    "floor_6.9b": 0.65,
    "floor_1.4b": 0.45,
    "floor_410m": 0.25,
    "vs_competent_6.9b": 3.0,
    "vs_naive": 5.0,
    "e2e_vs_engine": 0.90,
}
WAREHOUSE_MODULES = ("duckdb", "sqlalchemy", "duckdb_engine")


def card_name(device: str) -> str:
    """``h100-80gb-hbm3``, ``h200``, ``cpu``: the card in a results folder's name."""
    if device != "cuda":
        return "cpu"
    import re

    import torch

    name = torch.cuda.get_device_name().lower().replace("nvidia", "")
    return re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "gpu"


def default_out(device: str) -> Path:
    """``results/gpu/<UTC date>-<card>``: where a run's raw files are committed (results/gpu/README.md)."""
    return ROOT / "results" / "gpu" / f"{time.strftime('%Y-%m-%d', time.gmtime())}-{card_name(device)}"


class Check:
    """The check's state: where results go, the deadline, the child processes' environment."""

    def __init__(self, args):
        self.args = args
        self.out = Path(args.out or default_out(args.device))
        self.out.mkdir(parents=True, exist_ok=True)
        self.work = Path(args.work or self.out / "scratch")
        self.work.mkdir(parents=True, exist_ok=True)
        self.results = self.out / "results.jsonl"
        self.log = open(self.out / "log.txt", "a", buffering=1)
        self.t0 = time.monotonic()
        self.env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p),
        }

    def left(self) -> float:
        return self.args.deadline - (time.monotonic() - self.t0)

    def say(self, text: str) -> None:
        line = f"[{time.monotonic() - self.t0:6.1f}s] {text}"
        print(line, flush=True)
        self.log.write(line + "\n")

    def record(self, row: dict) -> None:
        with open(self.results, "a") as f:
            f.write(json.dumps(row) + "\n")

    def run(self, cmd: list[str], budget: float, what: str) -> tuple[int, str]:
        """A child process with at most ``budget`` seconds (and never past the deadline); its output
        goes to the console and the log as it comes. Returns (exit code, output); 124 = timed out."""
        limit = max(1.0, min(budget, self.left()))
        self.say(f"{what}: {' '.join(map(str, cmd))} (limit {limit:.0f}s)")
        proc = subprocess.Popen(
            [str(c) for c in cmd],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: list[str] = []

        def pump() -> None:  # the child's output to the console and the log, as it comes
            for line in proc.stdout:  # type: ignore[union-attr]
                lines.append(line)
                print(line, end="", flush=True)
                self.log.write(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = 124
        reader.join(timeout=5)
        if rc:
            self.say(f"{what}: exit {rc}" + (" (timed out)" if rc == 124 else ""))
        return rc, "".join(lines)


def environment(check: Check) -> None:
    import platform

    import torch
    import transformers

    dev = check.args.device
    row = {
        "step": "environment",
        "device": torch.cuda.get_device_name() if dev == "cuda" else f"CPU ({platform.machine()})",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "cudnn": torch.backends.cudnn.version() if torch.cuda.is_available() else None,
        "transformers": transformers.__version__,
        "driver": None,
        "memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
        if dev == "cuda"
        else None,
    }
    try:
        q = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        row["driver"] = subprocess.run(q, capture_output=True, text=True, timeout=20).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    check.record(row)
    (check.out / "environment.json").write_text(json.dumps(row, indent=1) + "\n")
    check.say("environment: " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "step"))


def warehouse_wheels(check: Check) -> bool:
    """Make duckdb, sqlalchemy and duckdb-engine importable by the children: already there, or
    installed from ``--wheels`` into the work folder."""
    probe = [sys.executable, "-c", "import " + ", ".join(WAREHOUSE_MODULES)]
    if subprocess.run(probe, env=check.env, capture_output=True).returncode == 0:
        return True
    wheels = sorted(Path(check.args.wheels).glob("*.whl")) if check.args.wheels else []
    if not wheels:
        check.say(f"end to end: skipped, {'/'.join(WAREHOUSE_MODULES)} not importable and no --wheels folder")
        check.record({"step": "e2e", "skipped": "warehouse packages missing (scripts/fetch-wheels.sh)"})
        return False
    site = check.work / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
    rc, _ = check.run([*pip, "--upgrade", "--target", site, *wheels], 120, "wheels")
    check.env["PYTHONPATH"] = os.pathsep.join([str(site), check.env["PYTHONPATH"]])
    return rc == 0


def sql_rows(check: Check, db: Path, query: str) -> list[dict]:
    rc, out = check.run(
        [sys.executable, "-m", "ctxprior", "--db", db, "sql", "--format", "csv", query], 60, "query"
    )
    return list(csv.DictReader(io.StringIO(out.strip()))) if rc == 0 else []


def end_to_end(check: Check) -> dict | None:
    a = check.args
    db, model = check.work / "e2e.duckdb", check.work / f"pythia-{a.e2e_shape}-random"
    db.unlink(missing_ok=True)
    dtype = "float16" if a.device == "cuda" else "float32"
    cp = [sys.executable, "-m", "ctxprior", "--db", db]
    steps = [
        ([sys.executable, HERE / "gpu_model.py", model, "--shape", a.e2e_shape, "--dtype", dtype], "model"),
        ([*cp, "ingest", "demo"], "ingest"),
        (
            [*cp, "sample", "--dataset", "demo", "--relation", a.e2e_relation]
            + ["--entities", a.e2e_entities, "--contexts", a.e2e_contexts],
            "sample",
        ),
    ]
    for cmd, what in steps:
        rc, out = check.run(cmd, 150, what)
        if rc:
            check.record({"step": "e2e", "failed": what, "rc": rc})
            return None
    sample = out.strip().splitlines()[-1]
    rc, _ = check.run(
        [*cp, "score", "--sample", sample, "--model", model, "--device", a.device, "--quiet"], 240, "score"
    )
    run = sql_rows(check, db, E2E_SQL["run"])
    engine = sql_rows(check, db, E2E_SQL["engine"])
    counts = sql_rows(check, db, E2E_SQL["counts"])
    row = {
        "step": "e2e",
        "rc": rc,
        "shape": a.e2e_shape,
        "run": run[:1],
        "engine": engine,
        "rows": counts[:1],
    }
    check.record(row)
    return row


E2E_SQL = {  # what the end-to-end step reads back from its warehouse
    "run": "SELECT run_id, status, model, dtype, device, units_done, units_total, prompts_done, "
    "date_diff('millisecond', started_at, ended_at) / 1000.0 AS seconds, error FROM run",
    "engine": "SELECT device, batch_size, oom_splits, head, prefix_reuse, count(*) AS units, "
    "sum(forward_calls) AS forwards, sum(tokens) AS tokens FROM run_unit_engine GROUP BY ALL",
    "counts": "SELECT (SELECT count(*) FROM persuasion) AS persuasion_rows, "
    "(SELECT count(*) FROM susceptibility) AS susceptibility_rows, "
    "(SELECT count(*) FROM run_unit WHERE status <> 'done') AS units_not_done, "
    "(SELECT sum(seconds) FROM run_unit) AS unit_seconds",
}


def engine_alone(check: Check, e2e: dict) -> None:
    """The engine benchmark on the end-to-end unit's shape: e2e prompts/s over engine prompts/s."""
    a = check.args
    jsonl = check.work / "engine_alone.jsonl"
    jsonl.unlink(missing_ok=True)
    cmd = [sys.executable, HERE / "gpu.py", "--device", a.device, "--shapes", a.e2e_shape, "--dtypes"]
    cmd += ["float16" if a.device == "cuda" else "float32", "--contexts", a.e2e_contexts]
    cmd += ["--entities", a.e2e_entities, "--naive-entities", "0", "--profile", "none", "--no-precision"]
    cmd += ["--competent-entities", "0", "--unit", "synthetic"]  # the engine alone, as before issue 34
    cmd += ["--jsonl", jsonl]
    check.run(cmd, 90, "engine alone")
    rows = [json.loads(x) for x in jsonl.read_text().splitlines()] if jsonl.exists() else []
    rows = [r for r in rows if "prompts_per_s" in r]
    run = (e2e.get("run") or [{}])[0]
    if not rows or not run.get("seconds"):
        return
    alone = rows[0]
    e2e_rate = float(run["prompts_done"]) / float(run["seconds"])
    tokens = sum(float(r["tokens"]) for r in e2e.get("engine") or [])
    row = {
        "step": "e2e_vs_engine",
        "e2e_prompts_per_s": round(e2e_rate),
        "engine_prompts_per_s": alone["prompts_per_s"],
        "ratio": round(e2e_rate / alone["prompts_per_s"], 3),
        # per token through the model: the demo's real prompts are longer than the synthetic unit's
        "e2e_tokens_per_prompt": round(tokens / float(run["prompts_done"]), 2),
        "engine_tokens_per_prompt": round(alone["tokens_computed"] / alone["prompts"], 2),
        "e2e_computed_tokens_per_s": round(tokens / float(run["seconds"])),
        "engine_computed_tokens_per_s": round(alone["tokens_computed"] / alone["seconds"]),
    }
    row["token_ratio"] = round(row["e2e_computed_tokens_per_s"] / row["engine_computed_tokens_per_s"], 3)
    check.record(row)
    check.say(
        f"end to end {row['e2e_prompts_per_s']} prompts/s, engine alone {row['engine_prompts_per_s']}: ratio "
        f"{row['ratio']}; per computed token ({row['e2e_tokens_per_prompt']} vs {row['engine_tokens_per_prompt']} "
        f"a prompt): {row['e2e_computed_tokens_per_s']} vs {row['engine_computed_tokens_per_s']} tokens/s, "
        f"ratio {row['token_ratio']}"
    )


def bench(check: Check) -> None:
    """gpu.py on the real-template unit (every shape and dtype, the competent baseline and the naive
    scorer, a profile, precision), then on the synthetic unit while time is left; then the profile
    rows to ``profile.json``."""
    a = check.args
    runs = [(a.bench_args, "gpu.json", "benchmark (real templates)", 30)]
    if a.synthetic_args != "none":
        runs.append(
            (a.synthetic_args + " --unit synthetic", "gpu-synthetic.json", "benchmark (synthetic)", 60)
        )
    for extra, name, what, need in runs:
        cmd = [sys.executable, HERE / "gpu.py", "--device", a.device, *extra.split()]
        if check.left() > need:
            check.run(cmd + ["--json", check.out / name, "--jsonl", check.results], check.left() - 5, what)
        else:
            check.say(f"{what}: skipped, {check.left():.0f}s left")
    rows = [json.loads(x) for x in check.results.read_text().splitlines()] if check.results.exists() else []
    prof = [r for r in rows if "top_kernels" in r]
    (check.out / "profile.json").write_text(json.dumps(prof, indent=1) + "\n")


def summary(check: Check) -> dict:
    rows = [json.loads(x) for x in check.results.read_text().splitlines()] if check.results.exists() else []
    fp16 = {
        r["shape"]: r
        for r in rows
        if "shape" in r and r.get("dtype") == "float16" and "floor_fraction" in r and r.get("unit") == "real"
    }
    got = {
        "floor_6.9b": fp16.get("6.9b", {}).get("floor_fraction"),
        "floor_1.4b": fp16.get("1.4b", {}).get("floor_fraction"),
        "floor_410m": fp16.get("410m", {}).get("floor_fraction"),
        "vs_competent_6.9b": fp16.get("6.9b", {}).get("vs_competent"),
        "vs_naive": min((r["vs_naive"] for r in fp16.values() if "vs_naive" in r), default=None),
        "e2e_vs_engine": next((r["token_ratio"] for r in rows if r.get("step") == "e2e_vs_engine"), None),
    }
    out = {
        "step": "summary",
        "seconds": round(time.monotonic() - check.t0, 1),
        "engine_finite": next((r["finite"] for r in rows if r.get("step") == "probe"), None),
        **{
            k: {"got": v, "goal": GOALS[k], "met": None if v is None else v >= GOALS[k]}
            for k, v in got.items()
        },
    }
    # cascade attention against the gather path, measured in the same run (real unit, float16)
    out["cascade_vs_gather"] = {k: r.get("cascade_vs_gather") for k, r in fp16.items()}
    out["cascade_vs_gather_max_abs_diff"] = {
        k: max(r.get("cascade_vs_gather_psi_max_abs_diff", 0), r.get("cascade_vs_gather_chi_max_abs_diff", 0))
        for k, r in fp16.items()
        if "cascade_vs_gather" in r
    }
    out["failed_steps"] = [r.get("step") or r.get("failed") for r in rows if r.get("rc") not in (None, 0)]
    # the competent baseline's psi/chi must equal the engine's (to the dtype's tolerance)
    out["competent_mismatch"] = [
        f"{r['shape']} {r['dtype']} {r.get('unit')}" for r in rows if r.get("competent_matches") is False
    ]
    out["failed_rows"] = [
        f"{r.get('shape') or r.get('profile') or r.get('precision')}: {r['error']}"
        for r in rows
        if "error" in r
    ]
    check.record(out)
    check.say("summary: " + json.dumps(out))
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--out",
        default=None,
        help="folder for the raw files: results.jsonl, log.txt, environment.json, gpu.json, "
        "gpu-synthetic.json, profile.json (default results/gpu/<UTC date>-<card>)",
    )
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--deadline", type=float, default=540, help="seconds for the whole check (default 540)")
    ap.add_argument(
        "--wheels", default=".whl", help="folder of the warehouse wheels (scripts/fetch-wheels.sh)"
    )
    ap.add_argument("--work", default=None, help="scratch folder (default OUT/scratch)")
    ap.add_argument("--skip", default="", help="comma-separated steps to leave out: probe, e2e, bench")
    ap.add_argument(
        "--bench-args",
        default="--shapes 6.9b,1.4b,410m",
        help="arguments for gpu.py's run on the real-template unit (engine, competent baseline, naive scorer, profile, precision)",
    )
    ap.add_argument(
        "--synthetic-args",
        default="--shapes 6.9b,1.4b,410m --dtypes float16 --no-precision --profile none --no-compare-attention",
        help="arguments for gpu.py's second run, on the synthetic unit (the earlier figures' unit); 'none': skip",
    )
    ap.add_argument("--e2e-shape", default="410m")
    ap.add_argument("--e2e-relation", default="capital")
    ap.add_argument(
        "--e2e-entities", default="60", help="per query form: the demo relation's 30 real + 30 fake"
    )
    ap.add_argument(
        "--e2e-contexts", default="540", help="a multiple of 3 x entities (9 per entity; the paper: 6 x 100)"
    )
    ap.add_argument("--smoke", action="store_true", help="the CPU smoke mode: tiny shapes, a few prompts")
    args = ap.parse_args(argv)
    if args.smoke:
        args.device, args.e2e_shape, args.e2e_entities, args.e2e_contexts = "cpu", "smoke", "2", "6"
        args.bench_args = "--smoke"
        args.synthetic_args = "none"  # the synthetic unit is the benchmark smoke test's (test_benchmarks.py)
    return args


def main(argv=None) -> int:
    check = Check(parse_args(argv))
    a, skip = check.args, set(filter(None, check.args.skip.split(",")))
    check.say(f"gpu check on {a.device}: results in {check.results}, deadline {a.deadline:.0f}s")
    environment(check)
    if "probe" not in skip:
        probe = [sys.executable, HERE / "attention_probe.py", "--device", a.device, "--jsonl", check.results]
        rc, _ = check.run(probe + (["--smoke"] if a.smoke else []), 90, "attention probe")
        check.record({"step": "probe", "rc": rc, "finite": rc == 0})
    if "e2e" not in skip and warehouse_wheels(check):
        e2e = end_to_end(check)
        if e2e:
            engine_alone(check, e2e)
    if "bench" not in skip:
        bench(check)
    done = summary(check)
    bad = done["failed_steps"] or done["competent_mismatch"] or done["engine_finite"] is False
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
