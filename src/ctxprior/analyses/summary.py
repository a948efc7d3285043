"""The ~10 lines `ctxprior analyze` prints: one per comparison (its declared ``summary``), one per
correlation, the reliability medians and the DynamicQA tables."""

from __future__ import annotations

import math

from ..errors import UserError
from . import registry
from .selection import NO_RUNS, RunPlan, plan_runs, sql


def summary_lines(store, run_ids=None, only=None) -> list[str]:
    """~10 lines summarizing the stored analyses of these runs (the main job prints them).

    run_ids: the runs (persuasion and dynamic) or None = every finished persuasion run and every
    dynamic run with scores; only: analysis names (None = all): the persuasion lines need one of
    them, the DynamicQA lines `dynamicqa`. UserError only when there is no run at all."""
    plan = plan_runs(store, run_ids)
    if only:
        known = registry.analyses()
        kinds = {known[n].kind for n in only if n in known}
        plan = RunPlan(
            plan.persuasion if "persuasion" in kinds else [], plan.dynamic if "dynamic" in kinds else []
        )
    if not plan.persuasion and not plan.dynamic:
        raise UserError(NO_RUNS)
    models = dict(store.query("SELECT run_id, model FROM run"))
    runs = [", ".join(f"{r} ({models[r]})" for r in plan.persuasion)] if plan.persuasion else []
    if plan.dynamic:
        runs.append("dynamic " + ", ".join(f"{r} ({models[r]})" for r in plan.dynamic))
    lines = ["runs: " + "; ".join(runs)]
    if plan.persuasion:
        ids = plan.persuasion
        lines += _comparison_lines(store, ids) + _spearman_lines(store, ids) + _reliability_lines(store, ids)
    if plan.dynamic:
        lines += _dynamic_lines(store, plan.dynamic, models)
    if len(lines) == 1:
        lines.append("no analysis results stored for these runs; run `ctxprior analyze` first")
    return lines


def _comparison_lines(store, ids: list[int]) -> list[str]:
    """One line per group comparison: significant / tested per query type, mean d."""
    df = store.df(sql("summary_comparisons.sql"), [ids])
    lines = []
    for name, a in registry.analyses().items():
        d = df[df["analysis"] == name]
        if a.comparison is None or d.empty:
            continue
        parts = []
        for _, r in d.iterrows():
            part = f"{int(r.s)}/{int(r.n)} {r.query_type}" if r.n else f"0/0 {r.query_type}"
            if r.d is not None and not (isinstance(r.d, float) and math.isnan(r.d)):
                part += f" (mean d={r.d:+.2f})"
            parts.append(part)
        unit = "relations" if a.comparison.stratum == "query_type" else "tests"
        skipped = int(d["skipped"].sum())
        n_runs = int(d["n_runs"].max())
        over = f" x {n_runs} runs" if n_runs > 1 else ""
        mixture = max((m for m in d["mixture"] if m), default=None, key=int)
        lines.append(
            f"{a.summary}: "
            + ", ".join(parts)
            + f" {unit}{over} significant (BH)"
            + (f"; {skipped} skipped" if skipped else "")
            + (
                f"; mean psi against the mixture of {mixture} collections, not chi of one collection"
                if mixture
                else ""
            )
        )
    return lines


def _spearman_lines(store, ids: list[int]) -> list[str]:
    """One line per correlation analysis: pooled rho per query type (a range over several runs)."""
    lines = []
    sp = store.df(sql("summary_spearman.sql"), [ids])
    for name, d in sp.groupby("analysis", sort=False):
        what = {"mr": "memorization ratio"}.get(name, d["note"].iloc[0])
        parts = []
        for qt, dq in d.groupby("query_type", sort=True):
            if len(dq) == 1:
                r = dq.iloc[0]
                parts.append(f"{qt} {r.rho:+.2f} (p={r.p:.2g}, n={int(r.n)})")
            else:
                parts.append(f"{qt} {dq.rho.min():+.2f}..{dq.rho.max():+.2f} over {len(dq)} runs")
        lines.append(f"Spearman rho(chi, {what}): " + ", ".join(parts))
    return lines


def _reliability_lines(store, ids: list[int]) -> list[str]:
    """Median variance of chi and psi across seeds and across query forms (median over groups)."""
    lines = []
    rel = store.df(sql("summary_reliability.sql"), [ids])
    if len(rel):
        agg = rel.groupby(["series", "query_type"])["median"].median()
        for score, sym in (("susceptibility", "chi"), ("persuasion", "psi")):
            parts = []
            for across in ("seeds", "query forms"):
                vals = [
                    f"{q} {agg[(f'{score} across {across}', q)]:.2g}"
                    for q in ("open", "closed")
                    if (f"{score} across {across}", q) in agg.index
                ]
                if vals:
                    parts.append(f"across {across}: " + ", ".join(vals))
            if parts:
                lines.append(f"reliability, median variance of {sym}: " + "; ".join(parts))
    return lines


def _num(v, fmt: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _dynamic_lines(store, dyn: list[int], models: dict) -> list[str]:
    """One line per dynamic run with stored DynamicQA tables: % persuaded and mean CP per partition."""
    df = store.df(sql("summary_dynamicqa.sql"), [[int(r) for r in dyn]])
    lines = []
    for rid, d in df.groupby("run_id", sort=True):
        parts = [
            f"{r.partition} {_num(r.pct_persuaded, '.1f')}% / {_num(r.cp, '.3f')}" for r in d.itertuples()
        ]
        lines.append(f"DynamicQA run {rid} ({models[rid]}), persuaded / mean CP (nats): " + ", ".join(parts))
    if len(df):
        from ..dynamicqa.analyses import stored_report  # owned by the DynamicQA area

        lines += stored_report(store, sorted(set(df["run_id"]))).splitlines()
    return lines
