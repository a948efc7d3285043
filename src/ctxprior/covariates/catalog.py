"""The covariate catalog (`covariate` table) and the per-covariate views `cov_<name>`."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import UserError
from ..sqlfiles import body, ident, literal, read_sql
from ..storage.store import utcnow
from ..version import __version__

NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,58}$")
KINDS = ("cooccurrence", "kg_degree", "fact_degree", "user", "known")


SQL = "ctxprior.covariates"


def check_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise UserError(
            f"--name {name!r}: use lower-case letters, digits and _ (start with a letter, "
            "at most 59 characters), e.g. pile_cooc; the view will be cov_<name>"
        )
    return name


def view_name(name: str) -> str:
    return f"cov_{name}"


def get(store, name: str) -> dict | None:
    """The catalog row of ``name`` as a dict, or None."""
    if "covariate" not in store.table_names():
        return None
    res = store.execute("SELECT * FROM covariate WHERE name = ?", [name])
    row = res.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in res.description], row))


def dataset_id(store, name: str | None) -> int | None:
    """Resolve --dataset NAME (None: all datasets). UserError when unknown or the warehouse is empty."""
    names = [r[0] for r in store.query("SELECT name FROM dataset ORDER BY dataset_id")]
    if not names:
        raise UserError(
            f"warehouse {store.path} has no dataset; ingest one first (e.g. `ctxprior ingest demo`)"
        )
    if name is None:
        return None
    did = store.scalar("SELECT dataset_id FROM dataset WHERE name = ?", [name])
    if did is None:
        raise UserError(f"--dataset {name}: no such dataset; the warehouse has {', '.join(names)}")
    return int(did)


def upsert(
    store,
    *,
    name: str,
    kind: str,
    dataset_id: int | None,
    key_columns: list[str],
    value_columns: list[str],
    params: dict[str, Any],
    status: str = "complete",
    source_path: str | None = None,
    source_sha256: str | None = None,
    description: str | None = None,
    n_rows: int | None = None,
    n_matched: int | None = None,
    data_table: str | None = None,
) -> int:
    """Insert or update the catalog row of ``name``; returns its covariate_id. Call inside a transaction."""
    assert kind in KINDS
    now = utcnow()
    row = get(store, name)
    values = dict(
        kind=kind,
        dataset_id=dataset_id,
        view_name=view_name(name),
        key_columns=",".join(key_columns),
        value_columns=",".join(value_columns),
        source_path=source_path,
        source_sha256=source_sha256,
        description=description,
        params_json=json.dumps(params, sort_keys=True),
        status=status,
        n_rows=n_rows,
        n_matched=n_matched,
        data_table=data_table,
        ctxprior_version=__version__,
        updated_at=now,
    )
    if row is None:
        cid = store.next_id("covariate", "covariate_id")
        store.insert_arrow(
            "covariate",
            {k: [v] for k, v in dict(covariate_id=cid, name=name, added_at=now, **values).items()},
        )
        return cid
    sets = ", ".join(f"{ident(k)} = ?" for k in values)
    store.execute(
        f"UPDATE covariate SET {sets} WHERE covariate_id = ?", [*values.values(), row["covariate_id"]]
    )
    return int(row["covariate_id"])


def create_view(store, name: str, select_sql: str) -> None:
    store.execute(f"CREATE OR REPLACE VIEW {ident(view_name(name))} AS\n{select_sql}")


def list_covariates(store):
    """The catalog as a DataFrame (readable columns)."""
    return store.df(read_sql(SQL, "sql/list_covariates.sql"))


# -- degrees stored on fact rows by the yago_qec ingest ---------------------------------------------
FACT_DEGREE_COLUMNS = ("predicate_degree", "uri_degree", "namesake_degree", "namesake_num_uris")


def _sanitize(name: str) -> str:
    s = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")
    if not s or not s[0].isalpha():
        s = "d_" + s
    return s[:50]


def register_fact_degrees(store, dataset_id: int) -> str | None:
    """Register the yago_qec degrees on ``fact`` rows of a dataset as covariate ``<dataset>_degree``.

    Creates/updates the catalog row and the view ``cov_<dataset>_degree`` (one row per fact:
    dataset, relation, entity, entity_kind, answer, predicate_degree, uri_degree,
    namesake_degree, namesake_num_uris, entity_uri, fact_id). ``predicate_degree`` is the paper's
    relation-dependent degree delta(e,q). Safe to call inside the ingest transaction; returns
    the covariate name, or None (and does nothing) when no fact of the dataset has a degree.
    """
    row = store.execute(
        "SELECT name, source_path, source_sha256 FROM dataset WHERE dataset_id = ?", [dataset_id]
    ).fetchone()
    if row is None:
        return None
    n = store.scalar(read_sql(SQL, "sql/fact_degree_count.sql"), [dataset_id])
    if not n:
        return None
    n_facts = store.scalar(
        "SELECT count(*) FROM fact f JOIN relation r USING (relation_id) WHERE r.dataset_id = ?", [dataset_id]
    )
    name = f"{_sanitize(row[0])}_degree"
    with store.transaction():
        existing = get(store, name)
        if existing is not None and existing["kind"] != "fact_degree":
            return None  # never overwrite a user's covariate of the same name
        upsert(
            store,
            name=name,
            kind="fact_degree",
            dataset_id=dataset_id,
            key_columns=["dataset", "relation", "entity", "answer"],
            value_columns=list(FACT_DEGREE_COLUMNS),
            params={"source": "fact columns (yago_qec)"},
            source_path=row[1],
            source_sha256=row[2],
            description=f"YAGO degrees from the {row[0]} dataset file "
            "(entity_uri_to_predicate_degree = delta(e,q), entity_uri_to_degree, "
            "entity_namesake_to_degree, entity_namesake_to_num_uris)",
            n_rows=int(n_facts),
            n_matched=int(n),
        )
        create_view(
            store,
            name,
            body(read_sql(SQL, "sql/fact_degree_view.sql")).format(dataset_id=literal(int(dataset_id))),
        )
    return name
