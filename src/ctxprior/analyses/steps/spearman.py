"""frequency / degree / covariate: Spearman rho of susceptibility chi against a covariate."""

from __future__ import annotations

import pandas as pd

from ...covariates.resolve import auto_covariate
from .. import stats
from ..comparisons import bh
from ..registry import register_analysis
from ..selection import covariate_values, query_file


def spearman_rows(df: pd.DataFrame, analysis: str, xcol: str, note: str, unit: str) -> list[dict]:
    """Rows of Spearman rho(xcol, susceptibility) per run and query type: pooled ('(all)') and per
    relation."""
    rows = []
    for (run_id, qt), d in df.groupby(["run_id", "query_type"], sort=True):
        per = [("(all)", None, d)] + [
            (rel, rid, dd) for (rel, rid), dd in d.groupby(["relation", "relation_id"], sort=True)
        ]
        for rel, rid, dd in per:
            rho, p, n, why = stats.spearman(dd[xcol], dd["susceptibility"])
            rows.append(
                dict(
                    run_id=run_id,
                    relation_id=rid,
                    relation=rel,
                    query_type=qt,
                    test="spearman",
                    unit=unit,
                    analysis=analysis,
                    alternative="two-sided",
                    label1=xcol,
                    label2="susceptibility",
                    n1=n,
                    n2=None,
                    mean1=None,
                    mean2=None,
                    t=None,
                    p=None if why else p,
                    effect_size=None if why else rho,
                    skip_reason=why,
                    note=note,
                )
            )
    return rows


@register_analysis(
    "frequency", order=80, help="Spearman rho of chi against training-data frequency (co-occurrence; Fig. 9)"
)
@register_analysis(
    "degree", order=90, help="Spearman rho of chi against the KG degree of the entity (Fig. 9)"
)
@register_analysis(
    "covariate",
    order=100,
    default=False,
    help="Spearman rho of chi against each --covariate VIEW.COLUMN (runs when one is given)",
)
def step_spearman(job, name: str) -> None:
    """frequency / degree / covariate: Spearman rho of chi against a covariate."""
    store, covariates = job.store, job.covariates
    specs = (
        list(covariates)
        if name == "covariate"
        else [
            job.freq_spec
            if name == "frequency"
            else (next((c for c in covariates if "degree" in c), None) or auto_covariate(store, "degree"))
        ]
    )
    rows = []
    if not specs:
        job.log("covariate: no --covariate VIEW.COLUMN given; nothing to correlate")
    for spec in specs:
        if spec is None and name == "degree":
            df = query_file(store, "susceptibility_by_fact.sql", job.run_ids)
            if df["predicate_degree"].notna().any():
                df["covariate"] = df["predicate_degree"].astype(float)
                rows += spearman_rows(
                    df,
                    name,
                    "covariate",
                    "fact.predicate_degree (yago_qec)",
                    "chi per (entity, query type), query forms averaged, vs KG degree",
                )
                continue
        if spec is None:
            job.log(f"{name}: no covariate found (give --covariate cov_<name>.<column>); skipped")
            continue
        df = covariate_values(store, spec, job.run_ids)
        rows += spearman_rows(
            df, name, "covariate", spec, f"chi per (entity, query type), query forms averaged, vs {spec}"
        )
    if rows:
        sp = pd.DataFrame(rows)
        fam = ("run_id", "analysis", "query_type", "note")
        per_rel = bh(sp[sp["relation"] != "(all)"], fam, job.alpha)
        pooled = bh(sp[sp["relation"] == "(all)"], fam, 1.0)
        pooled["p_adj"] = pooled["p"]
        pooled["significant"] = [None if p is None or p != p else bool(p < job.alpha) for p in pooled["p"]]
        job.results.append(pd.concat([pooled, per_rel], ignore_index=True))
    job.counts[name] = len(rows)
