"""`ctxprior analyze`: the paper's statistical results from the warehouse (METHOD.md §3).

Each analysis reads its units with a named SQL file in this package (``relevance.sql``, ...),
which selects the runs from the view ``analysis_runs`` (see ``schema/views/50_analysis.sql``:
all finished persuasion runs, or those in ``SET VARIABLE run_ids = [..]``). The statistics the
SQL lacks come from ``stats.py``. Results go to ``analysis_result`` (one row per test, skipped
tests included with a reason) and ``analysis_distribution`` (Fig. 3 and Fig. 4 numbers).

Designs (the ``test`` column): ``independent`` is the paper's design (two-sample permutation
test of Student's t on the units named in ``unit``); where those units are repeated measures of
one entity (two query forms per type, or the same entity in both groups) an alternative is
stored beside it: ``paired`` (sign-flip permutation test of the per-entity differences, query
forms averaged) or ``entity_mean`` (units = entities, query forms averaged).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ..errors import UserError
from ..sqlfiles import read_sql
from . import stats

ANALYSES = ("relevance", "assertive", "negation", "familiarity", "answer-groups", "mr", "reliability",
            "frequency", "degree", "covariate", "friend-enemy", "gender", "dynamicqa")
DEFAULT_ANALYSES = tuple(a for a in ANALYSES if a != "covariate")
KEY_COLS = ("dataset", "relation", "entity", "answer")


@dataclass(frozen=True)
class Comparison:
    name: str
    sql: str
    label1: str
    label2: str
    alternative: str
    unit: str
    alt_design: str | None  # "paired" | "entity_mean" | None
    stratum: str = "query_type"  # column that splits tests within a relation
    family: tuple = ("run_id", "query_type", "test")  # BH family


COMPARISONS = {
    "relevance": Comparison("relevance", "relevance.sql", "relevant", "irrelevant", "greater",
                            "mean psi per (entity, query form) over relevant / irrelevant contexts", "paired"),
    "assertive": Comparison("assertive", "assertive.sql", "assertive", "base", "greater",
                            "mean psi per (entity, query form, context type)", "paired"),
    "negation": Comparison("negation", "negation.sql", "negation", "base", "two-sided",
                           "mean psi per (entity, query form, context type)", "paired"),
    "familiarity": Comparison("familiarity", "familiarity.sql", "fake", "real", "greater",
                              "chi per (entity, query form)", "entity_mean"),
    "answer-groups": Comparison("answer-groups", "answer_groups.sql", "CONTEXT", "ORIGINAL", "greater",
                                "mean psi per (entity, query form, answer group)", "paired"),
    "friend-enemy": Comparison("friend-enemy", "friend_enemy.sql", "friend", "enemy", "greater",
                               "chi per (entity pair, query form)", "entity_mean", stratum="query_form",
                               family=("run_id", "test")),
    "gender": Comparison("gender", "gender.sql", "masculine", "feminine", "two-sided",
                         "mean psi per (name, query form) over the collection's contexts", "entity_mean",
                         stratum="context_type", family=("run_id", "test")),
}

ALT_UNIT = {
    "paired": "per-entity difference (group 1 - group 2), query forms averaged; sign-flip permutation",
    "entity_mean": "mean per entity over query forms",
}


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


# -- running the SQL files ------------------------------------------------------------------
def set_runs(wh, run_ids) -> None:
    """Point the view `analysis_runs` at these runs (None = all finished persuasion runs)."""
    if run_ids is None:
        wh.con.execute("RESET VARIABLE run_ids")
    else:
        ids = ", ".join(str(int(r)) for r in run_ids)
        wh.con.execute(f"SET VARIABLE run_ids = [{ids}]::INTEGER[]")


def query_file(wh, name: str, run_ids=None) -> pd.DataFrame:
    """Run the named SQL file of this package on `run_ids` and return its rows."""
    set_runs(wh, run_ids)
    try:
        return wh.df(read_sql("ctxprior.queries", name))
    finally:
        set_runs(wh, None)


PERSUASION_ANALYSES = tuple(a for a in ANALYSES if a != "dynamicqa")
NO_RUNS = "no finished runs to analyze; score a sample first (`ctxprior score ...`) or pass --run"


@dataclass(frozen=True)
class RunPlan:
    """The runs one `analyze` call works on: persuasion runs and dynamic (score-dynamic) runs."""
    persuasion: list[int]
    dynamic: list[int]


def _check_exist(wh, ids: list[int]) -> dict[int, str]:
    """{run_id: kind} of the given runs; UserError for the first that does not exist."""
    kinds = dict(wh.query(f"SELECT run_id, kind FROM run WHERE run_id IN ({', '.join(map(str, ids))})"))
    missing = [r for r in ids if r not in kinds]
    if missing:
        raise UserError(f"--run {missing[0]}: no such run; list runs with `ctxprior sql \"SELECT * FROM run\"`")
    return kinds


def plan_runs(wh, run_ids=None) -> RunPlan:
    """Split the given runs (validated) by kind, or find every finished persuasion run and every
    dynamic run with scores. Never raises for an empty result (see `check_plan`)."""
    if run_ids:
        ids = sorted({int(r) for r in run_ids})
        kinds = _check_exist(wh, ids)
        return RunPlan([r for r in ids if kinds[r] == "persuasion"], [r for r in ids if kinds[r] == "dynamic"])
    from ..schema.runs import default_runs

    return RunPlan(default_runs(wh, "persuasion"), default_runs(wh, "dynamic"))


def check_plan(plan: RunPlan, names, given: bool) -> None:
    """UserError when none of the requested analyses has a run to work on (and only then)."""
    wants_p = [n for n in names if n in PERSUASION_ANALYSES]
    wants_d = "dynamicqa" in names
    if (wants_p and plan.persuasion) or (wants_d and plan.dynamic):
        return
    if not plan.persuasion and not plan.dynamic:
        raise UserError(NO_RUNS)
    if wants_d and not wants_p:
        raise UserError("--only dynamicqa: no dynamic runs " + ("among the given --run" if given else "with scores")
                        + "; score DynamicQA facts with `ctxprior score-dynamic` first, or choose other analyses")
    what = "persuasion runs among the given --run" if given else "finished persuasion runs"
    raise UserError(f"--only {','.join(wants_p)}: no {what} (only dynamic runs "
                    f"{', '.join(map(str, plan.dynamic))}); use --only dynamicqa, or score a sample with `ctxprior score`")


def parse_only(only: str | None) -> list[str]:
    if not only:
        return list(DEFAULT_ANALYSES)
    names = [s.strip() for s in only.split(",") if s.strip()]
    bad = [n for n in names if n not in ANALYSES]
    if bad:
        raise UserError(f"--only {bad[0]}: unknown analysis; choose from {', '.join(ANALYSES)}")
    return names


# -- group comparisons ----------------------------------------------------------------------
CELL_ANALYSES = ("relevance", "assertive", "negation")
UNIT_COLS = ["run_id", "relation_id", "relation", "query_type", "query_form_id", "query_form", "fact_id",
             "entity_id", "entity"]


def units_from_cells(cells: pd.DataFrame, analysis: str) -> pd.DataFrame:
    """The units of relevance.sql / assertive.sql / negation.sql from context_cells.sql rows."""
    if analysis == "relevance":
        c = cells.assign(grp=np.where(cells["is_relevant"].to_numpy(bool), "relevant", "irrelevant"))
    else:
        c = cells[cells["context_type"].isin([analysis, "base"])].assign(grp=lambda d: d["context_type"])
    g = c.groupby(UNIT_COLS + ["grp"], sort=True, dropna=False)[["sum_psi", "n_rows", "n_nan"]].sum()
    g["value"] = np.where(g["n_nan"] > 0, np.nan, g["sum_psi"] / g["n_rows"])  # NaN scores stay NaN
    return g.drop(columns="sum_psi").reset_index()


def _split(codes: np.ndarray, values: np.ndarray, n: int) -> list[np.ndarray]:
    """values grouped by integer codes 0..n-1 (codes sorted ascending) -> n arrays."""
    return np.split(values, np.searchsorted(codes, np.arange(1, n)))


def _tests_for(cmp: Comparison, units: pd.DataFrame, k: int, seed: int) -> pd.DataFrame:
    """All tests of one comparison (every run x relation x stratum), both designs."""
    keys = ["run_id", "relation_id", "relation", cmp.stratum]
    if units.empty:
        return pd.DataFrame()
    units = units[units["grp"].isin([cmp.label1, cmp.label2])]
    if units.empty:
        return pd.DataFrame()
    units = units.sort_values(keys + ["grp", "fact_id", "query_form_id"], kind="stable")
    codes = units.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()
    cells = units.groupby(keys, sort=True, dropna=False).size().index.tolist()
    n = len(cells)
    grp = units["grp"].to_numpy()
    val = units["value"].to_numpy(float)
    m1, m2 = grp == cmp.label1, grp == cmp.label2
    g1, g2 = _split(codes[m1], val[m1], n), _split(codes[m2], val[m2], n)
    alt = cmp.alternative
    res = stats.permutation_t_tests(g1, g2, alt, k=k, seed=seed)
    rows = [dict(zip(keys, key), test="independent", unit=cmp.unit, **r) for key, r in zip(cells, res.rows())]
    if cmp.alt_design:
        # average the query forms per entity (fact) and group first; NaN scores stay NaN
        ent = units.assign(_nan=units["value"].isna()).groupby(keys + ["fact_id", "grp"], sort=True, dropna=False) \
            .agg(value=("value", "mean"), _nan=("_nan", "any"))
        ent.loc[ent["_nan"], "value"] = np.nan
        ent = ent.reset_index()
        ecodes = ent.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()
        ecells = ent.groupby(keys, sort=True, dropna=False).size().index.tolist()
        assert ecells == cells
        if cmp.alt_design == "paired":
            idx = ent.set_index(keys + ["fact_id", "grp"])
            wide = idx["value"].unstack("grp")  # only existing (entity, group) rows; missing -> NaN
            has = idx.assign(one=1.0)["one"].unstack("grp").notna()
            wide = wide.reindex(columns=[cmp.label1, cmp.label2])
            has = has.reindex(index=wide.index, columns=[cmp.label1, cmp.label2], fill_value=False).fillna(False)
            both = (has[cmp.label1] & has[cmp.label2]).to_numpy(bool)
            d = (wide[cmp.label1] - wide[cmp.label2]).to_numpy(float)[both]
            wcodes = wide.reset_index().groupby(keys, sort=True, dropna=False).ngroup().to_numpy()[both]
            wcells = wide.reset_index().groupby(keys, sort=True, dropna=False).size().index.tolist()
            pos = {c: i for i, c in enumerate(wcells)}
            split = _split(wcodes, d, len(wcells))
            diffs = [split[pos[c]] if c in pos else np.array([]) for c in cells]
            res2 = stats.paired_permutation_t_tests(diffs, alt, k=k, seed=seed + 1)
        else:
            eg = ent["grp"].to_numpy()
            ev = ent["value"].to_numpy(float)
            e1, e2 = eg == cmp.label1, eg == cmp.label2
            res2 = stats.permutation_t_tests(_split(ecodes[e1], ev[e1], n), _split(ecodes[e2], ev[e2], n), alt,
                                             k=k, seed=seed + 1)
        for key, r in zip(cells, res2.rows()):
            row = dict(zip(keys, key), test=cmp.alt_design, unit=ALT_UNIT[cmp.alt_design], **r)
            if cmp.alt_design == "paired":
                row["mean2"] = None
            rows.append(row)
    out = pd.DataFrame(rows).rename(columns={cmp.stratum: "query_type"})
    out["analysis"] = cmp.name
    out["alternative"] = alt
    out["label1"], out["label2"] = cmp.label1, cmp.label2
    return out


def _bh(df: pd.DataFrame, family, alpha: float) -> pd.DataFrame:
    df = df.copy()
    df["p_adj"] = np.nan
    df["significant"] = None
    for _, idx in df.groupby(list(family), sort=False, dropna=False).groups.items():
        p_adj, sig = stats.bh_adjust(df.loc[idx, "p"].to_numpy(float), alpha)
        df.loc[idx, "p_adj"] = p_adj
        ok = ~np.isnan(df.loc[idx, "p"].to_numpy(float))
        df.loc[idx, "significant"] = [bool(s) if o else None for s, o in zip(sig, ok)]
    return df


# -- covariates ------------------------------------------------------------------------------
def _relations_and_views(wh) -> list[str]:
    return [r[0] for r in wh.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")]


def resolve_covariate(wh, spec: str) -> tuple[str, str, list[str]]:
    """'cov_name.column' -> (view, column, join keys). UserError when it does not exist."""
    if "." not in spec:
        raise UserError(f"--covariate {spec}: expected VIEW.COLUMN, e.g. cov_cooccurrence.log_count")
    view, col = spec.split(".", 1)
    if view not in _relations_and_views(wh):
        raise UserError(f"--covariate {spec}: no table or view named {view}; list them with `ctxprior sql \"SHOW TABLES\"`")
    cols = [r[0] for r in wh.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main'", [view])]
    if col not in cols:
        raise UserError(f"--covariate {spec}: {view} has no column {col}; it has {', '.join(cols)}")
    keys = [c for c in KEY_COLS if c in cols]
    if "entity" not in keys:
        raise UserError(f"--covariate {spec}: {view} needs an 'entity' column to join on (keys: {', '.join(KEY_COLS)})")
    return view, col, keys


def auto_covariate(wh, kind: str) -> str | None:
    """A covariate for `frequency` (co-occurrence) or `degree` (KG degree), when one exists.

    Looks in the covariate catalog first (kind cooccurrence -> column `cooccurrence`; kind
    kg_degree, then fact_degree -> its first column with 'degree' in the name, preferring
    `predicate_degree` = delta(e, q)), then at views named cov_*cooccur* / cov_*degree*.
    Spearman's rho is rank-based, so log(count) and count give the same rho.
    """
    names = set(_relations_and_views(wh))
    if "covariate" in names:
        kinds = ["cooccurrence"] if kind == "frequency" else ["kg_degree", "fact_degree"]
        for kd in kinds:
            for view, vcols in wh.query("SELECT view_name, value_columns FROM covariate WHERE kind = ? "
                                        "ORDER BY covariate_id", [kd]):
                cols = [c.strip() for c in (vcols or "").split(",")]
                if view not in names:
                    continue
                if kind == "frequency" and "cooccurrence" in cols:
                    return f"{view}.cooccurrence"
                deg = [c for c in cols if c == "predicate_degree"] + [c for c in cols if "degree" in c]
                if kind == "degree" and deg:
                    return f"{view}.{deg[0]}"
    want = "cooccur" if kind == "frequency" else "degree"
    for name in sorted(names):
        if name.startswith("cov_") and want in name:
            cols = wh.query("SELECT column_name, data_type FROM information_schema.columns "
                            "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position", [name])
            num = [c for c, t in cols if c not in KEY_COLS and not c.endswith("_id") and c != "window"
                   and any(x in t.upper() for x in ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL"))]
            pref = [c for c in num if c in ("cooccurrence", "predicate_degree", "degree")]
            if "entity" in [c for c, _ in cols] and num:
                return f"{name}.{(pref or num)[0]}"
    return None


def seen_fakes_spec(wh, freq_spec: str | None) -> str | None:
    """Default --seen-fakes: the co-occurrence view's `entity_count` (the entity name occurs in the
    corpus), else the frequency covariate itself."""
    if not freq_spec:
        return None
    view = freq_spec.split(".", 1)[0]
    cols = [r[0] for r in wh.query("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                   "AND table_schema = 'main'", [view])]
    return f"{view}.entity_count" if "entity_count" in cols else freq_spec


def covariate_values(wh, spec: str, run_ids) -> pd.DataFrame:
    """χ per (run, query type, fact) joined with the covariate column (averaged over duplicates)."""
    view, col, keys = resolve_covariate(wh, spec)
    chi = query_file(wh, "susceptibility_by_fact.sql", run_ids)
    other = [k_ for k_ in keys if k_ != "relation"]
    cov_sql = (f'SELECT {", ".join(keys)}, avg("{col}")::DOUBLE AS v FROM "{view}" GROUP BY ALL')
    joins, values = [], []
    rel_cols = ["relation", "relation_uri"] if "relation" in keys else [None]
    for i, rc in enumerate(rel_cols):  # relation may be the short name or the URI: two hash joins
        conds = [f"c{i}.{k_} IS NOT DISTINCT FROM s.{k_}" for k_ in other]
        if rc:
            conds.append(f"c{i}.relation = s.{rc}")
        joins.append(f"LEFT JOIN cov c{i} ON {' AND '.join(conds)}")
        values.append(f"c{i}.v")
    wh.con.register("_chi", chi)
    try:
        df = wh.df(f"""WITH cov AS ({cov_sql})
            SELECT s.*, coalesce({', '.join(values)}) AS covariate
            FROM _chi s {' '.join(joins)}""")
    finally:
        wh.con.unregister("_chi")
    return df


def _spearman_rows(df: pd.DataFrame, analysis: str, xcol: str, note: str, unit: str) -> list[dict]:
    rows = []
    for (run_id, qt), d in df.groupby(["run_id", "query_type"], sort=True):
        per = [("(all)", None, d)] + [(rel, rid, dd) for (rel, rid), dd in d.groupby(["relation", "relation_id"], sort=True)]
        for rel, rid, dd in per:
            rho, p, n, why = stats.spearman(dd[xcol], dd["susceptibility"])
            rows.append(dict(run_id=run_id, relation_id=rid, relation=rel, query_type=qt, test="spearman",
                             unit=unit, analysis=analysis, alternative="two-sided", label1=xcol,
                             label2="susceptibility", n1=n, n2=None, mean1=None, mean2=None, t=None,
                             p=None if why else p, effect_size=None if why else rho, skip_reason=why, note=note))
    return rows


# -- the driver ------------------------------------------------------------------------------
@dataclass
class _Job:
    """State of one `analyze` call shared by its steps."""
    wh: object
    run_ids: list  # persuasion runs
    dynamic: list  # dynamic runs
    k: int
    alpha: float
    seed: int
    covariates: list
    seen_fakes: str | None
    freq_spec: str | None
    log: object
    names: list = field(default_factory=list)
    results: list = field(default_factory=list)
    dists: list = field(default_factory=list)
    replicates: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    cells: pd.DataFrame | None = None


def analyze(wh, run_ids=None, only=None, k: int = 10_000, alpha: float = 0.05, seed: int = 0,
            covariates=(), seen_fakes: str | None = None, log=None, timings: dict | None = None) -> dict:
    """Run the analyses on `run_ids`, store their rows, return {analysis: n rows stored}.

    only: list of analysis names (default all but `covariate`, which runs when covariates are given).
    run_ids: persuasion runs go to the persuasion analyses, dynamic runs to `dynamicqa` (default:
    every finished persuasion run and every dynamic run with scores). Analyses without runs of
    their kind are skipped with a message; UserError only when none of the requested analyses
    has a run. covariates: 'view.column' specs for Spearman rho of chi (analysis `covariate`).
    seen_fakes: 'view.column'; fake entities with a value > 0 are excluded from `familiarity`
    (default: the frequency covariate, when one exists).
    """
    job = _prepare(wh, run_ids, only, k, alpha, seed, covariates, seen_fakes,
                   log or (lambda msg: print(msg, file=sys.stderr)))
    timings = {} if timings is None else timings
    with wh.one_thread():  # stored numbers bit-for-bit reproducible
        for name in job.names:
            t0 = time.perf_counter()
            _STEPS.get(name, _step_comparison)(job, name)
            timings[name] = time.perf_counter() - t0
    t_store = time.perf_counter()
    if job.run_ids:
        _store(wh, job.run_ids, [n for n in job.names if n in PERSUASION_ANALYSES], job.results, job.dists,
               job.k, job.seed, job.alpha, job.replicates)
    timings["(store)"] = time.perf_counter() - t_store
    return job.counts


def _prepare(wh, run_ids, only, k, alpha, seed, covariates, seen_fakes, log) -> _Job:
    """Validate every input and find the runs (before anything is written); log skips and notes."""
    if k < 1:
        raise UserError(f"--permutations {k}: must be at least 1")
    if not 0 < alpha < 1:
        raise UserError(f"--alpha {alpha}: must be between 0 and 1")
    names = list(only) if only else list(DEFAULT_ANALYSES)
    if covariates and "covariate" not in names:
        names.append("covariate")
    plan = plan_runs(wh, run_ids)
    check_plan(plan, names, bool(run_ids))
    for spec in covariates:
        resolve_covariate(wh, spec)  # validate before any work
    freq_spec = None
    if "frequency" in names or "familiarity" in names:
        freq_spec = next((c for c in covariates if "cooc" in c), None) or auto_covariate(wh, "frequency")
    if seen_fakes:
        resolve_covariate(wh, seen_fakes)
    else:
        seen_fakes = seen_fakes_spec(wh, freq_spec)
    skipped = [n for n in names if (n == "dynamicqa" and not plan.dynamic)
               or (n in PERSUASION_ANALYSES and not plan.persuasion)]
    if skipped:  # all of one kind: check_plan made sure the other kind has runs
        kind = "dynamic" if skipped == ["dynamicqa"] else "persuasion"
        why = (f"none of the given --run is a {kind} run" if run_ids else
               "no dynamic runs with scores (`ctxprior score-dynamic`)" if kind == "dynamic" else
               "no finished persuasion runs (`ctxprior score`)")
        log(f"skipped {', '.join(skipped)}: {why}")
    job = _Job(wh, plan.persuasion, plan.dynamic, k, alpha, seed, list(covariates), seen_fakes, freq_spec, log)
    job.names = [n for n in names if n not in skipped]
    for runs, used in ((plan.persuasion, set(job.names) - {"dynamicqa"}), (plan.dynamic, "dynamicqa" in job.names)):
        note = precision_note(wh, runs) if used else None  # runs compared with each other: one kind
        if note:
            log(note)
    return job


# dtypes and quantizations from the lowest to the highest precision
_PRECISION_ORDER = ("4bit", "8bit", "bfloat16", "float16", "float32", "float64")


def precision_note(wh, run_ids) -> str | None:
    """One line when these runs differ in dtype / quantization (None when they agree), e.g.
    'note: runs 1 (float32) and 4 (bfloat16) differ in dtype; ...'."""
    if not run_ids:
        return None
    rows = wh.query(f"SELECT run_id, coalesce(dtype, 'unknown dtype'), coalesce(quantization, 'none') FROM run "
                    f"WHERE run_id IN ({', '.join(map(str, run_ids))}) ORDER BY run_id")
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
    return (f"note: runs {listed} differ in {what}; ψ of irrelevant contexts is small next to {lowest} rounding, "
            "see docs/scoring.md#precision")


def _step_comparison(job: _Job, name: str) -> None:
    """A group comparison (COMPARISONS): both designs, BH per family."""
    cmp = COMPARISONS[name]
    if name in CELL_ANALYSES:  # one scan of persuasion for the three context analyses
        if job.cells is None:
            job.cells = query_file(job.wh, "context_cells.sql", job.run_ids)
        units = units_from_cells(job.cells, name)
    else:
        units = query_file(job.wh, cmp.sql, job.run_ids)
    note = None
    if name == "familiarity" and job.seen_fakes and not units.empty:
        units, note = _exclude_seen_fakes(job.wh, units, job.seen_fakes, job.run_ids)
    df = _tests_for(cmp, units, job.k, job.seed)
    if df.empty:
        job.log(f"{name}: no data in runs {job.run_ids} (nothing to test)")
        job.counts[name] = 0
        return
    df["note"] = note
    if name == "gender":
        df = label_gender_mixture(df, units)
    df = _bh(df, cmp.family, job.alpha)
    job.results.append(df)
    job.counts[name] = len(df)


def label_gender_mixture(df: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """Say in `unit` and `note` what the gender values are: χ of the collection when the run's
    sample holds one collection, else mean ψ against the mixture of N collections."""
    n_coll = units.groupby("run_id")["n_collections"].max()
    df = df.copy()
    units_out, notes = [], []
    for unit, note, n in zip(df["unit"], df["note"], df["run_id"].map(n_coll).fillna(1).astype(int)):
        if n > 1:
            units_out.append(f"{unit}; psi against the mixture of {n} collections")
            notes.append(f"psi measured against the mixture of {n} collections (the run's sample mixes them), so "
                         "this is the mean persuasion of the collection's contexts, not the susceptibility chi of "
                         "a single collection; score one sample per collection for chi")
        else:
            units_out.append(f"{unit} (= chi of the collection: the run's sample holds only it)")
            notes.append(note)
    df["unit"], df["note"] = units_out, notes
    return df


def _step_mr(job: _Job, name: str) -> None:
    r, d = _mr(job.wh, job.run_ids)
    job.results.extend([r] if len(r) else [])
    job.dists.extend([d] if len(d) else [])
    job.counts[name] = len(r) + len(d)
    if not len(d):
        job.log("mr: no memorization ratios (score with generations to get them)")


def _step_reliability(job: _Job, name: str) -> None:
    """Variance across seed replicates and query forms; the replicate sets go to analysis_replicate."""
    reps = query_file(job.wh, "replicates.sql", job.run_ids)
    for r in reps[~reps["counted"]].itertuples():
        job.log(f"reliability: {r.reason}")
    for (model, _), g in reps[reps["counted"]].groupby(["model", "dataset_id"], sort=True, dropna=False):
        sets = [",".join(map(str, gg["run_id"])) for _, gg in g.groupby("group_run_id", sort=True)]
        if len(sets) > 1:
            job.log(f"reliability: runs of {model} on one dataset form {len(sets)} replicate groups "
                    f"({' | '.join(sets)}): they differ in more than the sample seed (see the view v_run_replicate)")
    job.replicates.append(reps)
    d = query_file(job.wh, "reliability.sql", job.run_ids)
    if len(d):
        d["analysis"], d["bin"], d["bin_lo"], d["bin_hi"], d["share"] = "reliability", 0, None, None, 1.0
        job.dists.append(d)
    job.counts[name] = len(d)


def _step_spearman(job: _Job, name: str) -> None:
    """frequency / degree / covariate: Spearman rho of chi against a covariate."""
    wh, covariates = job.wh, job.covariates
    specs = list(covariates) if name == "covariate" else [
        job.freq_spec if name == "frequency" else
        (next((c for c in covariates if "degree" in c), None) or auto_covariate(wh, "degree"))]
    rows = []
    if not specs:
        job.log("covariate: no --covariate VIEW.COLUMN given; nothing to correlate")
    for spec in specs:
        if spec is None and name == "degree":
            df = query_file(wh, "susceptibility_by_fact.sql", job.run_ids)
            if df["predicate_degree"].notna().any():
                df["covariate"] = df["predicate_degree"].astype(float)
                rows += _spearman_rows(df, name, "covariate", "fact.predicate_degree (yago_qec)",
                                       "chi per (entity, query type), query forms averaged, vs KG degree")
                continue
        if spec is None:
            job.log(f"{name}: no covariate found (give --covariate cov_<name>.<column>); skipped")
            continue
        df = covariate_values(wh, spec, job.run_ids)
        rows += _spearman_rows(df, name, "covariate", spec,
                               f"chi per (entity, query type), query forms averaged, vs {spec}")
    if rows:
        sp = pd.DataFrame(rows)
        fam = ("run_id", "analysis", "query_type", "note")
        per_rel = _bh(sp[sp["relation"] != "(all)"], fam, job.alpha)
        pooled = _bh(sp[sp["relation"] == "(all)"], fam, 1.0)
        pooled["p_adj"] = pooled["p"]
        pooled["significant"] = [None if p is None or p != p else bool(p < job.alpha) for p in pooled["p"]]
        job.results.append(pd.concat([pooled, per_rel], ignore_index=True))
    job.counts[name] = len(rows)


def _step_dynamicqa(job: _Job, name: str) -> None:
    """DynamicQA Tables 1-3 (owned by ctxprior.dynamicqa), stored; `summary_lines` prints them."""
    job.counts[name] = 0
    try:
        from ..dynamicqa.analyses import analyze_dynamicqa  # owned by the DynamicQA area
    except ImportError as e:
        job.log(f"dynamicqa: not available in this install ({e}); skipped")
        return
    try:
        text = analyze_dynamicqa(job.wh, job.dynamic)
    except UserError as e:
        job.log(f"dynamicqa: skipped ({e})")
        return
    for line in str(text or "").splitlines():  # the tables are results: the summary prints them on stdout
        if line.strip().startswith("note:"):
            job.log(f"dynamicqa: {line.strip()}")
    ids = ", ".join(map(str, job.dynamic))
    job.counts[name] = int(job.wh.scalar(
        f"SELECT (SELECT count(*) FROM dynamicqa_summary WHERE run_id IN ({ids})) "
        f"+ (SELECT count(*) FROM dynamicqa_regression WHERE run_id IN ({ids}))"))


_STEPS = {"mr": _step_mr, "reliability": _step_reliability, "frequency": _step_spearman,
          "degree": _step_spearman, "covariate": _step_spearman, "dynamicqa": _step_dynamicqa}


def _exclude_seen_fakes(wh, units: pd.DataFrame, spec: str, run_ids):
    view, col, keys = resolve_covariate(wh, spec)
    cov = covariate_values(wh, spec, run_ids)
    seen = cov[(cov["entity_kind"] == "fake") & (cov["covariate"].fillna(0) > 0)]
    ids = set(seen["fact_id"])
    if not ids:
        return units, f"no fake entity seen in the corpus ({spec} > 0)"
    out = units[~units["fact_id"].isin(ids)]
    return out, f"excluded {len(ids)} fake entities seen in the corpus ({spec} > 0)"


def _mr(wh, run_ids):
    df = query_file(wh, "mr.sql", run_ids)
    if df.empty:
        return pd.DataFrame(), pd.DataFrame()
    models = dict(wh.query("SELECT run_id, model FROM run"))
    drows = []
    for (run_id, qt), d in df.groupby(["run_id", "query_type"], sort=True):
        total = len(d)
        for b in range(5):
            x = d.loc[d["bin"] == b, "susceptibility"].to_numpy(float)
            n_nan = int(np.isnan(x).sum())
            x = x[~np.isnan(x)]  # NaN chi are counted in n_nan, not in the quartiles
            q = np.quantile(x, [0.25, 0.5, 0.75]) if len(x) else [np.nan] * 3
            drows.append(dict(run_id=run_id, run_ids=str(run_id), model=models.get(run_id, "?"), analysis="mr",
                              query_type=qt, series="susceptibility", bin=b, bin_lo=b / 5, bin_hi=(b + 1) / 5,
                              n=len(x), n_nan=n_nan, share=len(x) / total, mean=x.mean() if len(x) else np.nan,
                              q25=q[0], median=q[1], q75=q[2], max=x.max() if len(x) else np.nan))
    d2 = df.rename(columns={"memorization_ratio": "mr"})
    rows = _spearman_rows(d2, "mr", "mr", "memorization ratio",
                          "(entity, query form) with a defined MR")
    rows = [r for r in rows if r["relation"] == "(all)"]
    return pd.DataFrame(rows), pd.DataFrame(drows)


RESULT_COLS = ["run_id", "analysis", "relation_id", "relation", "query_type", "test", "unit", "alternative",
               "label1", "label2", "n1", "n2", "mean1", "mean2", "t", "p", "p_adj", "significant",
               "effect_size", "k", "seed", "alpha", "skip_reason", "note", "created_at"]
DIST_COLS = ["run_id", "run_ids", "model", "analysis", "query_type", "series", "bin", "bin_lo", "bin_hi", "n", "n_nan",
             "share", "mean", "q25", "median", "q75", "max", "created_at"]


REPLICATE_COLS = ["group_run_id", "run_id", "sample_id", "seed", "counted", "reason", "created_at"]


def _store(wh, run_ids, names, results, dists, k, seed, alpha, replicates=()) -> None:
    """Replace the rows of these runs and analyses in one transaction."""
    now = _now()
    res = _result_frame(results, k, seed, alpha, now)
    dist = pd.concat(dists, ignore_index=True) if dists else pd.DataFrame(columns=DIST_COLS)
    if len(dist):
        dist["created_at"] = now
        dist = dist[DIST_COLS].replace({np.nan: None})
    reps = pd.concat(list(replicates), ignore_index=True) if len(replicates) else pd.DataFrame(columns=REPLICATE_COLS)
    if len(reps):
        reps = reps.assign(created_at=now)[REPLICATE_COLS].replace({np.nan: None})
    ids = ", ".join(map(str, run_ids))
    quoted = ", ".join(f"'{n}'" for n in names) or "NULL"
    with wh.transaction():
        wh.execute(f"DELETE FROM analysis_result WHERE run_id IN ({ids}) AND analysis IN ({quoted})")
        wh.execute(f"DELETE FROM analysis_distribution WHERE run_id IN ({ids}) AND analysis IN ({quoted})")
        if "reliability" in names:
            wh.execute(f"DELETE FROM analysis_replicate WHERE run_id IN ({ids}) OR group_run_id IN ({ids})")
        if len(res):
            wh.insert_arrow("analysis_result", _to_arrow(res))
        if len(dist):
            wh.insert_arrow("analysis_distribution", _to_arrow(dist))
        if len(reps):
            wh.insert_arrow("analysis_replicate", _to_arrow(reps))


def _result_frame(results, k, seed, alpha, now) -> pd.DataFrame:
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


# -- the summary the main job prints ------------------------------------------------------------------------
_HEADLINES = [
    ("relevance", "relevant contexts more persuasive"),
    ("assertive", "assertive contexts more persuasive than base"),
    ("negation", "negation differs from base (two-sided)"),
    ("familiarity", "fake entities more susceptible than real"),
    ("answer-groups", "context-agreeing answers have higher persuasion"),
    ("friend-enemy", "friend pairs more susceptible than enemy pairs"),
    ("gender", "masculine vs feminine names differ"),
]


def summary_lines(wh, run_ids=None, only=None) -> list[str]:
    """~10 lines summarizing the stored analyses of these runs (the main job prints them).

    run_ids: the runs (persuasion and dynamic) or None = every finished persuasion run and every
    dynamic run with scores; only: analysis names (None = all): the persuasion lines need one of
    them, the DynamicQA lines `dynamicqa`. UserError only when there is no run at all."""
    plan = plan_runs(wh, run_ids)
    if only:
        plan = RunPlan(plan.persuasion if any(n in PERSUASION_ANALYSES for n in only) else [],
                       plan.dynamic if "dynamicqa" in only else [])
    if not plan.persuasion and not plan.dynamic:
        raise UserError(NO_RUNS)
    models = dict(wh.query("SELECT run_id, model FROM run"))
    runs = [", ".join(f"{r} ({models[r]})" for r in plan.persuasion)] if plan.persuasion else []
    if plan.dynamic:
        runs.append("dynamic " + ", ".join(f"{r} ({models[r]})" for r in plan.dynamic))
    lines = ["runs: " + "; ".join(runs)]
    if plan.persuasion:
        idl = ", ".join(map(str, plan.persuasion))
        lines += _comparison_lines(wh, idl) + _spearman_lines(wh, idl) + _reliability_lines(wh, idl)
    if plan.dynamic:
        lines += _dynamic_lines(wh, plan.dynamic, models)
    if len(lines) == 1:
        lines.append("no analysis results stored for these runs; run `ctxprior analyze` first")
    return lines


def _comparison_lines(wh, idl: str) -> list[str]:
    """One line per group comparison: significant / tested per query type, mean d."""
    df = wh.df(f"""SELECT analysis, query_type, count(*) FILTER (WHERE skip_reason IS NULL) AS n,
                          count(*) FILTER (WHERE significant) AS s, avg(effect_size) FILTER (WHERE skip_reason IS NULL) AS d,
                          count(*) FILTER (WHERE skip_reason IS NOT NULL) AS skipped,
                          count(DISTINCT run_id) AS n_runs,
                          max(regexp_extract(unit, 'mixture of (\\d+) collections', 1)) AS mixture
                   FROM analysis_result WHERE run_id IN ({idl}) AND test = 'independent'
                   GROUP BY ALL ORDER BY ALL""")
    lines = []
    for name, text in _HEADLINES:
        d = df[df["analysis"] == name]
        if d.empty:
            continue
        parts = []
        for _, r in d.iterrows():
            part = f"{int(r.s)}/{int(r.n)} {r.query_type}" if r.n else f"0/0 {r.query_type}"
            if r.d is not None and not (isinstance(r.d, float) and math.isnan(r.d)):
                part += f" (mean d={r.d:+.2f})"
            parts.append(part)
        unit = "relations" if name not in ("friend-enemy", "gender") else "tests"
        skipped = int(d["skipped"].sum())
        n_runs = int(d["n_runs"].max())
        over = f" x {n_runs} runs" if n_runs > 1 else ""
        mixture = max((m for m in d["mixture"] if m), default=None, key=int)
        lines.append(f"{text}: " + ", ".join(parts) + f" {unit}{over} significant (BH)"
                     + (f"; {skipped} skipped" if skipped else "")
                     + (f"; mean psi against the mixture of {mixture} collections, not chi of one collection"
                        if mixture else ""))
    return lines


def _spearman_lines(wh, idl: str) -> list[str]:
    """One line per correlation analysis: pooled rho per query type (a range over several runs)."""
    lines = []
    sp = wh.df(f"""SELECT analysis, query_type, effect_size AS rho, p, n1 AS n, note FROM analysis_result
                   WHERE run_id IN ({idl}) AND test = 'spearman' AND relation = '(all)' AND skip_reason IS NULL
                   ORDER BY ALL""")
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


def _reliability_lines(wh, idl: str) -> list[str]:
    """Median variance of chi and psi across seeds and across query forms (median over groups)."""
    lines = []
    rel = wh.df(f"""SELECT query_type, series, median FROM analysis_distribution
                    WHERE run_id IN ({idl}) AND analysis = 'reliability' ORDER BY ALL""")
    if len(rel):
        agg = rel.groupby(["series", "query_type"])["median"].median()
        for score, sym in (("susceptibility", "chi"), ("persuasion", "psi")):
            parts = []
            for across in ("seeds", "query forms"):
                vals = [f"{q} {agg[(f'{score} across {across}', q)]:.2g}" for q in ("open", "closed")
                        if (f"{score} across {across}", q) in agg.index]
                if vals:
                    parts.append(f"across {across}: " + ", ".join(vals))
            if parts:
                lines.append(f"reliability, median variance of {sym}: " + "; ".join(parts))
    return lines


def _num(v, fmt: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _dynamic_lines(wh, dyn: list[int], models: dict) -> list[str]:
    """One line per dynamic run with stored DynamicQA tables: % persuaded and mean CP per partition."""
    df = wh.df(f"""SELECT run_id, partition, pct_persuaded, cp FROM dynamicqa_summary
                   WHERE run_id IN ({', '.join(map(str, dyn))})
                   ORDER BY run_id, CASE partition WHEN 'static' THEN 0 WHEN 'temporal' THEN 1 ELSE 2 END""")
    lines = []
    for rid, d in df.groupby("run_id", sort=True):
        parts = [f"{r.partition} {_num(r.pct_persuaded, '.1f')}% / {_num(r.cp, '.3f')}" for r in d.itertuples()]
        lines.append(f"DynamicQA run {rid} ({models[rid]}), persuaded / mean CP (nats): " + ", ".join(parts))
    if len(df):
        from ..dynamicqa.analyses import stored_report  # owned by the DynamicQA area

        lines += stored_report(wh, sorted(set(df["run_id"]))).splitlines()
    return lines
