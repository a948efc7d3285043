"""`ctxprior covariates add`: any CSV / Parquet table keyed by warehouse names or URIs.

The file is loaded by DuckDB as is into ``covdata_<name>`` (its own column types), validated
(key columns present, keys unique, at least one value column, at least one row matching the
warehouse), and exposed as ``cov_<name>``: one row per matching fact with the readable keys
(dataset, relation, entity, entity_kind, answer), the file's value columns, and the ids.
"""

from __future__ import annotations

import os

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import check_input
from ..sqlfiles import body, ident, path_sql, read_sql
from . import catalog

SQL = "ctxprior.covariates"
KEYS = ("dataset", "relation", "entity", "answer")
RESERVED = {
    "dataset",
    "relation",
    "entity",
    "entity_kind",
    "answer",
    "fact_id",
    "relation_id",
    "entity_id",
    "answer_id",
}


def _reader(path: str) -> str:
    lit = path_sql(path)  # exactly this file: glob characters in its name are not patterns
    n = path.lower()
    if n.endswith(".parquet"):
        return f"read_parquet({lit})"
    if n.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        return f"read_csv({lit}, header=true)"
    raise UserError(f"{path}: expected a .csv, .tsv or .parquet file")


def _condition(key: str, match: str) -> str:
    if key == "dataset":
        return "v.dataset = u.k_dataset"
    if key == "relation":
        return "(v.relation = u.k_relation OR v.relation_uri = u.k_relation)"
    col = {"entity": "entity", "answer": "answer"}[key]
    return f"v.{col}{'_uri' if match == 'uri' else ''} = u.k_{key}"


def _frame_source(data) -> tuple[object, str]:
    """A pandas DataFrame / Arrow table as an Arrow table and the sha256 of its Arrow IPC stream."""
    import hashlib

    import pyarrow as pa

    table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return table, hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def add_user_table(
    store,
    path,
    name: str,
    on: str,
    match: str = "name",
    replace: bool = False,
    description: str | None = None,
    source: str | None = None,
) -> dict:
    """Add a CSV / Parquet file (``path``) or an in-memory pandas DataFrame / Arrow table as
    covariate ``name``, joined on the key columns ``on`` (comma-separated). ``path`` may be a
    ``(copy, sha256)`` pair of ``sandbox.private_copies`` (what DuckDB reads), ``source`` then the
    path the user gave (what is recorded)."""
    catalog.check_name(name)
    frame, frame_sha, path = _source(path)
    if match not in ("name", "uri"):
        raise UserError(f"--match {match}: use name or uri")
    keys = _key_columns(on)
    catalog.dataset_id(store, None)  # the warehouse must have data
    sha = frame_sha if frame_sha is not None else sha256_file(path)  # None: a file, hashed here
    if _unchanged(store, name, sha, keys, match, replace):
        return {"unchanged": True, "view": catalog.view_name(name), "sha256": sha}
    con = store.con
    _load(con, frame, path)
    try:
        values = _value_columns(con, path, keys)
        n_rows, nulls = _check_rows(con, path, keys)
        matched, unmatched_rows = _match_keys(con, path, keys, match, n_rows)
        source_path = os.path.abspath(source or path) if frame is None else path
        n_facts = _store(store, name, keys, values, match, source_path, sha, description, n_rows, matched)
    finally:
        con.execute("DROP TABLE IF EXISTS _cov_user")
        con.execute("DROP TABLE IF EXISTS _cov_keys")
    return {
        "unchanged": False,
        "view": catalog.view_name(name),
        "sha256": sha,
        "n_rows": int(n_rows),
        "n_matched": int(matched),
        "n_null_keys": int(nulls),
        "n_facts": int(n_facts),
        "value_columns": values,
        "unmatched": [dict(zip(keys, r)) for r in unmatched_rows],
    }


def _source(path) -> tuple[object | None, str | None, str]:
    """(Arrow table, its sha256, a label) for an in-memory table; (None, None, path) for an existing file."""
    if isinstance(path, tuple):  # a private copy and the sha256 of its bytes (sandbox.private_copies)
        return None, path[1], path[0]
    if not isinstance(path, (str, os.PathLike)):
        frame, sha = _frame_source(path)
        return frame, sha, f"<{type(path).__name__}>"
    check_input(path)  # never the warehouse (a link of it), never a FIFO: ctxprior/inputs.py
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file")
    return None, None, os.fspath(path)


def _key_columns(on: str) -> list[str]:
    """The key columns of ``--on`` (comma-separated), checked."""
    keys = [k.strip() for k in on.split(",") if k.strip()]
    bad = [k for k in keys if k not in KEYS]
    if not keys or bad or len(set(keys)) != len(keys):
        raise UserError(
            f"--on {on}: use key columns from {','.join(KEYS)} (each once), e.g. --on entity,answer"
        )
    if not set(keys) & {"entity", "answer", "relation"}:
        raise UserError(f"--on {on}: include at least one of entity, answer, relation")
    return keys


def _unchanged(store, name: str, sha: str, keys: list[str], match: str, replace: bool) -> bool:
    """True when covariate ``name`` already holds this source with these keys and ``replace`` is off;
    fails when the name belongs to another kind, or to another source and ``replace`` is off."""
    existing = catalog.get(store, name)
    if existing is None:
        return False
    if existing["kind"] != "user":
        raise UserError(f"--name {name}: already used by a {existing['kind']} covariate; choose another name")
    same = (
        existing["source_sha256"] == sha
        and existing["key_columns"] == ",".join(keys)
        and f'"match": "{match}"' in existing["params_json"]
    )
    if same and not replace:
        return True
    if not replace:
        raise UserError(
            f"--name {name}: already added from another file or with other keys; pass --replace to replace it"
        )
    return False


def _load(con, frame, path: str) -> None:
    """The table, as is, into the temp table ``_cov_user``."""
    if frame is not None:
        con.register("_cov_frame", frame)
        try:
            con.execute("CREATE OR REPLACE TEMP TABLE _cov_user AS SELECT * FROM _cov_frame")
        finally:
            con.unregister("_cov_frame")
    else:
        try:
            con.execute(f"CREATE OR REPLACE TEMP TABLE _cov_user AS SELECT * FROM {_reader(path)}")
        except UserError:
            raise
        except Exception as e:
            raise UserError(f"{path}: cannot read it ({str(e).splitlines()[0]})") from None


def _value_columns(con, path: str, keys: list[str]) -> list[str]:
    """The columns of ``_cov_user`` besides the keys; fails on a missing key or no / reserved value columns."""
    cols = [r[0] for r in con.execute("SELECT * FROM _cov_user LIMIT 0").description]
    missing = [k for k in keys if k not in cols]
    if missing:
        raise UserError(
            f"{path}: no column {', '.join(missing)} (it has {', '.join(cols)}); "
            "rename the column or change --on"
        )
    values = [c for c in cols if c not in keys]
    if not values:
        raise UserError(f"{path}: no value columns besides the keys {', '.join(keys)}")
    clash = [c for c in values if c.lower() in RESERVED]
    if clash:
        raise UserError(
            f"{path}: column {', '.join(clash)} clashes with the view's key columns; "
            "rename it or add it to --on"
        )
    return values


def _check_rows(con, path: str, keys: list[str]) -> tuple[int, int]:
    """The number of rows of ``_cov_user`` and of rows with a NULL key; fails on no rows or duplicate keys."""
    n_rows = con.execute("SELECT count(*) FROM _cov_user").fetchone()[0]
    if not n_rows:
        raise UserError(f"{path}: the table has no rows")
    kl = ", ".join(ident(k) for k in keys)
    any_null = " OR ".join(f"{ident(k)} IS NULL" for k in keys)
    nulls = con.execute(f"SELECT count(*) FROM _cov_user WHERE {any_null}").fetchone()[0]
    dups = con.execute(
        f"SELECT {kl}, count(*) FROM _cov_user GROUP BY ALL HAVING count(*) > 1 LIMIT 3"
    ).fetchall()
    if dups:
        ex = "; ".join(", ".join(f"{k}={v!r}" for k, v in zip(keys, d[:-1])) for d in dups)
        raise UserError(
            f"{path}: keys ({', '.join(keys)}) are not unique, e.g. {ex}; "
            "aggregate the rows or add a key column to --on"
        )
    return n_rows, nulls


def _match_keys(con, path: str, keys: list[str], match: str, n_rows: int) -> tuple[int, list[tuple]]:
    """The number of rows whose keys match a warehouse fact, and the keys of the others (in file order)
    via the temp table ``_cov_keys``; fails when no row matches."""
    keysel = ", ".join(f"CAST({ident(k)} AS VARCHAR) AS {ident('k_' + k)}" for k in keys)
    cond = " AND ".join(_condition(k, match) for k in keys)
    con.execute(body(read_sql(SQL, "sql/user_keys.sql")).format(keys=keysel))
    matched = con.execute(body(read_sql(SQL, "sql/user_keys_matched.sql")).format(cond=cond)).fetchone()[0]
    unmatched_rows = con.execute(
        body(read_sql(SQL, "sql/user_keys_unmatched.sql")).format(
            keys=", ".join(ident("k_" + k) for k in keys), cond=cond
        )
    ).fetchall()
    if not matched:
        raise UserError(
            f"{path}: none of its {n_rows} rows matches a warehouse {'/'.join(keys)} by "
            f"{match}; check --on and --match (name|uri)"
        )
    return matched, unmatched_rows


def _store(
    store,
    name: str,
    keys: list[str],
    values: list[str],
    match: str,
    source_path: str,
    sha: str,
    description: str | None,
    n_rows: int,
    matched: int,
) -> int:
    """One transaction: ``_cov_user`` as ``covdata_<name>``, the catalog row, the view; returns the view's rows."""
    table = f"covdata_{name}"
    with store.transaction():
        store.execute(f"DROP VIEW IF EXISTS {ident(catalog.view_name(name))}")
        store.execute(f"DROP TABLE IF EXISTS {ident(table)}")
        store.execute(f"CREATE TABLE {ident(table)} AS SELECT * FROM _cov_user")
        catalog.upsert(
            store,
            name=name,
            kind="user",
            dataset_id=None,
            key_columns=keys,
            value_columns=values,
            params={"match": match, "on": keys},
            source_path=source_path,
            source_sha256=sha,
            description=description,
            n_rows=int(n_rows),
            n_matched=int(matched),
            data_table=table,
        )
        catalog.create_view(store, name, _view_sql(table, keys, values, match))
        n_facts = store.scalar(f"SELECT count(*) FROM {ident(catalog.view_name(name))}")
    return n_facts


def _view_sql(table: str, keys: list[str], values: list[str], match: str) -> str:
    """The view's SELECT: each matching fact's readable keys, the table's value columns, the ids."""
    view_cond = " AND ".join(
        _condition(k, match).replace(f"u.k_{k}", f"CAST(u.{ident(k)} AS VARCHAR)") for k in keys
    )
    return body(read_sql(SQL, "sql/user_view.sql")).format(
        values=", ".join("u." + ident(c) for c in values), table=ident(table), cond=view_cond
    )
