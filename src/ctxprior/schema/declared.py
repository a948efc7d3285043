"""What the package declares its warehouse to be: the tables as DuckDB DDL (``tables.sql``,
generated from the SQLAlchemy tables of ``base.metadata``), and the view files (``views/*.sql``)
with their digest and their column meanings. ``storage`` creates them, ``storage.trust`` tells
the package's own objects of a file from the others by building them, and the dataset card reads
the meanings (``view_meanings``).

``tables.sql`` is made from the SQLAlchemy declarations (``compiled_ddl``) by
``python scripts/docs_tables.py --update``, and ``tests/test_declared.py`` checks that it makes the
same tables as they do. Opening a warehouse reads the file, so no command that opens one imports
SQLAlchemy for its DDL (a read-only command imports none at all)."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources

TABLES_SQL = "tables.sql"
_TABLE = re.compile(r"CREATE TABLE (\w+) \(")


@functools.cache
def dialect():
    """SQLAlchemy's DuckDB dialect, positional parameters (made once: every SQLAlchemy statement
    a writer runs is compiled with it)."""
    from duckdb_engine import Dialect

    return Dialect(paramstyle="qmark")


def compiled_ddl() -> list[str]:
    """CREATE TABLE statements for every table, in dependency order, compiled by SQLAlchemy from the
    declarations (what ``tables.sql`` holds).

    Ids are assigned by ctxprior, so no column autoincrements. Foreign keys stay in the
    SQLAlchemy metadata (documentation, dataset card, integrity tests) but are not emitted:
    DuckDB implements an UPDATE of a referenced row as delete+insert and would refuse e.g.
    marking a run done once score rows point at it.
    """
    from sqlalchemy.schema import CreateTable

    from . import tables

    d = dialect()
    out = []
    for t in tables().sorted_tables:
        for c in t.primary_key.columns:
            c.autoincrement = False
        out.append(str(CreateTable(t, include_foreign_key_constraints=[]).compile(dialect=d)).strip())
    return out


def tables_text(statements: list[str]) -> str:
    """The text of ``tables.sql`` for ``statements``: a header, then each statement and a ``;``."""
    head = (
        "-- The warehouse's tables as DuckDB DDL, in dependency order. Generated from the SQLAlchemy\n"
        "-- tables of ctxprior/schema/*.py by `python scripts/docs_tables.py --update`; do not edit.\n"
    )
    tidy = ["\n".join(line.rstrip().replace("\t", "    ") for line in s.splitlines()) for s in statements]
    return head + "".join(f"\n{s};\n" for s in tidy)


@functools.cache
def ddl_statements() -> tuple[str, ...]:
    """The CREATE TABLE statements of ``tables.sql``, in dependency order."""
    from ..sqlfiles import split_statements

    text = resources.files(__package__).joinpath(TABLES_SQL).read_text(encoding="utf-8")
    return tuple(s.strip().rstrip(";").strip() for s in split_statements(text) if _TABLE.search(s))


def table_names() -> list[str]:
    """The tables' names, in the order of ``ddl_statements``."""
    return [_TABLE.search(s).group(1) for s in ddl_statements()]  # type: ignore[union-attr]


def ddl_differences(ours: list[str] | tuple[str, ...], theirs: list[str] | tuple[str, ...]) -> list[str]:
    """How the tables two lists of CREATE TABLE statements make differ, as DuckDB's catalog reads
    them (each table's columns: name, type, nullability, default, in order; its keys): empty when
    they make the same tables, whatever the text (SQLAlchemy versions write it differently)."""
    import duckdb

    from ..sqlfiles import read_sql

    def catalog(statements) -> set[tuple]:
        con = duckdb.connect(":memory:")
        try:
            for s in statements:
                con.execute(s)
            return {
                tuple(map(str, r))
                for r in con.execute(read_sql(__package__, "sql/table_shapes.sql")).fetchall()
            }
        finally:
            con.close()

    a, b = catalog(ours), catalog(theirs)
    return [f"only in tables.sql: {r}" for r in sorted(a - b)] + [
        f"only in the declarations: {r}" for r in sorted(b - a)
    ]


def view_scripts() -> list[tuple[str, str]]:
    """(file name, SQL text) of every view file, in name order."""
    root = resources.files(__package__).joinpath("views")
    files = sorted((p for p in root.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


def views_digest() -> str:
    """sha256 over the view files' names and texts: stored in ``meta`` when the views are made."""
    h = hashlib.sha256()
    for name, text in view_scripts():
        h.update(f"{name}\0{text}\0".encode())
    return h.hexdigest()


# -- column meanings: the `-- columns:` block of the comment directly above each view ------------

_CREATE = re.compile(r"CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\b", re.I)
_ENTRY = re.compile(r"--\s{2,3}([a-z_][a-z0-9_]*):\s+(\S.*)")
_MORE = re.compile(r"--\s{4,}(\S.*)")


@dataclass(frozen=True)
class ViewMeanings:
    """Column meanings declared in the view files: ``views`` (view -> column -> meaning, from the
    ``-- columns:`` block directly above its CREATE), ``shared`` (the ``-- shared columns:``
    block: a column that means the same in every view), ``reads`` (view -> the tables and views
    its SELECT reads, from DuckDB's parse tree)."""

    views: dict[str, dict[str, str]]
    shared: dict[str, str]
    reads: dict[str, list[str]]


def parse_meanings(name: str, text: str) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(view -> column -> meaning, shared meanings) of one view file. In a comment block, a line
    ``-- columns:`` (or ``-- shared columns:``) starts the meanings: each ``--   column: text``
    line (two or three spaces) is one, and a line indented four or more spaces continues it; any
    other line up to the block's end is an error, as is a ``-- columns:`` block not directly above
    a CREATE VIEW."""
    views: dict[str, dict[str, str]] = {}
    shared: dict[str, str] = {}
    block: dict[str, str] | None = None  # the meanings of the comment block being read
    kind, last = "", ""
    for n, line in enumerate(text.splitlines(), 1):
        where = f"views/{name}:{n}"
        s = line.rstrip()
        if s in ("-- columns:", "-- shared columns:"):
            block, kind, last = {}, s, ""
        elif block is not None and s.startswith("--"):
            if m := _ENTRY.fullmatch(s):
                last = m.group(1)
                if last in block:
                    raise ValueError(f"{where}: column {last} has two meanings")
                block[last] = m.group(2)
            elif (m := _MORE.fullmatch(s)) and last:
                block[last] += " " + m.group(1)
            else:
                raise ValueError(f"{where}: not a '--   column: meaning' line: {s!r}")
        elif block is not None:
            if kind == "-- shared columns:" and not s:
                shared.update(block)
            elif (m := _CREATE.match(s)) and kind == "-- columns:":
                views[m.group(1)] = block
            else:
                raise ValueError(
                    f"{where}: a {kind!r} block ends here; put it directly above its CREATE VIEW"
                )
            block = None
    return views, shared


def tables_read(select: str, con=None) -> list[str]:
    """The names in FROM / JOIN of ``select`` (CTEs included), in order, from DuckDB's parse tree
    (no binding: nothing needs to exist); a statement DuckDB cannot parse is a ValueError."""
    import duckdb

    con = con if con is not None else duckdb.connect(":memory:")
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [select]).fetchone()[0])
    if tree.get("error"):
        raise ValueError(tree.get("error_message"))
    names: list[str] = []

    def walk(x) -> None:
        if isinstance(x, dict):
            if x.get("type") == "BASE_TABLE" and "table_name" in x and x["table_name"] not in names:
                names.append(x["table_name"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(tree)
    return names


@functools.cache
def view_meanings() -> ViewMeanings:
    """The column meanings and read graph of every view file (parsed once per process)."""
    import duckdb

    from ..sqlfiles import split_statements

    con = duckdb.connect(":memory:")  # only to parse the views
    views: dict[str, dict[str, str]] = {}
    shared: dict[str, str] = {}
    reads: dict[str, list[str]] = {}
    for name, text in view_scripts():
        v, s = parse_meanings(name, text)
        views.update(v)
        shared.update(s)
        for stmt in split_statements(text):
            if m := _CREATE.search(stmt):
                reads[m.group(1)] = tables_read(stmt[m.end() :], con)
    con.close()
    return ViewMeanings(views, shared, reads)
