"""Read-only SQL for users: statements that could write are refused before they run."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import duckdb

from .errors import UserError
from .schema.warehouse import Warehouse

# Statement types that only read (SET VARIABLE sets a session variable, not the warehouse).
READ_ONLY_TYPES = {"SELECT", "EXPLAIN", "VARIABLE_SET"}


def _statements(con: duckdb.DuckDBPyConnection, sql: str) -> list:
    try:
        return con.extract_statements(sql)
    except duckdb.Error as e:
        raise UserError(f"SQL does not parse: {str(e).splitlines()[0]}") from None


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> list:
    stmts = _statements(con, sql)
    if not stmts:
        raise UserError("no SQL statement given")
    for st in stmts:
        kind = st.type.name
        if kind not in READ_ONLY_TYPES:
            raise UserError(
                f"`ctxprior sql` is read-only: a {kind} statement is refused "
                "(only SELECT / WITH / EXPLAIN / SET VARIABLE); writes go through ctxprior commands")
    return stmts


def _literal(value: str) -> str:
    try:
        v = json.loads(value)
    except json.JSONDecodeError:
        v = value
    if isinstance(v, list):
        return "[" + ", ".join(_literal(json.dumps(x)) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if v is None:
        return "NULL"
    return "'" + str(v).replace("'", "''") + "'"


def run_read_only(wh: Warehouse, sql: str, variables: dict[str, str] | None = None):
    """Run every statement; return (column names, rows) of the last one."""
    for name, value in (variables or {}).items():
        if not name.isidentifier():
            raise UserError(f"--var {name}: not a valid variable name")
        wh.con.execute(f"SET VARIABLE {name} = {_literal(value)}")
    stmts = check_read_only(wh.con, sql)
    cur = None
    try:
        for st in stmts:
            cur = wh.con.execute(st.query)
    except duckdb.Error as e:
        raise UserError(f"SQL error: {str(e).splitlines()[0]}") from None
    if cur is None or cur.description is None:
        return [], []
    cols = [d[0] for d in cur.description]
    return cols, cur.fetchall()


def _fmt(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v).replace("\n", "\\n")


def format_rows(cols: list[str], rows: list[tuple], fmt: str = "table", max_rows: int | None = None) -> str:
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
        out.append(f"... {len(rows) - max_rows} more rows (use --format csv for all)")
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)
