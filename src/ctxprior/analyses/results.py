"""Storing an `analyze` call's rows: analysis_result, analysis_distribution, analysis_replicate."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

from .selection import sql

RESULT_COLS = [
    "run_id",
    "analysis",
    "relation_id",
    "relation",
    "query_type",
    "test",
    "unit",
    "alternative",
    "label1",
    "label2",
    "n1",
    "n2",
    "mean1",
    "mean2",
    "t",
    "p",
    "p_adj",
    "significant",
    "effect_size",
    "k",
    "seed",
    "alpha",
    "skip_reason",
    "note",
    "created_at",
]
DIST_COLS = [
    "run_id",
    "run_ids",
    "model",
    "analysis",
    "query_type",
    "series",
    "bin",
    "bin_lo",
    "bin_hi",
    "n",
    "n_nan",
    "share",
    "mean",
    "q25",
    "median",
    "q75",
    "max",
    "created_at",
]
REPLICATE_COLS = ["group_run_id", "run_id", "sample_id", "seed", "counted", "reason", "created_at"]


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def save_results(store, run_ids, names, results, dists, k, seed, alpha, replicates=()) -> None:
    """Replace the rows of these runs and analyses in one transaction."""
    now = _now()
    res = result_frame(results, k, seed, alpha, now)
    dist = pd.concat(dists, ignore_index=True) if dists else pd.DataFrame(columns=DIST_COLS)
    if len(dist):
        dist["created_at"] = now
        dist = dist[DIST_COLS].replace({np.nan: None})
    reps = (
        pd.concat(list(replicates), ignore_index=True)
        if len(replicates)
        else pd.DataFrame(columns=REPLICATE_COLS)
    )
    if len(reps):
        reps = reps.assign(created_at=now)[REPLICATE_COLS].replace({np.nan: None})
    params = [[int(r) for r in run_ids], list(names)]
    with store.transaction():
        store.execute(sql("delete_results.sql"), params)
        store.execute(sql("delete_distributions.sql"), params)
        if "reliability" in names:
            store.execute(sql("delete_replicates.sql"), params[:1])
        if len(res):
            store.insert_arrow("analysis_result", _to_arrow(res))
        if len(dist):
            store.insert_arrow("analysis_distribution", _to_arrow(dist))
        if len(reps):
            store.insert_arrow("analysis_replicate", _to_arrow(reps))


def result_frame(results, k, seed, alpha, now) -> pd.DataFrame:
    """analysis_result rows (RESULT_COLS) from the steps' frames: numeric columns coerced, k /
    seed / alpha stamped, pooled Spearman rows get p_adj = p."""
    res = pd.concat(results, ignore_index=True) if results else pd.DataFrame(columns=RESULT_COLS)
    if not len(res):
        return res
    res["k"] = [None if t == "spearman" else k for t in res["test"]]
    res["seed"], res["alpha"], res["created_at"] = seed, alpha, now
    for c in RESULT_COLS:
        if c not in res:
            res[c] = None
    for c in ("n1", "n2", "mean1", "mean2", "t", "p", "p_adj", "effect_size"):
        res[c] = pd.to_numeric(res[c], errors="coerce").astype(float)
    sp = (res["test"] == "spearman") & res["p_adj"].isna() & res["p"].notna()
    res.loc[sp, "p_adj"] = res.loc[sp, "p"]
    res["significant"] = res["significant"].astype(object)
    res.loc[sp, "significant"] = (res.loc[sp, "p"] < alpha).astype(object)
    return res[RESULT_COLS].replace({np.nan: None})


def _to_arrow(df: pd.DataFrame):
    import pyarrow as pa

    return pa.Table.from_pandas(df, preserve_index=False)
