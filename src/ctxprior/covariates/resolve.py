"""Which covariate an analysis correlates with: ``VIEW.COLUMN`` specs checked against the
warehouse (``resolve_covariate``), found automatically for `frequency` / `degree`
(``auto_covariate``), the default ``--seen-fakes`` (``seen_fakes_spec``), and the join of a
covariate column onto per-fact rows (``join_covariate``). ``ctxprior.analyses`` calls these.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from ..errors import UserError
from ..sqlfiles import body, ident, read_sql
from ..storage.store import view_error

KEY_COLS = ("dataset", "relation", "entity", "answer")
_NUMERIC = ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL")


def relations_and_views(store) -> list[str]:
    """Names of the tables and views of the warehouse's main schema."""
    return [
        r[0]
        for r in store.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")
    ]


def _columns(store, view: str) -> list[str]:
    return [
        r[0]
        for r in store.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND table_schema = 'main'",
            [view],
        )
    ]


def resolve_covariate(store, spec: str) -> tuple[str, str, list[str]]:
    """'cov_name.column' -> (view, column, join keys). UserError when it does not exist."""
    if "." not in spec:
        raise UserError(f"--covariate {spec}: expected VIEW.COLUMN, e.g. cov_cooccurrence.log_count")
    view, col = spec.split(".", 1)
    if view not in relations_and_views(store):
        raise UserError(
            f'--covariate {spec}: no table or view named {view}; list them with `ctxprior sql "SHOW TABLES"`'
        )
    cols = _columns(store, view)
    if col not in cols:
        raise UserError(f"--covariate {spec}: {view} has no column {col}; it has {', '.join(cols)}")
    keys = [c for c in KEY_COLS if c in cols]
    if "entity" not in keys:
        raise UserError(
            f"--covariate {spec}: {view} needs an 'entity' column to join on (keys: {', '.join(KEY_COLS)})"
        )
    return view, col, keys


def auto_covariate(store, kind: str) -> str | None:
    """A covariate for `frequency` (co-occurrence) or `degree` (KG degree), when one exists.

    Looks in the covariate catalog first (kind cooccurrence -> column `cooccurrence`; kind
    kg_degree, then fact_degree -> its first column with 'degree' in the name, preferring
    `predicate_degree` = delta(e, q)), then at views named cov_*cooccur* / cov_*degree*.
    Spearman's rho is rank-based, so log(count) and count give the same rho.
    """
    names = set(relations_and_views(store))
    if "covariate" in names:
        found = _from_catalog(store, kind, names)
        if found:
            return found
    want = "cooccur" if kind == "frequency" else "degree"
    for name in sorted(names):
        if name.startswith("cov_") and want in name:
            cols = store.query(read_sql("ctxprior.covariates", "sql/column_types.sql"), [name])
            num = [
                c
                for c, t in cols
                if c not in KEY_COLS
                and not c.endswith("_id")
                and c != "window"
                and any(x in t.upper() for x in _NUMERIC)
            ]
            pref = [c for c in num if c in ("cooccurrence", "predicate_degree", "degree")]
            if "entity" in [c for c, _ in cols] and num:
                return f"{name}.{(pref or num)[0]}"
    return None


def _from_catalog(store, kind: str, names: set) -> str | None:
    """The covariate catalog's first view of the kind that `auto_covariate` wants, or None."""
    kinds = ["cooccurrence"] if kind == "frequency" else ["kg_degree", "fact_degree"]
    for kd in kinds:
        for view, vcols in store.query(read_sql("ctxprior.covariates", "sql/catalog_of_kind.sql"), [kd]):
            cols = [c.strip() for c in (vcols or "").split(",")]
            if view not in names:
                continue
            if kind == "frequency" and "cooccurrence" in cols:
                return f"{view}.cooccurrence"
            deg = [c for c in cols if c == "predicate_degree"] + [c for c in cols if "degree" in c]
            if kind == "degree" and deg:
                return f"{view}.{deg[0]}"
    return None


def seen_fakes_spec(store, freq_spec: str | None) -> str | None:
    """Default --seen-fakes: the co-occurrence view's `entity_count` (the entity name occurs in the
    corpus), else the frequency covariate itself."""
    if not freq_spec:
        return None
    view = freq_spec.split(".", 1)[0]
    return f"{view}.entity_count" if "entity_count" in _columns(store, view) else freq_spec


def join_covariate(store, chi: pd.DataFrame, spec: str) -> pd.DataFrame:
    """``chi`` (rows with the key columns of ``susceptibility_by_fact.sql``) with a column
    ``covariate``: the spec's column averaged over duplicate keys. The relation key may hold the
    short name or the URI: two hash joins, the first match wins. Identifiers come from
    ``resolve_covariate`` (checked names, quoted), never values."""
    view, col, keys = resolve_covariate(store, spec)
    other = [k_ for k_ in keys if k_ != "relation"]
    avg = f"avg({ident(col)})::DOUBLE AS v"
    cov_sql = f"SELECT {', '.join(map(ident, keys))}, {avg} FROM {ident(view)} GROUP BY ALL"
    joins, values = [], []
    rel_cols = ["relation", "relation_uri"] if "relation" in keys else [None]
    for i, rc in enumerate(rel_cols):
        conds = [f"c{i}.{ident(k_)} IS NOT DISTINCT FROM s.{ident(k_)}" for k_ in other]
        if rc:
            conds.append(f"c{i}.relation = s.{ident(rc)}")
        joins.append(f"LEFT JOIN cov c{i} ON {' AND '.join(conds)}")
        values.append(f"c{i}.v")
    joined = body(read_sql("ctxprior.covariates", "sql/join_covariate.sql"))
    try:
        with store.bounded(f"covariate view {view}"):  # a view from the file: bounded, named, never quoted
            # a hash join's rows come in any order
            store.con.register("_chi", chi.assign(_row=range(len(chi))))
            try:
                return store.df(joined.format(cov=cov_sql, values=", ".join(values), joins=" ".join(joins)))
            finally:
                store.con.unregister("_chi")
    except duckdb.Error as e:
        raise UserError(view_error(view, e)) from None
