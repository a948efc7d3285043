"""reliability: variance of chi and psi across seed replicates and across query forms (Fig. 4)."""

from __future__ import annotations

from ..registry import register_analysis
from ..selection import query_file


@register_analysis(
    "reliability", order=70, help="variance of chi and psi across seed replicates and query forms (Fig. 4)"
)
def step_reliability(job, name: str) -> None:
    """Variance across seed replicates and query forms; the replicate sets go to analysis_replicate."""
    reps = query_file(job.store, "replicates.sql", job.run_ids)
    for r in reps[~reps["counted"]].itertuples():
        job.log(f"reliability: {r.reason}")
    for (model, _), g in reps[reps["counted"]].groupby(["model", "dataset_id"], sort=True, dropna=False):
        sets = [",".join(map(str, gg["run_id"])) for _, gg in g.groupby("group_run_id", sort=True)]
        if len(sets) > 1:
            job.log(
                f"reliability: runs of {model} on one dataset form {len(sets)} replicate groups "
                f"({' | '.join(sets)}): they differ in more than the sample seed (see the view v_run_replicate)"
            )
    job.replicates.append(reps)
    d = query_file(job.store, "reliability.sql", job.run_ids)
    if len(d):
        d["analysis"], d["bin"], d["bin_lo"], d["bin_hi"], d["share"] = "reliability", 0, None, None, 1.0
        job.dists.append(d)
    job.counts[name] = len(d)
