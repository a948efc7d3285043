"""Commit time of one work unit against the warehouse's size, up to paper scale (issue 18).

A paper-shaped unit (600 contexts x 16 entities: 9,600 persuasion rows, 16 susceptibility rows,
160 prior top-k rows and its run_unit rows) is committed the way a scoring run commits it: a brief
writer (``open_store(brief=True)``) opens the file, writes the unit in one transaction
(``record.write_unit``), checkpoints and closes it. The persuasion table is grown with synthetic
rows between measurements, up to 30 M rows (one model and seed of the paper's grid: 122 relations
x 100 entities x 600 contexts x 4 query forms = 29.3 M).

    python benchmarks/commit.py [--sizes 0,1e6,3e6,1e7,3e7] [--units 5] [--dir DIR]

Prints, per size: the median seconds per commit, and the ratio to the commit into the empty
warehouse (flat = about 1); the file's size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from ctxprior.scoring.runs.record import write_unit
from ctxprior.scoring.texts import UnitResult, UnitSpec
from ctxprior.storage import open_store
from ctxprior.storage.store import utcnow


def unit_result(run_id: int, unit_id: int, n_ctx: int = 600, n_ent: int = 16) -> UnitResult:
    rng = np.random.default_rng(unit_id)
    n = n_ctx * n_ent
    fact = np.repeat(np.arange(n_ent, dtype=np.int32) + unit_id * n_ent, n_ctx)
    tables = {
        "persuasion": pa.table(
            {
                "run_id": pa.array(np.full(n, run_id, np.int32)),
                "query_form_id": pa.array(np.full(n, 1, np.int32)),
                "fact_id": pa.array(fact),
                "context_id": pa.array(np.tile(np.arange(n_ctx), n_ent)),
                "persuasion": pa.array(rng.random(n)),
                "entropy": pa.array(rng.random(n)),
            }
        ),
        "susceptibility": pa.table(
            {
                "run_id": pa.array(np.full(n_ent, run_id, np.int32)),
                "query_form_id": pa.array(np.full(n_ent, 1, np.int32)),
                "fact_id": pa.array(np.unique(fact)),
                **{
                    k: pa.array(rng.random(n_ent))
                    for k in ("susceptibility", "mixture_entropy", "mean_conditional_entropy")
                },
                "n_contexts": pa.array(np.full(n_ent, n_ctx, np.int32)),
                "prior_entropy": pa.array(rng.random(n_ent)),
                "prior_kl": pa.array(rng.random(n_ent)),
            }
        ),
        "prior_topk": pa.table(
            {
                "run_id": pa.array(np.full(10 * n_ent, run_id, np.int32)),
                "query_form_id": pa.array(np.full(10 * n_ent, 1, np.int32)),
                "fact_id": pa.array(np.repeat(np.unique(fact), 10)),
                "rank": pa.array(np.tile(np.arange(1, 11, dtype=np.int32), n_ent)),
                "token_id": pa.array(np.arange(10 * n_ent, dtype=np.int32)),
                "token": pa.array(["tok"] * (10 * n_ent)),
                "prob": pa.array(rng.random(10 * n_ent)),
            }
        ),
    }
    spec = UnitSpec(unit_id=unit_id, relation_id=1, query_form_id=1, shard=unit_id, fact_ids=())
    return UnitResult(
        spec=spec,
        tables=tables,
        worker="bench",
        n_prompts=n + n_ent,
        engine={
            "device": "cpu",
            "batch_size": 1024,
            "oom_splits": 0,
            "forward_calls": 11,
            "tokens": 100_000,
            "prefix_reuse": "shared",
        },
    )


def grow(path: str, target: int) -> None:
    """Add synthetic persuasion rows (run 2) until the table holds ``target`` rows."""
    with open_store(path) as wh:
        have = wh.scalar("SELECT count(*) FROM persuasion")
        if target > have:
            wh.execute(
                f"INSERT INTO persuasion SELECT 2, 1 + (i // 7200000), i // 600, i % 600, random(), random() "
                f"FROM range({have}, {target}) t(i)"
            )
            wh.execute("CHECKPOINT")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0,1e6,3e6,1e7,3e7")
    ap.add_argument("--units", type=int, default=5, help="commits measured at each size")
    ap.add_argument("--dir", default=None, help="where the warehouse goes (default: a temp folder)")
    args = ap.parse_args(argv)
    sizes = [int(float(x)) for x in args.sizes.split(",")]
    folder = Path(args.dir or tempfile.mkdtemp(prefix="ctxprior-commit-"))
    path = str(folder / "commit.duckdb")
    with open_store(path) as wh:
        wh.insert_arrow(
            "run",
            {
                "run_id": [1],
                "kind": ["persuasion"],
                "model": ["bench"],
                "estimator": ["first-token"],
                "config_json": ["{}"],
                "ctxprior_version": ["bench"],
                "status": ["running"],
                "started_at": [utcnow()],
            },
        )
    unit, base = 0, None
    print(
        f"one unit = 9,600 persuasion + 16 susceptibility + 160 prior_topk rows; brief writer "
        f"(open, one transaction, CHECKPOINT, close); {args.units} commits per size"
    )
    for size in sizes:
        grow(path, size)
        times = []
        for _ in range(args.units):
            res = unit_result(1, unit)
            unit += 1
            wh = open_store(path, brief=True)
            t0 = time.perf_counter()
            write_unit(wh, 1, res)
            times.append(time.perf_counter() - t0)
            wh.close()
        med = statistics.median(times)
        base = base or med
        print(
            f"{size:>12,} persuasion rows: {med * 1000:7.1f} ms per commit  ({med / base:4.2f}x the first)  "
            f"file {os.path.getsize(path) / 2**20:8.1f} MiB"
        )


if __name__ == "__main__":
    main()
