"""A warehouse from elsewhere is data, not code: its catalog holds only ctxprior's own objects.

A ``.duckdb`` file carries SQL besides its rows: views, macros (a persisted ``to_json`` macro
shadows DuckDB's own function in every query that calls it), types, sequences, schemas. Two
mechanisms keep that SQL from doing harm:

- **the sandbox** (``sandbox.sandbox``): every connection runs with DuckDB's external access off
  and its configuration locked, so no object of the file can read a file on this machine,
  whatever it calls (docs/write-protocol.md, "The sandbox");
- **the catalog check** (``foreign_objects``, on every open): the package's own objects are those
  its declarations make (the tables of ``schema/tables.sql`` and the view files, built once per process in an
  in-memory database: ``package_catalog``) plus the covariate views the ``covariate`` table
  records. Any other view, macro, type, sequence or schema is dropped on a read-write open
  (``refuse_or_drop``, with a note on stderr) and refuses a read-only open in one line (nothing
  is resolved, nothing written).

A package view whose text differs from the package's (or that is missing) is recreated on a
read-write open and shadowed by the package's text as a TEMP view on a read-only one
(``check_views``; DuckDB resolves a name to the temporary view first).

DuckDB's text of a view can differ between the view as created and the same view read back from
the file: DuckDB 1.5 writes ``CAST(x AS "DOUBLE")`` and ``DECIMAL(10, 2)`` for a view created in
this process but ``CAST(x AS DOUBLE)`` and ``DECIMAL(10,2)`` for one loaded from a file (DuckDB 2
writes the same text for both). Were only the created text the package's, every read-write open on
DuckDB 1.5 would find those views changed and remake them: a write on every open. So the package's
text of a view is both: as created, and as stored (``package_catalog`` also builds the views in a
private temporary file and reads them back).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import duckdb

from ..errors import UserError
from ..schema.declared import ddl_statements, table_names, view_scripts, views_digest
from ..sqlfiles import ident, literal, read_sql, split_statements

Store = Any  # a storage.store.Store (not imported: store imports this module)

SQL = "ctxprior.storage"
_PACKAGE: dict[str, tuple[list[tuple[str, str]], set[tuple[str, str, str]]]] = {}
_STORED: dict[str, dict[str, str]] = {}

# how each kind of object is dropped (kind as sql/catalog_objects.sql names it)
_DROP = {
    "view": "DROP VIEW IF EXISTS {name}",
    "macro": "DROP MACRO IF EXISTS {name}",
    "table macro": "DROP MACRO TABLE IF EXISTS {name}",
    "type": "DROP TYPE IF EXISTS {name}",
    "sequence": "DROP SEQUENCE IF EXISTS {name}",
}


def _make_declared(con) -> None:
    """Create the package's tables and views on ``con`` (its current database)."""
    for ddl in ddl_statements():
        con.execute(ddl)
    for _name, text in view_scripts():
        for stmt in split_statements(text):
            con.execute(stmt)


def package_catalog() -> tuple[list[tuple[str, str]], set[tuple[str, str, str]]]:
    """What the package's declarations make, built in an in-memory database: (name, DuckDB's text)
    of its views in creation order, and every (kind, schema, name) of its catalog besides tables."""
    key = views_digest()
    if key not in _PACKAGE:
        con = duckdb.connect(":memory:")
        try:
            _make_declared(con)
            views = [tuple(r) for r in con.execute(read_sql(SQL, "sql/view_texts.sql")).fetchall()]
            objects = {tuple(r) for r in con.execute(read_sql(SQL, "sql/catalog_objects.sql")).fetchall()}
            _PACKAGE[key] = (views, objects)  # type: ignore[assignment]
        finally:
            con.close()
    return _PACKAGE[key]


def package_views() -> list[tuple[str, str]]:
    """(name, DuckDB's text) of the package's views in creation order."""
    return package_catalog()[0]


def _stored_view_texts() -> dict[str, str]:
    """name -> DuckDB's text of each package view as read back from a file (see the module
    docstring): the package's tables and views made in a private temporary file, attached to an
    in-memory database, detached and attached again read-only. Empty when no temporary file can be
    made (then only the created text counts, as before)."""
    key = views_digest()
    if key not in _STORED:
        texts: dict[str, str] = {}
        con = duckdb.connect(":memory:")
        try:
            with tempfile.TemporaryDirectory(prefix="ctxprior-views-") as tmp:
                f = literal(os.path.join(tmp, "package.duckdb"))
                con.execute(f"ATTACH {f} AS package")
                con.execute("USE package")
                _make_declared(con)
                con.execute("USE memory")
                con.execute("DETACH package")
                con.execute(f"ATTACH {f} AS package (READ_ONLY)")
                con.execute("USE package")
                texts = dict(con.execute(read_sql(SQL, "sql/view_texts.sql")).fetchall())
                con.execute("USE memory")
                con.execute("DETACH package")
        except (duckdb.Error, OSError):
            texts = {}
        finally:
            con.close()
        _STORED[key] = texts
    return _STORED[key]


def is_package_view_text(name: str, text: str | None, created: str) -> bool:
    """``text`` (a file's text of view ``name``) is the package's: ``created``, DuckDB's text of the
    view as made, or DuckDB's text of it as read back from a file (see the module docstring)."""
    return text is not None and (text == created or text == _stored_view_texts().get(name))


def _covariate_views(store: Store) -> set[str]:
    if not store.scalar(read_sql(SQL, "sql/has_covariate_table.sql")):
        return set()
    try:
        return {r[0] for r in store.query(read_sql(SQL, "sql/covariate_views.sql"))}
    except duckdb.Error:  # a covariate table of another shape: it records no view
        return set()


def foreign_objects(store: Store) -> list[tuple[str, str, str]]:
    """(kind, schema, name) of every object of ``store``'s catalog besides tables that ctxprior
    does not make (see the module docstring)."""
    own = package_catalog()[1]
    covariates = _covariate_views(store)
    out = []
    for kind, schema, name in store.query(read_sql(SQL, "sql/catalog_objects.sql")):
        if (kind, schema, name) in own or (kind == "view" and schema == "main" and name in covariates):
            continue
        out.append((kind, schema, name))
    return out


def _named(objects: list[tuple[str, str, str]]) -> str:
    names = [f"{k} {n if s == 'main' or k == 'schema' else s + '.' + n}" for k, s, n in objects]
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def refuse_or_drop(store: Store, foreign: list[tuple[str, str, str]]) -> None:
    """The ``foreign`` objects of ``store``: on a read-only open a UserError naming them (they are
    never resolved, the file is not written); on a read-write one dropped in one transaction
    (schemas with all they hold), with a note on stderr; a UserError when one cannot be dropped."""
    if store.read_only:
        raise UserError(
            f"{store.path}: holds objects ctxprior does not make ({_named(foreign)}); a ctxprior "
            "command that writes to the warehouse drops them, or drop them with duckdb"
        )
    schemas = {n for k, _s, n in foreign if k == "schema"}
    with store.transaction():
        for kind, schema, name in foreign:
            if kind == "schema" or schema in schemas:
                continue
            try:
                store.execute(_DROP[kind].format(name=f"{ident(schema)}.{ident(name)}"))
            except duckdb.Error as e:
                raise UserError(
                    f"{store.path}: cannot drop {kind} {name}, which ctxprior does not make "
                    f"({str(e).splitlines()[0]}); drop it with duckdb"
                ) from None
        for name in sorted(schemas):
            store.execute(f"DROP SCHEMA IF EXISTS {ident(name)} CASCADE")
    print(f"note: {store.path}: dropped what ctxprior does not make: {_named(foreign)}", file=sys.stderr)


def check_tables(store: Store) -> None:
    """Before a read-write open writes anything: each name ctxprior writes to holds what ctxprior
    makes there. A table where a package view belongs (the view could not be made: a traceback on
    the next write) and a package table with a CHECK or FOREIGN KEY constraint (ctxprior declares
    none; its inserts would fail on it) refuse the open in one line naming the table. Data is
    never dropped to repair them: the user renames the table, or rebuilds the warehouse."""
    tables = set(store.table_names())
    taken = sorted(tables & {name for name, _ in package_views()})
    if taken:
        raise UserError(
            f"{store.path}: table {taken[0]} has the name of a view ctxprior makes; rename or drop it "
            f"with duckdb (ALTER TABLE {ident(taken[0])} RENAME TO ...), then rerun"
        )
    own = set(table_names())
    for name, kind in store.query(read_sql(SQL, "sql/foreign_constraints.sql")):
        if name in own:
            raise UserError(
                f"{store.path}: table {name} carries a {kind} constraint ctxprior does not make; "
                "rebuild the warehouse (`ctxprior export parquet DIR`, then `ctxprior --db NEW "
                "import parquet DIR`) or remove the constraint with duckdb"
            )


def check_views(store: Store) -> None:
    """Make the package's views of ``store`` the package's own (see the module docstring)."""
    actual = dict(store.query(read_sql(SQL, "sql/view_texts.sql")))
    expected = package_views()
    if all(actual.get(name) == text for name, text in expected) or all(
        is_package_view_text(name, actual.get(name), text) for name, text in expected
    ):
        return
    if store.read_only:
        _shadow(store, expected, actual)
    else:
        with store.transaction():
            store.create_views()
            store.execute("DELETE FROM meta WHERE key = 'views_sha256'")
            store.execute("INSERT INTO meta VALUES ('views_sha256', ?)", [views_digest()])


def _shadow(store: Store, expected: list[tuple[str, str]], actual: dict[str, str]) -> None:
    """The package's views as TEMP views over a read-only file's. A view whose tables the file
    lacks (an older warehouse) is left out, unless the file holds a different view of that name."""
    for name, text in expected:
        try:
            store.con.execute("CREATE OR REPLACE TEMP VIEW " + text.removeprefix("CREATE VIEW "))
        except duckdb.Error:
            if name in actual and not is_package_view_text(name, actual[name], text):
                raise UserError(
                    f"{store.path}: view {name} is not the one ctxprior makes; a command that writes "
                    "to the warehouse (e.g. `ctxprior analyze`) rebuilds its views"
                ) from None
