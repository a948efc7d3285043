"""The GPU check: one command for anyone with an NVIDIA GPU (and for us), offline, under a deadline.

    bash scripts/fetch-wheels.sh .whl 3.12        # once, on a machine that reaches PyPI
    python3 benchmarks/gpu_check.py --wheels .whl          # raw files in results/gpu/<UTC date>-<card>/
    python3 benchmarks/gpu_check.py --smoke --out /tmp/smoke   # the CPU smoke mode (the test suite runs it)

It needs torch, transformers, numpy, pandas and pyarrow, plus the warehouse's three wheels
(duckdb, sqlalchemy, duckdb-engine: ``scripts/fetch-wheels.sh`` downloads them for a Python
version; ``--wheels DIR`` installs them into the work folder when they are not importable). It runs
from a checkout without installing ctxprior (``src`` goes on ``PYTHONPATH``), and in order:

1. the environment (GPU, driver, torch, CUDA, cuDNN, transformers, Python);
2. the carried wheels, before anything that may import the warehouse: already importable, or
   installed from ``--wheels`` into the work folder (where each module came from is recorded);
3. ``attention_probe.py``: NaN on fully masked rows per SDPA backend, the engine's 16-bit scores
   against CPU float32, the output-head path;
4. end to end into a DuckDB warehouse: a random-init Pythia-shape model with a BPE tokenizer trained
   offline (``gpu_model.py``), ``ctxprior ingest demo`` -> ``sample`` -> ``score --device cuda``,
   then the run's prompts/s, the engine's counters and the rows written; and the engine alone on the
   same unit shape, so the ratio says whether the warehouse starves the GPU;
5. ``gpu.py`` on the real-template unit (``real_units.py``: the demo's templates under SmolLM2's
   BPE, ids committed): throughput per Pythia shape and dtype against the unique-token FLOP floor
   (the run's measured matmul peak and the card's nominal one), the competent baseline (its ψ/χ
   checked against the engine's) and the naive scorer, each ratio measured in the same run; a
   profile of one whole 6.9b unit; precision by dtype;
6. ``gpu.py`` again on the synthetic unit of the earlier figures (float16), while time is left.

The raw files go to ``--out`` (default ``results/gpu/<UTC date>-<card>``, the folder committed
with the figures: results/gpu/README.md): ``results.jsonl`` (every result, appended the moment it
exists), ``log.txt`` (everything printed), ``environment.json``, ``gpu.json`` and
``gpu-synthetic.json`` (the two benchmark runs), ``profile.json`` (the profile rows); a crash or a
timeout keeps all that was measured before it (the scratch folder ``scratch/`` is not for committing).
Each step runs as child processes within its own budget (``BUDGETS``) and the time left before
``--deadline`` (default 460 s, so the check ends within 8 minutes and a 15-minute GPU slot holds a
rerun); each step's status (``ok``, ``failed``, ``timeout``, ``skipped``: ``{"step": NAME,
"status": ...}``) goes to ``results.jsonl`` when it ends. The last line is a summary against issue
34's goals; the exit code is 1 when a step failed or timed out, a measured row failed, the
competent baseline's ψ/χ differ from the engine's, the engine's scores were not finite, or nothing
was measured (every measuring step skipped). ``CTXPRIOR_FAULT`` reaches the children (the end to
end's ``score`` has the ``model.load`` point): the suite makes a step fail so.
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
# what the end to end needs beyond the GPU image: module -> the carried wheels that provide it
# (scripts/fetch-wheels.sh downloads exactly these; pydantic: the image's transformers may not bring it)
CARRIED = {
    "duckdb": ("duckdb",),
    "sqlalchemy": ("sqlalchemy",),
    "duckdb_engine": ("duckdb_engine",),
    "pydantic": ("pydantic", "pydantic_core", "annotated_types", "typing_inspection"),
}
WAREHOUSE_MODULES = tuple(CARRIED)
# seconds each step may take at most (and never past the deadline); bench: what is left
BUDGETS = {"wheels": 60, "probe": 60, "e2e": 200, "e2e_vs_engine": 60}
MEASURING = ("probe", "e2e", "bench")  # the steps that measure something


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
        self.statuses: dict[str, str] = {}
        self.env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p),
        }

    def budget(self, step: str) -> float:
        """Seconds a step may take (``BUDGETS``; times ``--budget-scale``: 5 in smoke mode, a shared CPU)."""
        return BUDGETS[step] * self.args.budget_scale

    def left(self) -> float:
        return self.args.deadline - (time.monotonic() - self.t0)

    def say(self, text: str) -> None:
        line = f"[{time.monotonic() - self.t0:6.1f}s] {text}"
        print(line, flush=True)
        self.log.write(line + "\n")

    def record(self, row: dict) -> None:
        with open(self.results, "a") as f:
            f.write(json.dumps(row) + "\n")

    def status(self, step: str, status: str, started: float, **why) -> None:
        """A step's outcome, the moment it ends: ok, failed, timeout or skipped."""
        self.statuses[step] = status
        row = {"step": step, "status": status, "seconds": round(time.monotonic() - started, 1), **why}
        self.record(row)
        self.say(f"{step}: {status}" + (f" ({why})" if why else ""))

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


def warehouse_origin(check: Check) -> dict:
    """Where the children import each of ``CARRIED``'s modules from (None: not importable)."""
    code = (
        "import importlib.util as u, json; print(json.dumps({m: (lambda s: s and s.origin)(u.find_spec(m)) "
        f"for m in {list(CARRIED)!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=check.env, capture_output=True, text=True, cwd=ROOT
    )
    return json.loads(out.stdout.splitlines()[-1]) if out.returncode == 0 and out.stdout.strip() else {}


def warehouse_wheels(check: Check, wanted: bool) -> bool:
    """Step ``wheels``, before anything that may import the warehouse: duckdb, sqlalchemy,
    duckdb-engine and pydantic (``CARRIED``) importable by the children: already there, or the
    missing ones' wheels installed from ``--wheels`` into the work folder. Without them the step
    fails when the end to end is ``wanted`` (else it is skipped)."""
    t = time.monotonic()
    where = warehouse_origin(check)
    missing = [m for m in CARRIED if not where.get(m)]
    if where and not missing:
        check.status("wheels", "ok", t, modules=where, installed=[])
        return True
    dists = {d for m in missing for d in CARRIED[m]}
    found = sorted(Path(check.args.wheels).glob("*.whl")) if check.args.wheels else []
    wheels = [w for w in found if w.name.split("-")[0].lower() in dists]
    lacking = sorted(dists - {w.name.split("-")[0].lower() for w in wheels})
    if lacking:
        why = f"{', '.join(missing)} not importable and no wheels of {', '.join(lacking)} in --wheels "
        check.status("wheels", "failed" if wanted else "skipped", t, why=why + "(scripts/fetch-wheels.sh)")
        return False
    site = check.work / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
    rc, _ = check.run([*pip, "--upgrade", "--target", site, *wheels], check.budget("wheels"), "wheels")
    check.env["PYTHONPATH"] = os.pathsep.join([str(site), check.env["PYTHONPATH"]])
    where = warehouse_origin(check) if rc == 0 else {}
    installed = [w.name for w in wheels]
    if where and all(where.values()):
        check.status("wheels", "ok", t, modules=where, installed=installed)
        return True
    check.status("wheels", "timeout" if rc == 124 else "failed", t, rc=rc, installed=installed, modules=where)
    return False


def sql_rows(check: Check, db: Path, query: str) -> list[dict]:
    rc, out = check.run(
        [sys.executable, "-m", "ctxprior", "--db", db, "sql", "--format", "csv", query], 60, "query"
    )
    return list(csv.DictReader(io.StringIO(out.strip()))) if rc == 0 else []


def end_to_end(check: Check) -> dict | None:
    """Step ``e2e``: a random Pythia-shape model, ``ingest demo`` -> ``sample`` -> ``score`` into a
    DuckDB warehouse, then the run, the engine's counters and the rows read back."""
    a, t = check.args, time.monotonic()
    db, model = check.work / "e2e.duckdb", check.work / f"pythia-{a.e2e_shape}-random"
    db.unlink(missing_ok=True)
    dtype = "float16" if a.device == "cuda" else "float32"
    cp = [sys.executable, "-m", "ctxprior", "--db", db]
    steps = [
        (
            [sys.executable, HERE / "gpu_model.py", model, "--shape", a.e2e_shape, "--dtype", dtype],
            "model",
            60,
        ),
        ([*cp, "ingest", "demo"], "ingest", 40),
        (
            [*cp, "sample", "--dataset", "demo", "--relation", a.e2e_relation]
            + ["--entities", a.e2e_entities, "--contexts", a.e2e_contexts],
            "sample",
            30,
        ),
    ]
    end = time.monotonic() + check.budget("e2e")
    for cmd, what, budget in steps:
        rc, out = check.run(cmd, min(budget * check.args.budget_scale, end - time.monotonic()), what)
        if rc:
            check.record({"step": "e2e", "failed": what, "rc": rc})
            check.status("e2e", "timeout" if rc == 124 else "failed", t, failed=what, rc=rc)
            return None
    sample = out.strip().splitlines()[-1]
    cmd = [*cp, "score", "--sample", sample, "--model", model, "--device", a.device, "--quiet"]
    rc, _ = check.run(cmd, end - time.monotonic(), "score")
    run = sql_rows(check, db, E2E_SQL["run"])
    engine = sql_rows(check, db, E2E_SQL["engine"])
    counts = [{k: r[k] for k in COUNTS} for r in run[:1]]  # the rows written, read in the same query
    row = {"step": "e2e", "rc": rc, "shape": a.e2e_shape, "run": run[:1], "engine": engine, "rows": counts}
    check.record(row)
    done = rc == 0 and run[:1] and engine and run[0].get("status") == "done"
    done = done and run[0].get("units_not_done") == "0"
    if not done:
        check.status("e2e", "timeout" if rc == 124 else "failed", t, failed="score", rc=rc)
        return None
    check.status("e2e", "ok", t)
    return row


E2E_SQL = {  # what the end-to-end step reads back from its warehouse
    "run": "SELECT run_id, status, model, dtype, device, units_done, units_total, prompts_done, "
    "date_diff('millisecond', started_at, ended_at) / 1000.0 AS seconds, error, "
    "(SELECT count(*) FROM persuasion) AS persuasion_rows, "
    "(SELECT count(*) FROM susceptibility) AS susceptibility_rows, "
    "(SELECT count(*) FROM run_unit WHERE status <> 'done') AS units_not_done, "
    "(SELECT sum(seconds) FROM run_unit) AS unit_seconds FROM run",
    "engine": "SELECT device, batch_size, oom_splits, head, prefix_reuse, count(*) AS units, "
    "sum(forward_calls) AS forwards, sum(tokens) AS tokens FROM run_unit_engine GROUP BY ALL",
}


COUNTS = ("persuasion_rows", "susceptibility_rows", "units_not_done", "unit_seconds")


def engine_alone(check: Check, e2e: dict) -> None:
    """Step ``e2e_vs_engine``: the engine benchmark on the end-to-end unit's shape, e2e prompts/s
    over engine prompts/s."""
    a, t = check.args, time.monotonic()
    jsonl = check.work / "engine_alone.jsonl"
    jsonl.unlink(missing_ok=True)
    cmd = [sys.executable, HERE / "gpu.py", "--device", a.device, "--shapes", a.e2e_shape, "--dtypes"]
    cmd += ["float16" if a.device == "cuda" else "float32", "--contexts", a.e2e_contexts]
    cmd += ["--entities", a.e2e_entities, "--naive-entities", "0", "--profile", "none", "--no-precision"]
    cmd += ["--competent-entities", "0", "--unit", "synthetic", "--no-compare-attention"]  # the engine alone
    cmd += ["--jsonl", jsonl]
    rc, _ = check.run(cmd, check.budget("e2e_vs_engine"), "engine alone")
    rows = [json.loads(x) for x in jsonl.read_text().splitlines()] if jsonl.exists() else []
    rows = [r for r in rows if "prompts_per_s" in r]
    run = (e2e.get("run") or [{}])[0]
    if rc or not rows or not run.get("seconds"):
        check.status("e2e_vs_engine", "timeout" if rc == 124 else "failed", t, rc=rc, rows=len(rows))
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
    check.status("e2e_vs_engine", "ok", t)


def bench(check: Check) -> None:
    """Steps ``bench`` (gpu.py on the real-template unit: every shape and dtype, the competent
    baseline and the naive scorer, a profile, precision) and ``bench_synthetic`` (on the synthetic
    unit, while time is left); then the profile rows to ``profile.json``. A run fails on its exit
    code, on a row that failed, or when it measured no throughput."""
    a = check.args
    runs = [(a.bench_args, "gpu.json", "bench", 30)]
    if a.synthetic_args != "none":
        runs.append((a.synthetic_args + " --unit synthetic", "gpu-synthetic.json", "bench_synthetic", 60))
    for extra, name, step, need in runs:
        t = time.monotonic()
        cmd = [sys.executable, HERE / "gpu.py", "--device", a.device, *extra.split()]
        if check.left() <= need:
            check.status(step, "skipped", t, why=f"{check.left():.0f}s left, {need}s needed")
            continue
        (check.out / name).unlink(missing_ok=True)  # a rerun into the same folder reads its own
        rc, _ = check.run(
            cmd + ["--json", check.out / name, "--jsonl", check.results], check.left() - 5, step
        )
        doc = json.loads((check.out / name).read_text()) if (check.out / name).is_file() else {"rows": []}
        errors = [r["error"] for r in doc["rows"] if "error" in r]
        measured = sum("prompts_per_s" in r for r in doc["rows"])
        ok = rc == 0 and not errors and measured
        why = {"rc": rc, "rows_measured": measured, "rows_failed": len(errors)}
        check.status(step, "ok" if ok else "timeout" if rc == 124 else "failed", t, **why)
    rows = [json.loads(x) for x in check.results.read_text().splitlines()] if check.results.exists() else []
    prof = [r for r in rows if "top_kernels" in r]
    (check.out / "profile.json").write_text(json.dumps(prof, indent=1) + "\n")


def summary(check: Check) -> dict:
    rows = [json.loads(x) for x in check.results.read_text().splitlines()] if check.results.exists() else []
    fp16 = {  # the last line of each row (gpu.py writes a row again as each figure is measured)
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
        "e2e_vs_engine": next(
            (r["token_ratio"] for r in rows if "token_ratio" in r and r.get("step") == "e2e_vs_engine"), None
        ),
    }
    out = {
        "step": "summary",
        "seconds": round(time.monotonic() - check.t0, 1),
        "steps": dict(check.statuses),
        "engine_finite": next(
            (r["finite"] for r in rows if r.get("step") == "probe" and "finite" in r), None
        ),
        **{
            k: {"got": v, "goal": GOALS[k], "met": None if v is None else v >= GOALS[k]}
            for k, v in got.items()
        },
    }
    # the token ratio the lead over the competent baseline stands on (its tokens a prompt over the engine's)
    out["vs_competent_token_ratio_6.9b"] = fp16.get("6.9b", {}).get("vs_competent_token_ratio")
    # flex attention against the gather path, measured in the same run (real unit, float16)
    out["flex_vs_gather"] = {k: r.get("flex_vs_gather") for k, r in fp16.items()}
    out["flex_vs_gather_max_abs_diff"] = {
        k: max(r.get("flex_vs_gather_psi_max_abs_diff", 0), r.get("flex_vs_gather_chi_max_abs_diff", 0))
        for k, r in fp16.items()
        if "flex_vs_gather" in r
    }
    out["failed_steps"] = [k for k, v in check.statuses.items() if v in ("failed", "timeout")]
    out["skipped_steps"] = [k for k, v in check.statuses.items() if v == "skipped"]
    out["nothing_measured"] = not any(check.statuses.get(k) == "ok" for k in MEASURING)
    # the competent baseline's psi/chi must equal the engine's (to the dtype's tolerance)
    out["competent_mismatch"] = sorted(
        {f"{r['shape']} {r['dtype']} {r.get('unit')}" for r in rows if r.get("competent_matches") is False}
    )
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
    ap.add_argument(
        "--deadline",
        type=float,
        default=460,
        help="seconds for the whole check (default 460: under 8 minutes)",
    )
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
    ap.add_argument(
        "--budget-scale",
        type=float,
        default=1.0,
        help="multiply each step's budget (BUDGETS) by this (smoke: 5)",
    )
    ap.add_argument("--smoke", action="store_true", help="the CPU smoke mode: tiny shapes, a few prompts")
    args = ap.parse_args(argv)
    unknown = set(filter(None, args.skip.split(","))) - set(MEASURING)
    if unknown:
        ap.error(f"--skip: unknown steps {sorted(unknown)}; the steps are {', '.join(MEASURING)}")
    if args.smoke:
        args.device, args.e2e_shape, args.e2e_entities, args.e2e_contexts = "cpu", "smoke", "2", "6"
        args.bench_args, args.budget_scale = "--smoke", max(args.budget_scale, 5.0)
        args.synthetic_args = "none"  # the synthetic unit is the benchmark smoke test's (test_benchmarks.py)
    return args


def main(argv=None) -> int:
    check = Check(parse_args(argv))
    a, skip = check.args, set(filter(None, check.args.skip.split(",")))
    check.say(f"gpu check on {a.device}: results in {check.results}, deadline {a.deadline:.0f}s")
    budgets = {k: check.budget(k) for k in BUDGETS} | {
        "bench": "the rest, bench_synthetic what is left after it"
    }
    check.record({"step": "plan", "deadline_s": a.deadline, "budgets_s": budgets, "skip": sorted(skip)})
    environment(check)
    # the carried wheels first: nothing after this may find the warehouse missing
    wheels = warehouse_wheels(check, wanted="e2e" not in skip)
    t = time.monotonic()
    if "probe" in skip:
        check.status("probe", "skipped", t, why="--skip")
    else:
        probe = [sys.executable, HERE / "attention_probe.py", "--device", a.device, "--jsonl", check.results]
        rc, _ = check.run(probe + (["--smoke"] if a.smoke else []), check.budget("probe"), "attention probe")
        check.record({"step": "probe", "rc": rc, "finite": rc == 0})
        check.status("probe", "ok" if rc == 0 else "timeout" if rc == 124 else "failed", t, rc=rc)
    if "e2e" in skip or not wheels:
        check.status("e2e", "skipped", time.monotonic(), why="--skip" if "e2e" in skip else "no warehouse")
    else:
        e2e = end_to_end(check)
        if e2e:
            engine_alone(check, e2e)
    if "bench" in skip:
        check.status("bench", "skipped", time.monotonic(), why="--skip")
    else:
        bench(check)
    done = summary(check)
    bad = done["failed_steps"] or done["competent_mismatch"] or done["failed_rows"]
    bad = bad or done["engine_finite"] is False or done["nothing_measured"]
    if done["nothing_measured"]:
        check.say("FAILED: nothing was measured (every measuring step skipped or failed)")
    elif bad:
        check.say(
            f"FAILED: steps {done['failed_steps']}, rows {done['failed_rows']}, mismatch {done['competent_mismatch']}"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
