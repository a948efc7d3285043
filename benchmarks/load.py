"""Load test: N concurrent read-only `ctxprior sql` clients querying v_persuasion aggregates while a
scoring run (`ctxprior score`, a brief writer) writes the same warehouse.

Prints queries/s and latency of the readers, the writer's prompts/s alone (baseline, same run)
and with the readers, and checks every answer against the committed states (the units a reader
saw as done, with exactly their rows and values).

    python benchmarks/load.py [--readers 8] [--seconds 60] [--relations capital,author]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def _score(db: str, tiny: str, log: Path) -> float:
    cmd = [
        sys.executable,
        "-m",
        "ctxprior",
        "--db",
        db,
        "score",
        "--sample",
        "1",
        "--query-types",
        "open",
        "--shard-size",
        "1",
        "--quiet",
        "--model",
        tiny,
    ]
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
    return p


def _rate(log: Path) -> float:
    m = re.search(r"\(([\d.]+) prompts/s\)", log.read_text())
    return float(m.group(1)) if m else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=300.0, help="Longest reader phase.")
    ap.add_argument("--relations", default="capital,author")
    ap.add_argument("--entities", type=int, default=4)
    ap.add_argument("--contexts", type=int, default=12)
    args = ap.parse_args()

    from loadtest import check_answers, reader, unit_reference, wait_for_run
    from scale_helpers import make_demo_db, make_tiny_folder

    tmp = Path(tempfile.mkdtemp(prefix="ctxprior-load-"))
    try:
        base = make_demo_db(
            tmp / "base.duckdb",
            relations=tuple(args.relations.split(",")),
            entities=args.entities,
            contexts=args.contexts,
        )
        tiny = make_tiny_folder(tmp / "tiny")
        # baseline: the writer alone
        alone = str(tmp / "alone.duckdb")
        shutil.copyfile(base, alone)
        p = _score(alone, tiny, tmp / "alone.log")
        p.wait()
        assert p.returncode == 0, (tmp / "alone.log").read_text()
        ref = unit_reference(alone)
        # readers alone on the finished warehouse (no writer)
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["ctxprior.cli", "loadtest"])

        def phase(db: str, seconds: float, writer=None):
            stop = tmp / f"stop-{time.monotonic_ns()}"
            outs = [str(tmp / f"r{i}-{stop.name}.jsonl") for i in range(args.readers)]
            procs = [ctx.Process(target=reader, args=(db, o, str(stop), seconds)) for o in outs]
            if writer is not None:  # readers start once the writer has started its run
                wait_for_run(db, 1, proc=writer)
            t0 = time.perf_counter()
            for q in procs:
                q.start()
            if writer is not None:
                writer.wait()
                stop.touch()
            for q in procs:
                q.join()
            return check_answers(outs, ref), time.perf_counter() - t0

        idle, t_idle = phase(alone, 15.0)
        # the load test: writer + readers
        busy = str(tmp / "busy.duckdb")
        shutil.copyfile(base, busy)
        w = _score(busy, tiny, tmp / "busy.log")
        res, t_busy = phase(busy, args.seconds, writer=w)
        assert w.returncode == 0, (tmp / "busy.log").read_text()
        r_alone, r_busy = _rate(tmp / "alone.log"), _rate(tmp / "busy.log")
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {len(ref)} units")
        print(
            f"readers, no writer:          {idle['queries'] / t_idle:7.1f} queries/s "
            f"(p50 {idle['p50'] * 1e3:.0f} ms, p95 {idle['p95'] * 1e3:.0f} ms)"
        )
        print(
            f"{args.readers} readers during the run:  {res['queries'] / t_busy:7.1f} queries/s "
            f"(p50 {res['p50'] * 1e3:.0f} ms, p95 {res['p95'] * 1e3:.0f} ms), {res['queries']} queries, "
            f"{res['errors']} errors, {res['n_inconsistent']} inconsistent, committed states seen "
            f"{res['states_seen']}"
        )
        print(f"writer alone:        {r_alone:7.1f} prompts/s")
        print(f"writer with readers: {r_busy:7.1f} prompts/s  (ratio {r_busy / r_alone:.2f})")
        if res["errors"] or res["n_inconsistent"]:
            print("FAILED:", res["error_samples"], res["inconsistent"])
            sys.exit(1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
