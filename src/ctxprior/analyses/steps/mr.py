"""mr: the memorization ratio against susceptibility (Fig. 3): MR bins and Spearman rho."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..registry import register_analysis
from ..selection import query_file
from .spearman import spearman_rows


@register_analysis(
    "mr", order=60, help="memorization ratio vs susceptibility: MR bins and Spearman rho (Fig. 3)"
)
def step_mr(job, name: str) -> None:
    r, d = mr_frames(job.store, job.run_ids)
    job.results.extend([r] if len(r) else [])
    job.dists.extend([d] if len(d) else [])
    job.counts[name] = len(r) + len(d)
    if not len(d):
        job.log("mr: no memorization ratios (score with generations to get them)")


def mr_frames(store, run_ids) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(analysis_result rows: pooled Spearman rho, analysis_distribution rows: chi per MR bin)."""
    df = query_file(store, "mr.sql", run_ids)
    if df.empty:
        return pd.DataFrame(), pd.DataFrame()
    models = dict(store.query("SELECT run_id, model FROM run"))
    drows = []
    for (run_id, qt), d in df.groupby(["run_id", "query_type"], sort=True):
        total = len(d)
        for b in range(5):
            x = d.loc[d["bin"] == b, "susceptibility"].to_numpy(float)
            n_nan = int(np.isnan(x).sum())
            x = x[~np.isnan(x)]  # NaN chi are counted in n_nan, not in the quartiles
            q = np.quantile(x, [0.25, 0.5, 0.75]) if len(x) else [np.nan] * 3
            drows.append(
                dict(
                    run_id=run_id,
                    run_ids=str(run_id),
                    model=models.get(run_id, "?"),
                    analysis="mr",
                    query_type=qt,
                    series="susceptibility",
                    bin=b,
                    bin_lo=b / 5,
                    bin_hi=(b + 1) / 5,
                    n=len(x),
                    n_nan=n_nan,
                    share=len(x) / total,
                    mean=x.mean() if len(x) else np.nan,
                    q25=q[0],
                    median=q[1],
                    q75=q[2],
                    max=x.max() if len(x) else np.nan,
                )
            )
    d2 = df.rename(columns={"memorization_ratio": "mr"})
    rows = spearman_rows(d2, "mr", "mr", "memorization ratio", "(entity, query form) with a defined MR")
    rows = [r for r in rows if r["relation"] == "(all)"]
    return pd.DataFrame(rows), pd.DataFrame(drows)
