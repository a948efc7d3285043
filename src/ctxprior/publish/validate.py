"""An import or pull folder is checked completely before a warehouse is opened (or created).

``validate_folder`` reads the folder's Parquet files with an in-memory DuckDB, never the
warehouse, and raises a one-line UserError naming the table, column or file for:

- a table ctxprior does not know (``pull``: only the schema's tables and the covariate tables the
  folder's own catalog names; ``import parquet``: a user's own table too, if its name is a plain
  one that no ctxprior table or view uses);
- a column the manifest lists that a file lacks, or that ctxprior's table lacks;
- values that do not cast to the table's column type, or NULLs where the table needs a value;
- a row count other than the manifest's;
- two rows with the same key (the primary key, or for the score tables without one, the key that
  makes a score row: ``NATURAL_KEYS``).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from ..errors import UserError
from ..schema import metadata
from ..sqlfiles import body, ident, literal, path_sql, read_sql
from ..storage.store import Store, ddl_statements

# the rows of these tables have no primary key in the DDL, but one row per key
NATURAL_KEYS = {
    "persuasion": ("run_id", "query_form_id", "fact_id", "context_id"),
    "reliance": ("run_id", "query_form_id", "fact_id", "context_id"),
    "persuasion_layer": ("run_id", "query_form_id", "fact_id", "context_id", "layer"),
    "prompt_topk": ("run_id", "query_form_id", "fact_id", "context_id", "rank"),
    "generation": ("run_id", "query_form_id", "fact_id", "context_id"),
}
_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
SQL = "ctxprior.publish"


def _own_types(mem: Store) -> dict[str, dict[str, str]]:
    """table -> {column: type as DuckDB spells it} of the schema created in ``mem``."""
    out: dict[str, dict[str, str]] = {}
    for t, n, ty in mem.query(read_sql(SQL, "sql/all_columns.sql")):
        out.setdefault(t, {})[n] = ty
    return out


_TYPE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ]*(\(\s*\d+\s*(,\s*\d+\s*)?\))?(\[\d*\])*$")


def _safe_type(type_: str, table: str, folder: Path) -> str:
    """A column type from a manifest, used in CREATE TABLE: plain type names only (no SQL)."""
    if not isinstance(type_, str) or not _TYPE_RE.match(type_):
        raise UserError(
            f"{folder}: table {table} has a column of type {type_!r} that ctxprior cannot "
            "recreate; create the table yourself, then import with --merge"
        )
    return type_


def _files(files: list[str]) -> str:
    return "[" + ", ".join(path_sql(f) for f in files) + "]"  # exactly these files, no globbing


def validate_folder(folder: Path, manifest: dict[str, Any], strict: bool) -> None:
    """UserError unless every table of ``manifest`` in ``folder`` can be imported as it is."""
    tables = [e for e in manifest["tables"] if e.get("kind") == "table"]
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET temp_directory = {literal(tmp)}")
            for ddl in ddl_statements():
                con.execute(ddl)
            mem = Store(":memory:", con, read_only=False)
            own = _own_types(mem)
            allowed = _catalog_tables(mem, folder, tables) if strict else set()
            for e in tables:
                _check_name(folder, e["name"], allowed, strict)
                files = [str(folder / f["path"]) for f in e.get("files", [])]
                types = own.get(e["name"]) or {c["name"]: c["type"] for c in e["columns"]}
                _check_columns(mem, folder, e, files, types)
                if files:
                    _check_values(mem, folder, e, files, types)
                    _check_keys(mem, folder, e["name"], files)
        finally:
            con.close()


def _catalog_tables(mem: Store, folder: Path, tables: list[dict]) -> set[str]:
    """The data tables the folder's ``covariate`` catalog names (user covariate tables)."""
    cov = next((e for e in tables if e["name"] == "covariate" and e.get("files")), None)
    if cov is None:
        return set()
    files = [str(folder / f["path"]) for f in cov["files"]]
    try:
        rows = mem.query(f"SELECT DISTINCT data_table FROM read_parquet({_files(files)})")
    except duckdb.Error as err:
        raise UserError(f"{folder}: table covariate cannot be read ({str(err).splitlines()[0]})") from None
    return {r[0] for r in rows if r[0]}


def _check_name(folder: Path, name: str, allowed: set[str], strict: bool) -> None:
    if name in metadata.tables:
        return
    if strict and name not in allowed:
        raise UserError(
            f"{folder}: table {name} is not a ctxprior table (a pull loads the schema's tables and the "
            "covariate tables its catalog names); nothing was written"
        )
    from ..storage.trust import package_views

    views = {v for v, _text in package_views()}
    if not isinstance(name, str) or not _PLAIN.fullmatch(name) or name in views or name.startswith("cov_"):
        raise UserError(
            f"{folder}: table {name!r} is not a plain table name, or names a ctxprior view; nothing was written"
        )


def _check_columns(mem: Store, folder: Path, e: dict, files: list[str], types: dict[str, str]) -> None:
    name = e["name"]
    for c in e["columns"]:
        if c["name"] not in types:
            raise UserError(
                f"{folder}: table {name} lists column {c['name']}, which ctxprior's {name} lacks; "
                "import with the ctxprior version that exported it"
            )
    if not files:
        return
    try:
        have = {r[0] for r in mem.query(f"DESCRIBE SELECT * FROM read_parquet({_files(files)})")}
    except duckdb.Error as err:
        raise UserError(
            f"{folder}: table {name}: its files cannot be read ({str(err).splitlines()[0]})"
        ) from None
    for c in e["columns"]:
        if c["name"] not in have:
            raise UserError(
                f"{files[0]}: column {c['name']} of table {name} (listed in manifest.json) is missing"
            )


def _check_values(mem: Store, folder: Path, e: dict, files: list[str], types: dict[str, str]) -> None:
    """Rows as the manifest says, every value castable to its column's type, no NULL where the
    table's column is NOT NULL; one scan."""
    name, cols = e["name"], [c["name"] for c in e["columns"]]
    table = metadata.tables.get(name)
    required = {c.name for c in table.columns if not c.nullable} if table is not None else set()
    checks = ", ".join(
        f"count(*) FILTER (WHERE {ident(c)} IS NOT NULL AND TRY_CAST({ident(c)} AS "
        f"{_safe_type(types[c], name, folder)}) IS NULL)"
        for c in cols
    )
    nulls = ", ".join(f"count(*) FILTER (WHERE {ident(c)} IS NULL)" for c in cols)
    sql = body(read_sql(SQL, "sql/validate_values.sql")).format(
        checks=checks, nulls=nulls, files=_files(files)
    )
    try:
        row = mem.query(sql)[0]
    except duckdb.Error as err:
        raise UserError(
            f"{folder}: table {name}: its files cannot be read ({str(err).splitlines()[0]})"
        ) from None
    n, bad, null = row[0], row[1 : 1 + len(cols)], row[1 + len(cols) :]
    for c, k in zip(cols, bad):
        if k:
            raise UserError(
                f"{folder}: table {name} column {c}: {k} values are not {types[c]}; "
                "the folder was changed, export it again"
            )
    for c, k in zip(cols, null):
        if k and c in required:
            raise UserError(f"{folder}: table {name} column {c}: {k} NULL values where a value is required")
    if n != int(e.get("rows", n)):
        raise UserError(
            f"{folder}: table {name} has {n} rows, manifest.json says {e['rows']}; export it again"
        )


def _check_keys(mem: Store, folder: Path, name: str, files: list[str]) -> None:
    table = metadata.tables.get(name)
    keys = [c.name for c in table.primary_key.columns] if table is not None else []
    keys = keys or list(NATURAL_KEYS.get(name, ()))
    if not keys:
        return
    sql = body(read_sql(SQL, "sql/validate_keys.sql")).format(
        keys=", ".join(ident(k) for k in keys), files=_files(files)
    )
    try:
        dup = mem.query(sql)
    except duckdb.Error as err:
        raise UserError(
            f"{folder}: table {name}: its files cannot be read ({str(err).splitlines()[0]})"
        ) from None
    if dup:
        key = ", ".join(f"{k}={v}" for k, v in zip(keys, dup[0]))
        raise UserError(
            f"{folder}: table {name} has {dup[0][-1]} rows with the same key ({key}); "
            "the folder was changed, export it again"
        )


__all__ = ["NATURAL_KEYS", "validate_folder"]
