"""The rows an analysis reads: its SQL file on the view ``analysis_runs`` (``set_runs``,
``query_file``; χ with a covariate: ``covariate_values``), the split of the requested runs by kind
(``plan_runs``, ``check_plan``) and the note when the runs differ in precision (``precision_note``)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..covariates.resolve import join_covariate
from ..errors import UserError
from ..sqlfiles import read_sql
from ..storage.runs import default_runs
from . import registry

NO_RUNS = "no finished runs to analyze; score a sample first (`ctxprior score ...`) or pass --run"


def set_runs(store, run_ids) -> None:
    """Point the view `analysis_runs` at these runs (None = all finished persuasion runs)."""
    if run_ids is None:
        store.con.execute("RESET VARIABLE run_ids")
    else:
        store.con.execute("SET VARIABLE run_ids = ?::INTEGER[]", [[int(r) for r in run_ids]])


def query_file(store, name: str, run_ids=None) -> pd.DataFrame:
    """Run the named SQL file of this package on `run_ids` and return its rows."""
    return query_sql(store, read_sql("ctxprior.analyses", name), run_ids)


def query_sql(store, text: str, run_ids=None) -> pd.DataFrame:
    """Run an analysis query (it reads ``analysis_runs``) on `run_ids` and return its rows."""
    set_runs(store, run_ids)
    try:
        return store.df(text)
    finally:
        set_runs(store, None)


def covariate_values(store, spec: str, run_ids) -> pd.DataFrame:
    """χ per (run, query type, fact) joined with the covariate column (averaged over duplicates)."""
    return join_covariate(store, query_file(store, "susceptibility_by_fact.sql", run_ids), spec)


def sql(name: str) -> str:
    """A helper statement of this package's ``sql/`` folder (not an analysis)."""
    return read_sql("ctxprior.analyses", f"sql/{name}")


@dataclass(frozen=True)
class RunPlan:
    """The runs one `analyze` call works on: persuasion runs and dynamic (score-dynamic) runs."""

    persuasion: list[int]
    dynamic: list[int]


def _check_exist(store, ids: list[int]) -> dict[int, str]:
    """{run_id: kind} of the given runs; UserError for the first that does not exist."""
    kinds = dict(store.query("SELECT run_id, kind FROM run WHERE list_contains(?::INTEGER[], run_id)", [ids]))
    missing = [r for r in ids if r not in kinds]
    if missing:
        raise UserError(f'--run {missing[0]}: no such run; list runs with `ctxprior sql "SELECT * FROM run"`')
    return kinds


def plan_runs(store, run_ids=None) -> RunPlan:
    """Split the given runs (validated) by kind, or find every finished persuasion run and every
    dynamic run with scores. Never raises for an empty result (see `check_plan`)."""
    if run_ids:
        ids = sorted({int(r) for r in run_ids})
        kinds = _check_exist(store, ids)
        return RunPlan(
            [r for r in ids if kinds[r] == "persuasion"], [r for r in ids if kinds[r] == "dynamic"]
        )
    return RunPlan(default_runs(store, "persuasion"), default_runs(store, "dynamic"))


def check_plan(plan: RunPlan, names, given: bool) -> None:
    """UserError when none of the requested analyses has a run to work on (and only then)."""
    wants_p = [n for n in names if registry.get(n).kind == "persuasion"]
    wants_d = [n for n in names if registry.get(n).kind == "dynamic"]
    if (wants_p and plan.persuasion) or (wants_d and plan.dynamic):
        return
    if not plan.persuasion and not plan.dynamic:
        raise UserError(NO_RUNS)
    if wants_d and not wants_p:
        raise UserError(
            f"--only {','.join(wants_d)}: no dynamic runs "
            + ("among the given --run" if given else "with scores")
            + "; score DynamicQA facts with `ctxprior score-dynamic` first, or choose other analyses"
        )
    what = "persuasion runs among the given --run" if given else "finished persuasion runs"
    raise UserError(
        f"--only {','.join(wants_p)}: no {what} (only dynamic runs "
        f"{', '.join(map(str, plan.dynamic))}); use --only dynamicqa, or score a sample with `ctxprior score`"
    )


# dtypes and quantizations from the lowest to the highest precision
_PRECISION_ORDER = ("4bit", "8bit", "bfloat16", "float16", "float32", "float64")


def precision_note(store, run_ids) -> str | None:
    """One line when these runs differ in dtype / quantization (None when they agree), e.g.
    'note: runs 1 (float32) and 4 (bfloat16) differ in dtype; ...'."""
    if not run_ids:
        return None
    rows = store.query(sql("run_precision.sql"), [[int(r) for r in run_ids]])
    groups: dict[str, list[int]] = {}
    for rid, dtype, quant in rows:
        groups.setdefault(dtype if quant == "none" else f"{dtype}, {quant}", []).append(rid)
    if len(groups) < 2:
        return None
    dtypes = {d for _, d, _ in rows}
    quants = {q for _, _, q in rows}
    what = " and ".join(w for w, vals in (("dtype", dtypes), ("quantization", quants)) if len(vals) > 1)
    parts = [f"{', '.join(map(str, ids))} ({label})" for label, ids in groups.items()]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    known = [p for p in _PRECISION_ORDER if p in dtypes | quants]
    lowest = known[0] if known else "the lower precision's"
    return (
        f"note: runs {listed} differ in {what}; ψ of irrelevant contexts is small next to {lowest} rounding, "
        "see docs/scoring.md#precision"
    )
