"""Read-only SQL for users (``ctxprior sql``, ``Warehouse.sql``): what a query may touch.

Two guards, both DuckDB's own (see [the warehouse](warehouse.md#what-sql-can-reach)):

- statements are judged by DuckDB's parser (``extract_statements``), never by their text: only
  SELECT (WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE), ``SET VARIABLE`` / ``RESET VARIABLE``
  and EXPLAIN [ANALYZE] of one SELECT run; anything else (COPY, EXPORT, ATTACH, INSTALL, LOAD,
  PRAGMA, CALL, SET of a setting, writes, EXPLAIN ANALYZE of any of them) is refused before
  anything runs;
- the connection is the warehouse's sandboxed one (``storage.sandbox``): DuckDB's
  ``enable_external_access`` off and its configuration locked, so a SELECT reads the warehouse and
  nothing else on disk or the network; ``allow_read`` (``--allow-read PATH``) names the files and
  folders it may read besides (DuckDB's ``allowed_paths`` / ``allowed_directories``, set when the
  connection opens: ``allowed``).
- no query opens the warehouse file itself (``read_blob('<warehouse>')``): DuckDB always lets a
  restricted connection read its own database file, and a second handle on it, once closed, drops
  this process's POSIX lock on the file (issue 27; docs/write-protocol.md). Without ``allow_read``
  DuckDB's local file system is switched off altogether (``disabled_filesystems``), so no table
  function opens any file; with it, a path given to the query (a string constant or a ``--var``)
  that names the warehouse or its WAL, and an ``allow_read`` entry that is one of them, are refused.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from .errors import UserError
from .inputs import check_input, loads_json, warehouse_of
from .options import Option, check_options
from .sqlfiles import ident, literal
from .storage.store import Store, holds_lock

AllowRead = str | os.PathLike | Iterable[str | os.PathLike]  # one path, or several

ALLOWED = "only SELECT / WITH / EXPLAIN [ANALYZE] SELECT / SET VARIABLE"
# the statement head that opens a parenthesised SELECT (not EXPLAIN's option list)
_SELECT_HEADS = {"SELECT", "WITH", "VALUES", "FROM", "TABLE", "("}


def _statements(con: duckdb.DuckDBPyConnection, sql: str) -> list:
    try:
        return con.extract_statements(sql)
    except duckdb.Error as e:
        raise UserError(f"SQL does not parse: {str(e).splitlines()[0]}") from None


def _tokens(sql: str) -> list[tuple[int, str]]:
    """(offset, upper-case text) of each token DuckDB's tokenizer finds, comments left out."""
    out = []
    toks = [(p, t) for p, t in duckdb.tokenize(sql) if t.name != "comment"]
    for i, (pos, _t) in enumerate(toks):
        end = toks[i + 1][0] if i + 1 < len(toks) else len(sql)
        out.append((pos, sql[pos:end].strip().upper()))
    return out


def explained(sql: str) -> str:
    """The statement an ``EXPLAIN [(options)] [ANALYZE] ...`` statement explains (its text)."""
    toks = _tokens(sql)
    i = 1
    if i + 1 < len(toks) and toks[i][1] == "(" and toks[i + 1][1] not in _SELECT_HEADS:
        depth = 0
        for j in range(i, len(toks)):  # skip the option list to its closing parenthesis
            depth += {"(": 1, ")": -1}.get(toks[j][1], 0)
            if depth == 0:
                i = j + 1
                break
        else:
            return ""
    if i < len(toks) and toks[i][1] == "ANALYZE":
        i += 1
    return sql[toks[i][0] :] if i < len(toks) else ""


def refusal(con: duckdb.DuckDBPyConnection, st) -> str | None:
    """Why DuckDB statement ``st`` may not run read-only ("a COPY statement"), or None when it may."""
    kind = st.type.name
    if kind in ("SELECT", "VARIABLE_SET"):  # VARIABLE_SET: SET VARIABLE in DuckDB < 1.1
        return None
    if kind == "SET":  # SET VARIABLE / RESET VARIABLE set a session variable; other SETs a setting
        head = [t for _, t in _tokens(st.query)[:2]]
        return None if len(head) == 2 and head[0] in ("SET", "RESET") and head[1] == "VARIABLE" else _a("SET")
    if kind == "EXPLAIN":  # EXPLAIN ANALYZE runs what it explains: only a SELECT may be explained
        try:
            inner = con.extract_statements(explained(st.query))
        except duckdb.Error:
            inner = []
        if len(inner) == 1 and inner[0].type.name == "SELECT":
            return None
        return "EXPLAIN of " + (
            _a(inner[0].type.name) if len(inner) == 1 else "a statement that is not a SELECT"
        )
    return _a(kind)


def _a(kind: str) -> str:
    return f"{'an' if kind[0] in 'AEIOU' else 'a'} {kind} statement"


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> list:
    """DuckDB's statements of ``sql``; a UserError when one of them may not run read-only."""
    stmts = _statements(con, sql)
    if not stmts:
        raise UserError("no SQL statement given")
    # DuckDB 1.x (the newest for Python 3.10) hands `PRAGMA version` back as the SELECT it runs
    toks = [t for _, t in _tokens(sql)]
    heads = [t for i, t in enumerate(toks) if i == 0 or toks[i - 1] == ";"]
    for st in stmts:
        kind = _a("PRAGMA") if "PRAGMA" in heads else refusal(con, st)
        if kind:
            raise UserError(
                f"`ctxprior sql` is read-only: {kind} is refused "
                f"({ALLOWED}); writes go through ctxprior commands"
            )
    return stmts


def _is_warehouse(name: str, warehouse: str) -> bool:
    """Whether ``name`` (a path or glob, relative to the working folder) reaches the warehouse file
    or its WAL, by device and inode (``inputs.warehouse_of``, the one identity check)."""
    if not name or len(name) > 4096 or "\0" in name:
        return False
    candidates = glob.glob(os.path.expanduser(name), recursive=True) if glob.has_magic(name) else [name]
    return any(warehouse_of(c, warehouse) is not None for c in candidates[:10000])


def _refuse_warehouse_paths(sql: str, values: Iterable[str], warehouse: str) -> None:
    """A UserError when a string constant of ``sql`` or one of ``values`` names the warehouse file."""
    names = [t[1:-1].replace("''", "'") for p, t in _raw_tokens(sql) if t.startswith("'") and t.endswith("'")]
    for name in [*names, *values]:
        if _is_warehouse(str(name), warehouse):
            raise UserError(
                f"`ctxprior sql` may not read the warehouse file itself ({name}); query its tables and views"
            )


FILE_FUNCTIONS = frozenset(
    [
        "read_blob",
        "read_text",
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson_objects",
        "glob",
        "sniff_csv",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_bloom_probe",
        "read_xlsx",
    ]
)
"""Table functions that read files: with ``--allow-read`` each one's path is computed and checked
before the statement runs (DuckDB always lets a connection read its own database file)."""


def _table_functions(node: Any) -> Iterator[dict]:
    """Every table function call in a statement's syntax tree (``json_serialize_sql``)."""
    if isinstance(node, dict):
        if node.get("type") == "TABLE_FUNCTION" and isinstance(node.get("function"), dict):
            yield node["function"]
        for v in node.values():
            yield from _table_functions(v)
    elif isinstance(node, list):
        for v in node:
            yield from _table_functions(v)


def _value(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    """The value of one constant expression (``sql``: SELECT and the expression's text); an error
    when it is not one (a column, a parameter)."""
    rows = con.execute(sql).fetchall()  # fetch all: DuckDB 2 refuses work on a half-read result
    return rows[0][0] if rows else None


def _refuse_computed_paths(con: duckdb.DuckDBPyConnection, sql: str, warehouse: str) -> None:
    """Before ``sql`` runs: the path of every file function in it (``read_blob('wh.' || 'duckdb')``,
    ``read_text(getvariable('p'))``) is computed on ``con`` and refused in one line when it names
    the warehouse or its WAL, or when it is not a constant (a subquery, a column) ctxprior can check."""
    tree = json.loads(_value(con, "SELECT json_serialize_sql(" + literal(sql) + ")") or "{}")
    if tree.get("error"):
        return  # not a plain SELECT: DuckDB refuses it, or check_read_only did
    for fn in _table_functions(tree.get("statements")):
        name = str(fn.get("function_name", "")).lower()
        args = fn.get("arguments") or []
        if name not in FILE_FUNCTIONS or not args:
            continue
        arg = args[0].get("expression") or {}
        start, length = arg.get("query_location"), arg.get("query_location_length")
        nested = any(True for _ in _table_functions(arg)) or '"SUBQUERY"' in json.dumps(arg)
        try:
            if nested or not isinstance(start, int) or not isinstance(length, int) or start >= len(sql):
                raise ValueError
            value = _value(con, "SELECT " + sql[start : start + length])
        except (duckdb.Error, ValueError, TypeError):
            raise UserError(
                f"`ctxprior sql`: the path of {name}(...) is not a constant ctxprior can check before "
                "the query runs (it may name the warehouse file); give the path as text"
            ) from None
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, str) and _is_warehouse(path, warehouse):
                raise UserError(
                    f"`ctxprior sql` may not read the warehouse file itself ({name} of {path}); "
                    "query its tables and views"
                )


def _raw_tokens(sql: str) -> list[tuple[int, str]]:
    toks = [(p, t) for p, t in duckdb.tokenize(sql) if t.name == "string_const"]
    out = []
    for pos, _t in toks:  # a string constant runs to its closing quote
        end = pos + 1
        while end < len(sql):
            if sql[end] == "'" and (end + 1 >= len(sql) or sql[end + 1] != "'"):
                break
            end += 2 if sql[end] == "'" else 1
        out.append((pos, sql[pos : end + 1]))
    return out


def allowed(allow_read: AllowRead = (), warehouse: str | None = None) -> list[str]:
    """The paths of ``allow_read`` (one path or several) that the query's connection may read
    besides the warehouse (``Warehouse.connect(reads=...)``, which sandboxes it: files, or folders and
    all below them; without any, no file at all; see the module docstring). A path that does not
    exist, or is the ``warehouse`` file, is a UserError."""
    if isinstance(allow_read, (str, os.PathLike)):
        allow_read = [allow_read]
    out = []
    for p in allow_read:
        path = Path(os.path.expanduser(str(p)))
        if not path.exists():
            raise UserError(f"--allow-read {p}: no such file or folder")
        if warehouse and _is_warehouse(str(path), warehouse):
            raise UserError(f"--allow-read {p}: that is the warehouse file; query its tables and views")
        check_input(path, "--allow-read")  # any other warehouse this process holds
        out.append(str(path))
    return out


def sql_error(e: duckdb.Error) -> UserError:
    """A DuckDB error of a user's query as one line (a refused file read says what to pass)."""
    first = str(e).splitlines()[0]
    if isinstance(e, duckdb.PermissionException):
        spill = (
            " (a query larger than memory also spills to disk only then)"
            if "LocalFileSystem has been disabled" in first
            else ""
        )
        return UserError(
            f"SQL error: {first}; `ctxprior sql` reads only the warehouse unless a file or "
            f"folder is named with --allow-read PATH (Python: allow_read=[PATH]){spill}"
        )
    return UserError(f"SQL error: {first}")


def read_only_query(
    store: Store,
    sql: str,
    params: Any = None,
    allow_read: AllowRead = (),
    arrow: bool = False,
):
    """``Warehouse.sql`` / ``Warehouse.arrow``: ``sql`` checked and run on the store's sandboxed
    connection (opened with ``reads=allowed(allow_read)``)."""
    stmts = check_read_only(store.con, sql)
    if allow_read:
        _refuse_warehouse_paths(sql, [str(p) for p in (params or []) if isinstance(p, str)], store.path)
        for st in stmts:
            _refuse_computed_paths(store.con, st.query, store.path)
    try:
        out = store.arrow(sql, params) if arrow else store.df(sql, params)
    except duckdb.PermissionException as e:
        _lock_kept(store, allow_read)
        raise sql_error(e) from None
    except duckdb.Error:
        _lock_kept(store, allow_read)
        raise
    _lock_kept(store, allow_read)
    return out


def _lock_kept(store: Store, allow_read) -> None:
    """With ``allow_read`` a path built inside the query can still name the warehouse file: when
    that released this process's lock on it, the result is not trusted (and not returned)."""
    if not allow_read:
        return
    if holds_lock(store.path) is False:
        store.close()
        raise UserError(
            "the query opened the warehouse file itself, which released this process's lock on it; "
            "its result is discarded (query the warehouse's tables and views; --allow-read files, "
            "not the warehouse's folder)"
        )
    store.check_reads()


def _literal(value: str, name: str = "") -> str:
    """A ``--var`` value as a SQL literal: JSON (bounded: ``inputs.loads_json``), else the text."""
    if not isinstance(value, str):
        raise UserError(
            f"--var {name}: the value must be text (JSON or a string), got {type(value).__name__}"
        )
    v = loads_json(value, f"--var {name}", or_text=True)
    if isinstance(v, list):
        return "[" + ", ".join(_literal(json.dumps(x), name) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) or v is None:
        return literal(v)
    return literal(str(v))


def run_read_only(
    store: Store,
    sql: str,
    variables: dict[str, str] | None = None,
    allow_read: AllowRead = (),
):
    """Run every statement on the store's sandboxed connection (opened with
    ``reads=allowed(allow_read)``); (column names, rows) of the last one."""
    if allow_read:
        _refuse_warehouse_paths(sql, [str(v) for v in (variables or {}).values()], store.path)
    for name, value in (variables or {}).items():  # every value checked before any is set
        if not isinstance(name, str) or not name.isidentifier():
            raise UserError(f"--var {name}: not a valid variable name")
        _literal(value, name)
    for name, value in (variables or {}).items():
        store.con.execute(f"SET VARIABLE {ident(name)} = {_literal(value, name)}")
    stmts = check_read_only(store.con, sql)
    for st in stmts if allow_read else []:  # after the variables are set: getvariable resolves
        _refuse_computed_paths(store.con, st.query, store.path)
    cur = None
    try:
        for st in stmts:
            cur = store.con.execute(st.query)
        rows = [] if cur is None or cur.description is None else cur.fetchall()
    except duckdb.Error as e:
        _lock_kept(store, allow_read)
        raise sql_error(e) from None
    _lock_kept(store, allow_read)
    if cur is None or cur.description is None:
        return [], []
    return [d[0] for d in cur.description], rows


def _fmt(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v).replace("\n", "\\n")


FORMATS = ("table", "csv", "json")
FORMAT = Option(
    "fmt",
    "--format",
    "Output format: an aligned table, CSV, or JSON (a list of objects).",
    default="table",
    choices=FORMATS,
)
MAX_ROWS = Option(
    "max_rows",
    "--max-rows",
    "Rows shown in table format (csv and json show all).",
    default=200,
    kind=int,
    maximum=10**9,
    minimum=1,
)
PRINT_OPTIONS = (FORMAT, MAX_ROWS)  # how `ctxprior sql` prints rows (Rows.format); `fakes list` takes FORMAT


def format_rows(cols: list[str], rows: list[tuple], fmt: str = "table", max_rows: int | None = None) -> str:
    check_options(PRINT_OPTIONS, {"fmt": fmt} if max_rows is None else {"fmt": fmt, "max_rows": max_rows})
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt == "json":
        return json.dumps([dict(zip(cols, r)) for r in rows], default=str, ensure_ascii=False, indent=1)
    shown = rows if max_rows is None else rows[:max_rows]
    cells = [[_fmt(v) for v in r] for r in shown]
    cells = [[c if len(c) <= 80 else c[:77] + "..." for c in r] for r in cells]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()  # noqa: E731
    out = [line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells]
    if max_rows is not None and len(rows) > max_rows:
        more = len(rows) - max_rows
        out.append(f"... {more} more row{'s' if more != 1 else ''} (use --format csv for all)")
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)
