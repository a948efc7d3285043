"""Group comparisons: the units of a comparison, its tests in both designs and the
Benjamini-Hochberg adjustment (METHOD.md §3). A comparison is declared in its ``.sql`` file
(``registry``); ``step_comparison`` runs any of them.

Designs (the ``test`` column): ``independent`` is the paper's design (two-sample permutation
test of Student's t on the units named in ``unit``); where those units are repeated measures of
one entity (two query forms per type, or the same entity in both groups) an alternative is
stored beside it: ``paired`` (sign-flip permutation test of the per-entity differences, query
forms averaged) or ``entity_mean`` (units = entities, query forms averaged).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..covariates.resolve import resolve_covariate
from . import registry, stats
from .registry import Comparison
from .selection import covariate_values, query_file, query_sql

ALT_UNIT = {
    "paired": "per-entity difference (group 1 - group 2), query forms averaged; sign-flip permutation",
    "entity_mean": "mean per entity over query forms",
}
UNIT_COLS = [
    "run_id",
    "relation_id",
    "relation",
    "query_type",
    "query_form_id",
    "query_form",
    "fact_id",
    "entity_id",
    "entity",
]


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


def tests_for(cmp: Comparison, units: pd.DataFrame, k: int, seed: int) -> pd.DataFrame:
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
    res = stats.permutation_t_tests(g1, g2, cmp.alternative, k=k, seed=seed)
    rows = [dict(zip(keys, key), test="independent", unit=cmp.unit, **r) for key, r in zip(cells, res.rows())]
    if cmp.alt_design:
        rows += _alt_rows(cmp, cmp.alt_design, units, keys, cells, k, seed)
    out = pd.DataFrame(rows).rename(columns={cmp.stratum: "query_type"})
    out["analysis"] = cmp.name
    out["alternative"] = cmp.alternative
    out["label1"], out["label2"] = cmp.label1, cmp.label2
    return out


def _alt_rows(
    cmp: Comparison, design: str, units: pd.DataFrame, keys: list, cells: list, k: int, seed: int
) -> list[dict]:
    """The rows of the alternative design ``design`` (paired or entity_mean) for the same cells."""
    # average the query forms per entity (fact) and group first; NaN scores stay NaN
    ent = (
        units.assign(_nan=units["value"].isna())
        .groupby(keys + ["fact_id", "grp"], sort=True, dropna=False)
        .agg(value=("value", "mean"), _nan=("_nan", "any"))
    )
    ent.loc[ent["_nan"], "value"] = np.nan
    ent = ent.reset_index()
    ecodes = ent.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()
    ecells = ent.groupby(keys, sort=True, dropna=False).size().index.tolist()
    assert ecells == cells
    alt = cmp.alternative
    if design == "paired":
        res2 = stats.paired_permutation_t_tests(_paired_diffs(cmp, ent, keys, cells), alt, k=k, seed=seed + 1)
    else:
        n = len(cells)
        eg = ent["grp"].to_numpy()
        ev = ent["value"].to_numpy(float)
        e1, e2 = eg == cmp.label1, eg == cmp.label2
        res2 = stats.permutation_t_tests(
            _split(ecodes[e1], ev[e1], n), _split(ecodes[e2], ev[e2], n), alt, k=k, seed=seed + 1
        )
    rows = []
    for key, r in zip(cells, res2.rows()):
        row = dict(zip(keys, key), test=design, unit=ALT_UNIT[design], **r)
        if design == "paired":
            row["mean2"] = None
        rows.append(row)
    return rows


def _paired_diffs(cmp: Comparison, ent: pd.DataFrame, keys: list, cells: list) -> list[np.ndarray]:
    """Per cell: the per-entity differences group 1 - group 2 of entities measured in both."""
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
    return [split[pos[c]] if c in pos else np.array([]) for c in cells]


def bh(df: pd.DataFrame, family, alpha: float) -> pd.DataFrame:
    """p_adj and significant by Benjamini-Hochberg within each family of rows."""
    df = df.copy()
    df["p_adj"] = np.nan
    df["significant"] = None
    for _, idx in df.groupby(list(family), sort=False, dropna=False).groups.items():
        p_adj, sig = stats.bh_adjust(df.loc[idx, "p"].to_numpy(float), alpha)
        df.loc[idx, "p_adj"] = p_adj
        ok = ~np.isnan(df.loc[idx, "p"].to_numpy(float))
        df.loc[idx, "significant"] = [bool(s) if o else None for s, o in zip(sig, ok)]
    return df


def step_comparison(job, name: str) -> None:
    """A declared group comparison: its units, both designs, its transforms, BH per family."""
    cmp = registry.get(name).comparison
    if cmp is None:  # the registry gives every analysis without a step a comparison
        raise ValueError(f"analysis {name}: has neither a step nor a declared comparison")
    if cmp.units_from:  # one scan of persuasion for the three context analyses
        cached = job.cache.get(cmp.units_from)
        if cached is None:
            cached = job.cache[cmp.units_from] = query_file(job.store, cmp.units_from, job.run_ids)
        units = units_from_cells(cached, name)
    else:
        units = query_sql(job.store, cmp.text, job.run_ids)
    note = None
    if "exclude-seen-fakes" in cmp.transforms and job.seen_fakes and not units.empty:
        units, note = exclude_seen_fakes(job.store, units, job.seen_fakes, job.run_ids)
    df = tests_for(cmp, units, job.k, job.seed)
    if df.empty:
        job.log(f"{name}: no data in runs {job.run_ids} (nothing to test)")
        job.counts[name] = 0
        return
    df["note"] = note
    if "label-mixture" in cmp.transforms:
        df = label_gender_mixture(df, units)
    df = bh(df, cmp.family, job.alpha)
    job.results.append(df)
    job.counts[name] = len(df)


def exclude_seen_fakes(store, units: pd.DataFrame, spec: str, run_ids):
    """Units without the fake entities that occur in the corpus (covariate ``spec`` > 0), and a note."""
    resolve_covariate(store, spec)
    cov = covariate_values(store, spec, run_ids)
    seen = cov[(cov["entity_kind"] == "fake") & (cov["covariate"].fillna(0) > 0)]
    ids = set(seen["fact_id"])
    if not ids:
        return units, f"no fake entity seen in the corpus ({spec} > 0)"
    out = units[~units["fact_id"].isin(ids)]
    return out, f"excluded {len(ids)} fake entities seen in the corpus ({spec} > 0)"


def label_gender_mixture(df: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """Say in `unit` and `note` what the gender values are: χ of the collection when the run's
    sample holds one collection, else mean ψ against the mixture of N collections."""
    n_coll = units.groupby("run_id")["n_collections"].max()
    df = df.copy()
    units_out, notes = [], []
    for unit, note, n in zip(df["unit"], df["note"], df["run_id"].map(n_coll).fillna(1).astype(int)):
        if n > 1:
            units_out.append(f"{unit}; psi against the mixture of {n} collections")
            notes.append(
                f"psi measured against the mixture of {n} collections (the run's sample mixes them), so "
                "this is the mean persuasion of the collection's contexts, not the susceptibility chi of "
                "a single collection; score one sample per collection for chi"
            )
        else:
            units_out.append(f"{unit} (= chi of the collection: the run's sample holds only it)")
            notes.append(note)
    df["unit"], df["note"] = units_out, notes
    return df
