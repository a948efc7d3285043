"""Opening a warehouse: one DuckDB file, schema created / checked / migrated, small helpers.

Bulk rows go in through Arrow (``insert_arrow``); small statements may be SQLAlchemy Core
statements (``execute``), compiled for the DuckDB dialect and run on the same connection, so
a command's bulk and small writes share one transaction.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import duckdb
import pyarrow as pa
from sqlalchemy.schema import CreateTable
from sqlalchemy.sql.expression import ClauseElement

from .. import __version__
from ..errors import UserError
from ..sqlfiles import split_statements
from .base import metadata

DB_ENV = "CTXPRIOR_DB"
DEFAULT_DB = "ctxprior.duckdb"


def default_db_path() -> str:
    return os.environ.get(DB_ENV) or DEFAULT_DB


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _dialect():
    from duckdb_engine import Dialect

    return Dialect(paramstyle="qmark")


def ddl_statements() -> list[str]:
    """CREATE TABLE statements for every table, in dependency order.

    Ids are assigned by ctxprior, so no column autoincrements. Foreign keys stay in the
    SQLAlchemy metadata (documentation, dataset card, integrity tests) but are not emitted:
    DuckDB implements an UPDATE of a referenced row as delete+insert and would refuse e.g.
    marking a run done once score rows point at it.
    """
    d = _dialect()
    out = []
    for t in metadata.sorted_tables:
        for c in t.primary_key.columns:
            c.autoincrement = False
        out.append(str(CreateTable(t, include_foreign_key_constraints=[]).compile(dialect=d)).strip())
    return out


def view_scripts() -> list[tuple[str, str]]:
    """(file name, SQL text) of every view file, in name order."""
    root = resources.files("ctxprior.schema").joinpath("views")
    files = sorted((p for p in root.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


_LOCK_RE = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def _lock_holder(msg: str) -> str | None:
    m = _LOCK_RE.search(msg)
    if not m:
        return None
    pid = m.group(2)
    cmd = m.group(1)
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            parts = [p.decode(errors="replace") for p in f.read().split(b"\0") if p]
        if parts:
            cmd = " ".join(parts)
    except OSError:
        pass
    return f"PID {pid} ({cmd})"


class Warehouse:
    """An open warehouse. ``con`` is the native DuckDB connection."""

    def __init__(self, path: str, con: duckdb.DuckDBPyConnection, read_only: bool):
        self.path = path
        self.con = con
        self.read_only = read_only
        self._in_tx = False

    # -- lifecycle -----------------------------------------------------------------
    def close(self) -> None:
        try:
            self.con.close()
        except Exception:
            pass

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator["Warehouse"]:
        """One transaction; nested calls join the outer one. Rolls back on any exception."""
        if self._in_tx:
            yield self
            return
        self.con.execute("BEGIN TRANSACTION")
        self._in_tx = True
        try:
            yield self
        except BaseException:
            self._in_tx = False
            try:
                self.con.execute("ROLLBACK")
            except Exception:
                pass
            raise
        else:
            self._in_tx = False
            self.con.execute("COMMIT")

    # -- statements ---------------------------------------------------------------
    def execute(self, stmt: str | ClauseElement, params: Any = None) -> duckdb.DuckDBPyConnection:
        """Run raw SQL (with ? params) or a SQLAlchemy Core statement on this connection."""
        if isinstance(stmt, ClauseElement):
            compiled = stmt.compile(dialect=_dialect(), compile_kwargs={"render_postcompile": True})
            sql = str(compiled)
            p = compiled.construct_params()
            pos = getattr(compiled, "positiontup", None)
            if pos:
                return self.con.execute(sql, [p[k] for k in pos])
            return self.con.execute(sql, p or None)
        return self.con.execute(stmt, params) if params is not None else self.con.execute(stmt)

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        return self.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Any = None) -> Any:
        rows = self.execute(sql, params).fetchall()  # fetch all: DuckDB 2 refuses work on a half-read result
        return rows[0][0] if rows else None

    def df(self, sql: str, params: Any = None):
        return self.execute(sql, params).df()

    def arrow(self, sql: str, params: Any = None) -> pa.Table:
        res = self.execute(sql, params)
        tbl = res.arrow() if hasattr(res, "arrow") else res.fetch_arrow_table()
        return tbl.read_all() if isinstance(tbl, pa.RecordBatchReader) else tbl

    def run_script(self, text: str) -> None:
        for stmt in split_statements(text):
            self.con.execute(stmt)

    def next_id(self, table: str, column: str) -> int:
        return int(self.scalar(f'SELECT coalesce(max("{column}"), 0) + 1 FROM "{table}"'))

    def insert_arrow(self, table: str, data: Any, or_ignore: bool = False) -> int:
        """Bulk insert an Arrow table / pandas DataFrame / dict of columns, matched by column name."""
        if isinstance(data, dict):
            data = pa.table(data)
        n = data.num_rows if isinstance(data, pa.Table) else len(data)
        if n == 0:
            return 0
        name = f"_ctxprior_in_{id(data)}"
        self.con.register(name, data)
        try:
            verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
            self.con.execute(f'{verb} "{table}" BY NAME SELECT * FROM "{name}"')
        finally:
            self.con.unregister(name)
        return n

    def table_names(self) -> list[str]:
        return [r[0] for r in self.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema='main' "
            "AND table_type='BASE TABLE' ORDER BY 1")]

    def view_names(self) -> list[str]:
        return [r[0] for r in self.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema='main' "
            "AND table_type='VIEW' ORDER BY 1")]

    # -- schema --------------------------------------------------------------------
    def schema_version(self) -> int | None:
        if "meta" not in self.table_names():
            return None
        v = self.scalar("SELECT value FROM meta WHERE key='schema_version'")
        return None if v is None else int(v)

    def ensure_schema(self) -> None:
        """Create missing tables (additive, safe) and (re)create every view."""
        from . import SCHEMA_VERSION

        existing = set(self.table_names())
        with self.transaction():
            for t, ddl in zip(metadata.sorted_tables, ddl_statements()):
                if t.name not in existing:
                    self.con.execute(ddl)
            if "meta" not in existing:
                now = utcnow().isoformat(timespec="seconds")
                self.con.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [["schema_version", str(SCHEMA_VERSION)], ["created_by", f"ctxprior {__version__}"],
                     ["created_at", now]],
                )
            self.create_views()

    def create_views(self) -> None:
        for name, text in view_scripts():
            try:
                self.run_script(text)
            except duckdb.Error as e:  # a developer error, never a user one
                raise RuntimeError(f"view file {name} failed: {e}") from e


def _connect(path: str, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + wait
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.IOException as e:
            holder = _lock_holder(str(e))
            if holder is None:
                raise UserError(f"cannot open warehouse {path}: {str(e).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise UserError(
                    f"warehouse {path} is in use by {holder}; wait for it to finish "
                    "(or pass --wait SECONDS)") from None
            time.sleep(0.2)


def open_warehouse(path: str | os.PathLike | None = None, read_only: bool = False,
                   create: bool = True, wait: float = 0.0) -> Warehouse:
    """Open (and when writable, create or check) the warehouse at ``path``.

    - read_only: never writes; the file must exist and have a schema this version can read.
    - create: a missing file is created (read-write only).
    - wait: seconds to keep retrying while another process holds the write lock.
    """
    from . import SCHEMA_VERSION
    from .migrations import check_version

    path = str(path or default_db_path())
    exists = Path(path).exists()
    if not exists and (read_only or not create):
        raise UserError(f"no warehouse at {path}; create one with `ctxprior --db {path} ingest demo`")
    if exists and Path(path).is_dir():
        raise UserError(f"warehouse path {path} is a directory; pass a file path with --db")
    if not exists:
        parent = Path(path).resolve().parent
        if not parent.exists():
            raise UserError(f"cannot create warehouse {path}: folder {parent} does not exist")
    con = _connect(path, read_only, wait)
    wh = Warehouse(path, con, read_only)
    try:
        version = wh.schema_version()
        if version is None and exists and wh.table_names():
            raise UserError(f"{path} is a DuckDB file but not a ctxprior warehouse (no meta table)")
        if version is not None:
            check_version(path, version, SCHEMA_VERSION)
        if not read_only:
            wh.ensure_schema()
    except BaseException:
        wh.close()
        raise
    return wh
