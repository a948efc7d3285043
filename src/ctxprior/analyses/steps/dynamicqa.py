"""dynamicqa: DynamicQA Tables 1-3 of dynamic runs (computed by ``ctxprior.dynamicqa``)."""

from __future__ import annotations

from ...errors import UserError
from ..registry import register_analysis
from ..selection import sql


@register_analysis(
    "dynamicqa",
    order=130,
    kind="dynamic",
    help="DynamicQA Tables 1-3 (static / temporal / disputable facts) of dynamic runs",
)
def step_dynamicqa(job, name: str) -> None:
    """DynamicQA Tables 1-3 (owned by ctxprior.dynamicqa), stored; `summary_lines` prints them."""
    job.counts[name] = 0
    try:
        from ...dynamicqa.analyses import analyze_dynamicqa  # owned by the DynamicQA area
    except ImportError as e:
        job.log(f"dynamicqa: not available in this install ({e}); skipped")
        return
    try:
        text = analyze_dynamicqa(job.store, job.dynamic)
    except UserError as e:
        job.log(f"dynamicqa: skipped ({e})")
        return
    for line in str(text or "").splitlines():  # the tables are results: the summary prints them on stdout
        if line.strip().startswith("note:"):
            job.log(f"dynamicqa: {line.strip()}")
    job.counts[name] = int(job.store.scalar(sql("dynamicqa_rows.sql"), [[int(r) for r in job.dynamic]]))
