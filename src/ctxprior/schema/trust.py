"""A warehouse from elsewhere is data, not code: its views are checked before anything reads them.

A ``.duckdb`` file carries its views' SQL, and ``meta.views_sha256`` is only a claim the file makes
about them: a file made (or edited) elsewhere can hold a ``v_susceptibility`` that reads
``read_text('secret.txt')``, which an export, a publication, a report or ``ctxprior sql`` would then
run. ``check_views`` compares DuckDB's text of every view in the file with the text of the
package's own views (``views/*.sql``, created once per process in an in-memory database):

- a package view whose text differs (or that is missing) is recreated from the package on a
  read-write open, and shadowed by the package's text as a TEMP view on a read-only one (the file
  is not written; DuckDB resolves a name to the temporary view first);
- any other view (``cov_<name>`` covariate views) may read only the warehouse: one that calls a
  table function (``read_text``, ``read_csv``, ``glob``, ``query``, ...) or cannot be parsed is
  refused in one line.
"""

from __future__ import annotations

import json

import duckdb

from ..errors import UserError
from ..sqlfiles import read_sql
from .store import Store, ddl_statements, view_scripts, views_digest

_PACKAGE: dict[str, list[tuple[str, str]]] = {}


def package_views() -> list[tuple[str, str]]:
    """(name, DuckDB's text) of the package's views in creation order."""
    key = views_digest()
    if key not in _PACKAGE:
        con = duckdb.connect(":memory:")
        try:
            mem = Store(":memory:", con, read_only=False)
            for ddl in ddl_statements():
                con.execute(ddl)
            for _name, text in view_scripts():
                mem.run_script(text)
            _PACKAGE[key] = [
                tuple(r) for r in con.execute(read_sql("ctxprior.schema", "sql/view_texts.sql")).fetchall()
            ]
        finally:
            con.close()
    return _PACKAGE[key]


def _table_functions(node, found: list[str]) -> list[str]:
    if isinstance(node, dict):
        if node.get("type") == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            found.append(str(fn.get("function_name") or "a table function"))
        for v in node.values():
            _table_functions(v, found)
    elif isinstance(node, list):
        for v in node:
            _table_functions(v, found)
    return found


def _reaches_out(con: duckdb.DuckDBPyConnection, view_sql: str) -> str | None:
    """What makes view text ``view_sql`` read outside the warehouse (a table function, or text that
    does not parse as a plain SELECT), or None."""
    head, sep, query = view_sql.partition(" AS ")
    if not sep or not head.startswith("CREATE VIEW "):
        return "a definition that is not a plain view"
    ((serialized,),) = con.execute("SELECT json_serialize_sql(?)", [query]).fetchall()
    tree = json.loads(serialized)
    if tree.get("error"):
        return "a definition that does not parse"
    fns = _table_functions(tree, [])
    return f"the table function {fns[0]}" if fns else None


def check_views(store: Store) -> None:
    """Make every view of ``store`` safe to read (see the module docstring); UserError for a
    foreign view that reads outside the warehouse."""
    actual = dict(store.query(read_sql("ctxprior.schema", "sql/view_texts.sql")))
    expected = package_views()
    own = dict(expected)
    for name, text in actual.items():
        if name not in own:
            why = _reaches_out(store.con, text)
            if why:
                raise UserError(
                    f"{store.path}: view {name} is not one ctxprior makes and calls {why}; "
                    "drop it (DROP VIEW in duckdb) before using this warehouse with ctxprior"
                )
    if all(actual.get(name) == text for name, text in expected):
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
            if name in actual and actual[name] != text:
                raise UserError(
                    f"{store.path}: view {name} is not the one ctxprior makes; a command that writes "
                    "to the warehouse (e.g. `ctxprior analyze`) rebuilds its views"
                ) from None
