"""Ray scaling on this machine: the same run with 1, 2 and 4 Ray workers (tiny model).

Baseline measured in the same run: the local executor (units one after the other in the driver).
Prints prompts/s per worker count, speed-up over 1 worker, efficiency (= speed-up / workers) and the
ratio to the local executor. Times exclude worker start-up (model loading); every run is checked to
produce the same rows as the local one.

    python benchmarks/scale.py [--relations capital,author] [--entities 4] [--contexts 12]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def _diff(a: dict, b: dict) -> str:
    """Same keys, floats within rounding? (workers use fewer torch threads than the local run, and
    float reductions over the vocabulary depend on the thread count)."""
    worst = 0.0
    for t in ("persuasion", "susceptibility", "prior_topk"):
        if len(a[t]) != len(b[t]):
            return f"ROW COUNT DIFFERS in {t}"
        for ra, rb in zip(a[t], b[t]):
            for x, y in zip(ra, rb):
                if isinstance(x, float):
                    worst = max(worst, abs(x - y))
                elif x != y:
                    return f"ROWS DIFFER in {t}: {ra} vs {rb}"
    return f"same rows, floats within {worst:.1e} (thread-count rounding)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relations", default="capital,author")
    ap.add_argument("--entities", type=int, default=4)
    ap.add_argument("--contexts", type=int, default=12)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--shard-size", type=int, default=1)
    args = ap.parse_args()

    import ray
    import torch
    from scale_helpers import make_demo_db, make_tiny_folder, snapshot

    from ctxprior.scoring.executors.ray_cluster import RayExecutor
    from ctxprior.scoring.models import load_model
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    tmp = Path(tempfile.mkdtemp(prefix="ctxprior-scale-"))
    try:
        base = make_demo_db(
            tmp / "base.duckdb",
            relations=tuple(args.relations.split(",")),
            entities=args.entities,
            contexts=args.contexts,
        )
        tiny = make_tiny_folder(tmp / "tiny")
        lm = load_model(tiny)
        ncpu = os.cpu_count() or 1
        counts = [int(x) for x in args.workers.split(",")]
        ray.init(
            num_cpus=max(counts + [ncpu]),
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            logging_level="ERROR",
        )
        config = ScoreRequest.of(query_types=("open",))

        def run(name: str, workers: int | None):
            db = str(tmp / f"{name}.duckdb")
            shutil.copyfile(base, db)
            factory = None
            if workers:

                def factory(lm_, c, b):
                    ex = RayExecutor(
                        lm_,
                        c,
                        b,
                        shard_dir=str(tmp / "shards"),
                        workers=workers,
                        threads=max(1, ncpu // workers),
                        log=lambda m: None,
                    )
                    ray.get(
                        [a.info.remote() for a in ex.actors], timeout=300
                    )  # every worker's model loaded before the clock starts
                    return ex

            with open_store(db, brief=True) as wh:
                s = score_sample(
                    wh,
                    config.replace(sample=1, model=tiny, shard_size=args.shard_size),
                    lm=lm,
                    progress=False,
                    log=lambda m: None,
                    executor_factory=factory,
                )
            assert s.status == "done", s.errors
            return s.prompts / s.seconds, snapshot(db, s.run_id), s

        torch.set_num_threads(ncpu)
        local_rate, ref, s = run("local", None)
        print(
            f"workload: {s.units_total} units, {s.prompts} prompts (tiny llama, SmolLM2 vocabulary), "
            f"{ncpu} CPUs, load average {os.getloadavg()[0]:.1f}"
        )
        print(f"local executor (baseline): {local_rate:8.1f} prompts/s")
        print(f"{'workers':>7}  {'prompts/s':>9}  {'speed-up':>8}  {'efficiency':>10}  {'vs local':>8}")
        one = None
        for w in counts:
            t = time.perf_counter()
            rate, snap, _ = run(f"ray{w}", w)
            same = "rows identical" if snap == ref else _diff(snap, ref)
            one = one or rate
            print(
                f"{w:>7}  {rate:>9.1f}  {rate / one:>8.2f}  {rate / one / w:>10.2f}  {rate / local_rate:>8.2f}"
                f"  {same}"
                f"  [{time.perf_counter() - t:.0f} s incl. start-up]"
            )
        ray.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
