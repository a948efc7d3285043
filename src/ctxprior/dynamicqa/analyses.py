"""DynamicQA analyses: the paper's Tables 1-3 analogues per run (model).

``analyze_dynamicqa(store, run_ids)`` aggregates ``dynamicqa_score`` with ``sql/summary.sql`` (Tables 1-2:
% persuaded / stubborn per partition, accuracy with / without context, mean SE and CP), fits the
Table 3 OLS of CP on z-scored predictors (num_edits, s_pop, o_pop, SE without / with context;
rows from ``sql/regression_input.sql``; statsmodels), stores both in ``dynamicqa_summary`` and
``dynamicqa_regression`` (replacing earlier rows of the same runs) and returns printable text.
``sql/compare_scores.sql`` lines up first-token KL, answer-set KL and CP on the same facts.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..errors import UserError
from ..sqlfiles import read_sql
from ..storage.runs import default_runs
from ..storage.store import Store, utcnow
from .semantic import LIKELIHOOD_SHIFT

PREDICTORS = ("num_edits", "s_pop", "o_pop", "se_without_context", "se_with_context")
PKG = "ctxprior.dynamicqa"


def dynamic_runs(store: Store, run_ids: Iterable[int] | None = None) -> list[int]:
    """The given runs (checked to be dynamic), or every dynamic run with scores."""
    if run_ids:
        ids = [int(r) for r in run_ids]
        known = {
            r[0]: r[1]
            for r in store.query(
                "SELECT run_id, kind FROM run WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [ids]
            )
        }
        for r in ids:
            if r not in known:
                raise UserError(f"--run {r}: no such run in {store.path}")
            if known[r] != "dynamic":
                raise UserError(f"--run {r}: a {known[r]} run; DynamicQA analyses need `score-dynamic` runs")
        return ids
    ids = default_runs(store, "dynamic")
    if not ids:
        raise UserError(f"no dynamic runs with scores in {store.path}; run `ctxprior score-dynamic` first")
    return ids


def summary(store: Store, run_ids: list[int]) -> pd.DataFrame:
    """Tables 1-2 per run and partition; the se_mc_* columns on the paper's scale (+ the shift)."""
    with store.session():
        store.execute("SET VARIABLE se_shift = ?", [float(LIKELIHOOD_SHIFT)])
        return store.df(read_sql(PKG, "sql/summary.sql"), [run_ids])


def regression(df: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """OLS of CP on z-scored predictors for one run's rows; (coefficients, note)."""
    import statsmodels.api as sm

    d = df.dropna(subset=["cp", *PREDICTORS])
    used = [p for p in PREDICTORS if len(d) and d[p].std(ddof=1) > 0]
    dropped = [p for p in PREDICTORS if p not in used]
    note = f"constant predictor(s) left out: {', '.join(dropped)}" if dropped else None
    if len(d) < len(used) + 2:
        return pd.DataFrame(), f"too few complete rows ({len(d)}) for {len(used)} predictors"
    X = (d[used] - d[used].mean()) / d[used].std(ddof=1)
    with warnings.catch_warnings():  # tiny runs can be rank-deficient; the fit is still reported
        warnings.simplefilter("ignore")
        fit = sm.OLS(
            d["cp"].astype(float).to_numpy(), sm.add_constant(X.astype(float), has_constant="add")
        ).fit()
    out = pd.DataFrame(
        {
            "predictor": ["Intercept" if k == "const" else k for k in fit.params.index],
            "coef": fit.params.to_numpy(),
            "std_err": fit.bse.to_numpy(),
            "t_value": fit.tvalues.to_numpy(),
            "p_value": fit.pvalues.to_numpy(),
        }
    )
    out["n_obs"] = int(fit.nobs)
    out["r_squared"] = float(fit.rsquared) if np.isfinite(fit.rsquared) else 0.0
    return out, note


def analyze_dynamicqa(store: Store, run_ids: Iterable[int] | None = None) -> str:
    """Compute, store and format Tables 1-3 analogues for the given (or all) dynamic runs."""
    runs = dynamic_runs(store, run_ids)
    with store.one_thread():  # stored numbers bit-for-bit reproducible
        summ = summary(store, runs)
        reg_in = store.df(read_sql(PKG, "sql/regression_input.sql"), [runs])
    models = dict(
        store.query("SELECT run_id, model FROM run WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs])
    )
    now = utcnow()
    regs, notes = [], {}
    for r in runs:
        out, note = regression(reg_in[reg_in.run_id == r])
        notes[r] = note
        if len(out):
            out.insert(0, "run_id", r)
            out.insert(2, "model", models[r])
            regs.append(out)
    reg = pd.concat(regs, ignore_index=True) if regs else pd.DataFrame()
    with store.transaction():
        store.execute("DELETE FROM dynamicqa_summary WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs])
        store.execute(
            "DELETE FROM dynamicqa_regression WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs]
        )
        if len(summ):
            store.insert_arrow("dynamicqa_summary", summ.assign(created_at=now))
        if len(reg):
            store.insert_arrow("dynamicqa_regression", reg.assign(created_at=now))
    return format_report(summ, reg, notes)


def stored_report(store: Store, run_ids: list[int]) -> str:
    """Tables 1-3 of these runs as stored by `analyze_dynamicqa` (what `ctxprior analyze` prints)."""
    ids = [int(r) for r in run_ids]
    summ = store.df(read_sql(PKG, "sql/stored_summary.sql"), [ids])
    reg = store.df(read_sql(PKG, "sql/stored_regression.sql"), [ids])
    return format_report(summ, reg, {})


def format_report(summ: pd.DataFrame, reg: pd.DataFrame, notes: dict) -> str:
    lines = []
    for r, g in summ.groupby("run_id", sort=True):
        lines.append(f"run {r} ({g['model'].iloc[0]})")
        lines.append(
            "  Tables 1-2: partition   facts  %persuaded %stubborn  acc+ctx acc-ctx  SE+ctx SE-ctx  "
            "SE_mc+ctx SE_mc-ctx     CP"
        )
        for _, x in g.iterrows():

            def f(v, w=7, p=3):
                return (
                    f"{'-':>{w}}" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:>{w}.{p}f}"
                )

            lines.append(
                f"  {x['partition']:>21} {x['n_facts']:>7} {f(x['pct_persuaded'], 10, 1)} "
                f"{f(x['pct_stubborn'], 9, 1)} {f(x['accuracy_with_context'], 8)} "
                f"{f(x['accuracy_without_context'])} {f(x['se_with_context'])} {f(x['se_without_context'])} "
                f"{f(x['se_mc_with_context'], 10)} {f(x['se_mc_without_context'], 9)} {f(x['cp'])}"
            )
        rg = reg[reg.run_id == r] if len(reg) else reg
        if len(rg):
            lines.append(
                f"  Table 3: OLS of CP on z-scored predictors (n = {rg['n_obs'].iloc[0]}, "
                f"R^2 = {rg['r_squared'].iloc[0]:.3f})"
            )
            for _, x in rg.iterrows():
                lines.append(
                    f"  {x['predictor']:>21} {x['coef']:>8.3f} ({x['std_err']:.3f})  p = {x['p_value']:.3g}"
                )
        if notes.get(r):
            lines.append(f"  note: {notes[r]}")
    return "\n".join(lines)
