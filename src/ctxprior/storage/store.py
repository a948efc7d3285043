"""Opening a warehouse: one DuckDB file, schema created / checked / migrated, small helpers.

Bulk rows go in through Arrow (``insert_arrow``); small statements may be SQLAlchemy Core
statements (``execute``), compiled for the DuckDB dialect and run on the same connection, so
a command's bulk and small writes share one transaction.

Several processes, one file (DuckDB lets one process write, or many read, never both):

- **brief writers** (``open_store(..., brief=True)``; the scoring driver) hold the file only
  while they write: every top-level transaction / query opens the file, runs, commits,
  checkpoints and closes it. Between commits other processes can open the file.
  ``<db>.writer`` names the brief writer (PID + command) while it is open.
- **writer intent**: before each (re)open a brief writer creates ``<db>.write-intent``; readers and
  other writers that find a live intent back off instead of grabbing the file, so any number of busy
  readers cannot starve the writer. It is removed as soon as the writer holds the lock.
- **waiting**: openers retry with jittered exponential backoff for ``wait`` seconds; when the holder
  is the registered brief writer they retry for at least ``CTXPRIOR_BRIEF_GRACE`` seconds (default
  60): its hold lasts one commit. Otherwise they fail with "warehouse ... is in use by PID n (cmd)".
- **snapshots**: a reader opens after a commit + checkpoint and sees exactly the committed state
  of that moment (every unit's rows together with its run_unit row, one transaction each).
- **identity**: a writer remembers the file it opened (st_dev, st_ino); before every reopen and
  every commit it checks that the path still names that file, and stops in one line when it does
  not (moved, replaced by another warehouse, deleted): a brief writer never writes into another
  warehouse moved to its path, and never creates a new one where its file disappeared.
"""

from __future__ import annotations

import math
import os
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ..errors import UserError
from ..inputs import forget_warehouse, note_warehouse
from ..schema.declared import ddl_statements, table_names, view_scripts, views_digest
from ..sqlfiles import ident, read_sql, split_statements
from ..version import __version__
from . import lock as wlock
from . import procs
from .failures import is_io_error, is_write_fault, write_error
from .lock import sidecar_base
from .sandbox import Reads, named_reads, sandbox

if TYPE_CHECKING:  # imported where used: a read-only command imports neither
    import pyarrow as pa
    from sqlalchemy.sql.expression import ClauseElement


DB_ENV = "CTXPRIOR_DB"
DEFAULT_DB = "ctxprior.duckdb"


def default_db_path() -> str:
    return os.environ.get(DB_ENV) or DEFAULT_DB


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


# DuckDB names the holder "in <program> (PID n)", or only "in PID n" (no program name; PID 0 when
# the lock was released between DuckDB's failed lock and its look-up of the holder)
_LOCK_RE = re.compile(r"Conflicting lock is held in (?:(.*?) \(PID (\d+)\)|PID (\d+))")
_LOCK_WORDS = "Could not set lock on file"


def _cmdline(pid: int | str, default: str = "?") -> str:
    shown = procs.describe(int(pid))
    return default if shown == "?" else shown


def _lock_pid(msg: str) -> int | None:
    m = _LOCK_RE.search(msg)
    return int(m.group(2) or m.group(3)) if m else None


def _lock_holder(msg: str) -> str | None:
    """Who holds the lock, for the "in use by" line; None when ``msg`` is no lock conflict."""
    m = _LOCK_RE.search(msg)
    if not m:
        return "another process" if _LOCK_WORDS in msg else None
    pid = m.group(2) or m.group(3)
    if pid == "0":
        return "another process"
    return f"PID {pid} ({_cmdline(pid, m.group(1) or '?')})"


BRIEF_GRACE_ENV = "CTXPRIOR_BRIEF_GRACE"
WRITER_SUFFIX = ".writer"
INTENT_SUFFIX = ".write-intent"


def _marker_pid(path: str) -> int | None:
    """The PID marker file ``path`` (``<db>.writer`` / ``<db>.write-intent``) names, when proven
    (``procs.proven``: that PID, start time and command line, alive now); never a FIFO's reader."""
    return procs.marker_pid(path)


def _write_marker(path: str) -> None:
    procs.write_marker(path, procs.record())


def _remove_marker(path: str) -> None:
    procs.remove_marker(path)


def writer_marker(path: str) -> str:
    """``<db>.writer``: names the brief writer of the warehouse at ``path`` (``lock.sidecar_base``)."""
    return sidecar_base(path) + WRITER_SUFFIX


def intent_marker(path: str) -> str:
    """``<db>.write-intent``: a brief writer waiting to open the warehouse at ``path``."""
    return sidecar_base(path) + INTENT_SUFFIX


def brief_grace() -> float:
    try:
        return float(os.environ.get(BRIEF_GRACE_ENV, "60"))
    except ValueError:
        return 60.0


def _fault(point: str) -> None:
    if os.environ.get("CTXPRIOR_FAULT"):
        from ..faults import hit

        hit(point)


class Store:
    """An open warehouse. ``con`` is the native DuckDB connection.

    ``brief=True`` (a brief writer, see the module docstring): the connection is opened on demand
    and closed (after a CHECKPOINT) at the end of every top-level transaction / session / query,
    so other processes can read the file between commits. ``wait`` bounds each re-open.
    """

    def __init__(
        self,
        path: str,
        con: duckdb.DuckDBPyConnection | None,
        read_only: bool,
        brief: bool = False,
        wait: float = 0.0,
        reads: Reads = (),
        threads: int | None = None,
    ):
        self.path = path
        self._con = con
        self.read_only = read_only
        self.brief = brief
        self.wait = wait
        self.reads = reads
        self.named = named_reads(reads)  # what each named read is (check_reads)
        self.threads = threads
        self._in_tx = False
        self._depth = 0
        self._lock: wlock.Lock | None = None  # the flock held with ``_con`` (storage/lock.py)
        self.identity: tuple[int, int] | None = None  # a writer's file (st_dev, st_ino), once opened
        self._noted = False  # whether ctxprior/inputs.py compares inputs with this warehouse

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            _fault("store.connect")
            self.check_identity()  # never a new file where this one disappeared (DuckDB would create it)
            con, held = _connect(
                self.path, self.read_only, self.wait, self.brief, reads=self.reads, threads=self.threads
            )
            try:
                self.check_identity()  # the file opened is the one this writer holds
            except UserError:
                con.close()
                held.release()
                raise
            self._con, self._lock = con, held
        return self._con

    @con.setter
    def con(self, value: duckdb.DuckDBPyConnection) -> None:
        self._con = value

    def check_identity(self) -> None:
        """UserError (one line) when this writer's path no longer names the file it opened."""
        if self.identity is None or self.read_only:
            return
        now = file_identity(self.path)
        if now != self.identity:
            what = "is gone" if now is None else "now names another file"
            raise UserError(
                f"warehouse {self.path} {what} (moved, replaced or deleted while this command ran); "
                "stopped without writing more: what was committed is in the file this command opened"
            )

    # -- lifecycle -----------------------------------------------------------------
    def close(self) -> None:
        try:
            if self.brief:
                self.release()
            elif self._con is not None:
                self._con.close()
        except Exception:
            pass
        finally:
            if self._con is not None:
                try:
                    self._con.close()
                except Exception:
                    pass
            self._con = None
            self._unlock()
            if self._noted:
                self._noted = False
                forget_warehouse(self.path)
            if self.brief:
                _remove_marker(writer_marker(self.path))

    def release(self) -> None:
        """Brief writer: checkpoint and close the file now (reopened on the next statement)."""
        if self._con is None or self._in_tx:
            return
        con, self._con = self._con, None
        try:
            if not self.read_only:
                try:
                    con.execute("CHECKPOINT")
                except duckdb.Error as e:
                    if is_io_error(e):
                        raise write_error(self.path, e) from None
                    raise
            _fault("store.release")
        finally:
            con.close()
            self._unlock()

    def _unlock(self) -> None:
        """Release the flock, after DuckDB's connection is closed (never before)."""
        held, self._lock = self._lock, None
        if held is not None:
            held.release()

    @contextmanager
    def session(self) -> Iterator[Store]:
        """Group statements on one open connection; a brief writer releases the file at the end."""
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if self._depth == 0 and self.brief:
                try:
                    self.release()
                except Exception:
                    pass
            raise
        else:
            self._depth -= 1
            if self._depth == 0 and self.brief:
                self.release()

    @contextmanager
    def one_thread(self) -> Iterator[Store]:
        """A session in which DuckDB runs on one thread. Its parallel sums and averages add partial
        results in the order threads finish, so the last bit of a stored aggregate could differ
        between two runs on the same data; analyses that store numbers read inside this. The
        sandbox locks DuckDB's configuration, so the store must be opened with ``threads=1``
        (``Warehouse.connect(write=True, threads=1)``)."""
        with self.session():
            if int(self.scalar("SELECT current_setting('threads')")) != 1:
                raise RuntimeError(
                    "one_thread() needs a store opened with threads=1 (its settings are locked)"
                )
            yield self

    @contextmanager
    def bounded(self, what: str) -> Iterator[Store]:
        """A session whose statements stop after ``query_timeout()`` seconds in all: a timer thread
        interrupts DuckDB (``con.interrupt()``), and the block ends in a :class:`QueryTimeout`
        naming ``what`` (never DuckDB's text). For reads of objects a file brings (covariate views,
        the views an export reads): an infinitely recursive view stops instead of hanging."""
        with self.session():
            con = self.con
            limit = query_timeout()
            timer = threading.Timer(limit, con.interrupt)
            timer.daemon = True
            timer.start()
            try:
                yield self
            except duckdb.InterruptException:
                raise QueryTimeout(
                    f"{what}: still running after {limit:g} s, stopped "
                    f"(a view that never ends; {QUERY_TIMEOUT_ENV} sets the limit)"
                ) from None
            finally:
                timer.cancel()

    def check_reads(self) -> None:
        """A UserError when a file or folder of ``reads`` is no longer the one resolved when the
        store opened (a link retargeted, another file renamed over its name): what a query read
        there is not the file named (docs/write-protocol.md, "Named reads")."""
        for real, _, identity in self.named:
            try:
                st = os.stat(real)
                now: tuple[int, int] | None = (st.st_dev, st.st_ino)
            except OSError:
                now = None
            if now != identity:
                raise UserError(
                    f"{real} was replaced while the query ran (not the file named); "
                    "its result is discarded: rerun once it is stable"
                )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """One transaction; nested calls join the outer one. Rolls back on any exception."""
        if self._in_tx:
            yield self
            return
        with self.session():
            self.con.execute("BEGIN TRANSACTION")
            self._in_tx = True
            try:
                yield self
                _fault("tx.before_commit")
            except BaseException:
                self._in_tx = False
                self._rollback()
                raise
            else:
                self._in_tx = False
                try:
                    self.check_identity()
                except UserError:
                    self._rollback()
                    raise
                try:
                    self.con.execute("COMMIT")
                except duckdb.Error as e:
                    self._rollback()
                    if is_io_error(e):
                        raise write_error(self.path, e) from None
                    raise
                _fault("tx.after_commit")

    def _rollback(self) -> None:
        """Roll the open transaction back; a failure to do so is ignored (the error that led here
        is the one raised)."""
        try:
            self.con.execute("ROLLBACK")
        except Exception:
            pass

    # -- statements ---------------------------------------------------------------
    def execute(self, stmt: str | ClauseElement, params: Any = None) -> duckdb.DuckDBPyConnection:
        """Run raw SQL (with ? params) or a SQLAlchemy Core statement on this connection."""
        if not isinstance(stmt, str):  # a SQLAlchemy statement (only a writer makes one)
            from ..schema.declared import dialect

            compiled = stmt.compile(dialect=dialect(), compile_kwargs={"render_postcompile": True})
            sql = str(compiled)
            p = compiled.construct_params() or {}
            pos = getattr(compiled, "positiontup", None)
            if pos:
                return self.con.execute(sql, [p[k] for k in pos])
            return self.con.execute(sql, p or None)
        return self.con.execute(stmt, params) if params is not None else self.con.execute(stmt)

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        with self.session():
            return self.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: Any = None) -> Any:
        with self.session():
            rows = self.execute(
                sql, params
            ).fetchall()  # fetch all: DuckDB 2 refuses work on a half-read result
        return rows[0][0] if rows else None

    def df(self, sql: str, params: Any = None):
        with self.session():
            return self.execute(sql, params).df()

    def arrow(self, sql: str, params: Any = None) -> pa.Table:
        import pyarrow as pa

        with self.session():
            rel = self.con.sql(sql, params=params)
            # DuckDB 2: to_arrow_table(); DuckDB 1.x: fetch_arrow_table()
            tbl = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
            return tbl.read_all() if isinstance(tbl, pa.RecordBatchReader) else tbl

    def run_script(self, text: str) -> None:
        for stmt in split_statements(text):
            self.con.execute(stmt)

    def next_id(self, table: str, column: str) -> int:
        return int(self.scalar(f"SELECT coalesce(max({ident(column)}), 0) + 1 FROM {ident(table)}"))

    def insert_arrow(self, table: str, data: Any, or_ignore: bool = False) -> int:
        """Bulk insert an Arrow table / pandas DataFrame / dict of columns, matched by column name."""
        import pyarrow as pa

        if isinstance(data, dict):
            data = pa.table(data)
        n = data.num_rows if isinstance(data, pa.Table) else len(data)
        if n == 0:
            return 0
        name = f"_ctxprior_in_{id(data)}"
        with self.session():
            con = self.con
            con.register(name, data)
            try:
                verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
                con.execute(f"{verb} {ident(table)} BY NAME SELECT * FROM {ident(name)}")
            finally:
                con.unregister(name)
        return n

    def table_names(self) -> list[str]:
        return self._names("BASE TABLE")

    def _names(self, kind: str) -> list[str]:
        return [r[0] for r in self.query(read_sql("ctxprior.storage", "sql/names.sql"), [kind])]

    def view_names(self, staging: bool = False) -> list[str]:
        """The views, without the internal staging views (``stg_*``, views/05_staging.sql) unless
        ``staging``: they are not exported or published."""
        names = self._names("VIEW")
        return names if staging else [v for v in names if not v.startswith("stg_")]

    # -- schema --------------------------------------------------------------------
    def schema_version(self) -> int | None:
        if "meta" not in self.table_names():
            return None
        from ..schema.versions import parse_schema_version

        v = self.scalar("SELECT value FROM meta WHERE key='schema_version'")
        return None if v is None else parse_schema_version(self.path, v)

    def ensure_schema(self, force: bool = False) -> None:
        """Create missing tables (additive, safe) and (re)create the views when their files changed
        since the last read-write open (or ``force``). An up-to-date warehouse is not written at all,
        so a command that fails on bad input leaves the file byte for byte as it was."""
        from ..schema.versions import SCHEMA_VERSION

        with self.session():
            self._ensure_schema(SCHEMA_VERSION, force)

    def _ensure_schema(self, SCHEMA_VERSION: int, force: bool) -> None:
        existing = set(self.table_names())
        missing = [ddl for name, ddl in zip(table_names(), ddl_statements()) if name not in existing]
        digest = views_digest()
        with self.transaction():  # the schema check is one transaction (it commits nothing when up to date)
            if (
                not missing
                and not force
                and self.scalar("SELECT value FROM meta WHERE key = 'views_sha256'") == digest
            ):
                return
            for ddl in missing:
                self.con.execute(ddl)
            if "meta" not in existing:
                now = utcnow().isoformat(timespec="seconds")
                self.con.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ["schema_version", str(SCHEMA_VERSION)],
                        ["created_by", f"ctxprior {__version__}"],
                        ["created_at", now],
                    ],
                )
            self.create_views()
            self.con.execute("DELETE FROM meta WHERE key = 'views_sha256'")
            self.con.execute("INSERT INTO meta VALUES ('views_sha256', ?)", [digest])

    def create_views(self) -> None:
        for name, text in view_scripts():
            try:
                self.run_script(text)
            except duckdb.Error as e:  # a developer error, never a user one
                raise RuntimeError(f"view file {name} failed: {e}") from e


QUERY_TIMEOUT_ENV = "CTXPRIOR_QUERY_TIMEOUT"  # seconds a bounded read may run (Store.bounded)
QUERY_TIMEOUT = 600.0


class QueryTimeout(UserError):
    """A bounded read (``Store.bounded``) ran past ``query_timeout()``."""


def view_error(view: str, e: BaseException) -> str:
    """Why view ``view`` (a covariate view, a view an export reads) cannot be read, by its name and
    DuckDB's kind of error only: DuckDB's text can quote what the view read (a value, a file's
    line), so it is never shown. A :class:`QueryTimeout` says so instead."""
    if isinstance(e, QueryTimeout):
        return str(e)
    kind = type(e).__name__.removesuffix("Exception") or "Error"
    return (
        f"view {view} cannot be read ({kind} error; DuckDB's text is not shown, it may quote what "
        f'the view read); inspect it with `ctxprior sql "SELECT * FROM {view} LIMIT 5"`'
    )


def query_timeout() -> float:
    """``CTXPRIOR_QUERY_TIMEOUT`` (seconds, > 0), else 600."""
    try:
        value = float(os.environ.get(QUERY_TIMEOUT_ENV, QUERY_TIMEOUT))
    except ValueError:
        return QUERY_TIMEOUT
    return value if math.isfinite(value) and value > 0 else QUERY_TIMEOUT


def holds_lock(path: str) -> bool | None:
    """Whether this process holds a POSIX lock on ``path`` (``/proc/locks``); None where unknown.
    A second descriptor of the file, once closed, drops the lock (docs/write-protocol.md)."""
    held = wlock.proc_locks(path)
    me = str(os.getpid())
    return None if held is None else any(kind == "POSIX" and pid == me for kind, _, pid in held)


WAIT_MAX = 7 * 86400  # --wait's upper bound: past it, time.monotonic() + wait loses its meaning


def check_wait(wait: Any) -> float:
    """``wait`` (``--wait``, ``ctxprior.open(wait=...)``) as seconds: a finite number >= 0."""
    try:
        value = float(wait)
    except OverflowError:  # an int past float's range
        raise UserError(
            f"--wait (an integer of {wait.bit_length()} bits): must be at most {WAIT_MAX} seconds"
        ) from None
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0:
        shown = f"{value:g}" if isinstance(wait, (int, float)) else str(wait)[:40]
        raise UserError(f"--wait {shown}: must be a number of seconds >= 0 (e.g. --wait 60)")
    if value > WAIT_MAX:
        raise UserError(f"--wait {value:g}: must be at most {WAIT_MAX} seconds")
    return value


def _connect(
    path: str,
    read_only: bool,
    wait: float,
    brief_writer: bool = False,
    reads: Reads = (),
    threads: int | None = None,
) -> tuple[duckdb.DuckDBPyConnection, wlock.Lock]:
    """The one place the warehouse file is opened (docs/write-protocol.md): the ``flock`` (exclusive
    to write, shared to read), then DuckDB's, retried with jittered backoff while another process
    holds either; writer intents honoured. Returns the sandboxed connection and the lock it holds."""
    wait = check_wait(wait)
    start = time.monotonic()
    deadline = start + wait
    intent = intent_marker(path)
    writer_pid = _marker_pid(writer_marker(path))
    grace_deadline = max(deadline, start + brief_grace())
    delay = 0.005
    announced = False

    def busy(pid: int | None, holder: str) -> None:
        """Another process holds the file: raise once past the limit, else sleep (backoff)."""
        nonlocal writer_pid, delay
        if writer_pid is None:
            writer_pid = _marker_pid(writer_marker(path))
        # the registered brief writer, or a holder /proc/locks no longer names (it let go between
        # our try and the read: most likely that writer between two commits): the grace applies
        brief = writer_pid is not None and (pid == writer_pid or pid is None)
        limit = grace_deadline if brief else deadline
        if brief_writer:
            limit = max(limit, start + max(wait, 3600.0))
        if time.monotonic() >= limit:
            raise UserError(
                f"warehouse {path} is in use by {holder}; wait for it to finish (or pass --wait SECONDS)"
            )
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 1.6, 0.25)

    try:
        while True:
            now = time.monotonic()
            if brief_writer and not announced:
                _write_marker(intent)
                announced = True
            elif not brief_writer:
                other = _marker_pid(intent)
                limit = grace_deadline if other is not None and other == writer_pid else deadline
                if other is not None and now < limit:  # a writer is queued: let it go first
                    time.sleep(delay * (0.5 + random.random()))
                    delay = min(delay * 1.6, 0.1)
                    continue
            try:
                held = wlock.acquire(path, exclusive=not read_only)
            except wlock.Busy as b:
                shown = f"PID {b.pid} ({_cmdline(b.pid)})" if b.pid else "another process"
                busy(b.pid, shown)
                continue
            try:
                con = duckdb.connect(path, read_only=read_only)
            except duckdb.IOException as e:
                held.release()
                busy(_lock_pid(str(e)), _busy_holder(path, read_only, e))
                continue
            except BaseException:
                held.release()
                raise
            return _sandboxed(con, held, read_only, reads, threads)
    finally:
        if announced:
            _remove_marker(intent)


def _sandboxed(con, held: wlock.Lock, read_only: bool, reads: Reads, threads: int | None):
    """``con`` sandboxed (``sandbox``) with the lock it holds; both let go if that fails."""
    try:
        sandbox(con, read_only, reads, threads)
    except BaseException:
        con.close()
        held.release()
        raise
    return con, held


def _busy_holder(path: str, read_only: bool, e: duckdb.IOException) -> str:
    """Who holds the file, from DuckDB's lock error; any other I/O error is the one line it means."""
    holder = _lock_holder(str(e))
    if holder is not None:
        return holder
    first = str(e).splitlines()[0]
    if not read_only and (
        "Permission denied" in first or "No space" in first or "Read-only file system" in first
    ):
        raise write_error(path, e) from None
    raise UserError(f"cannot open warehouse {path}: {first}") from None


def _unlink_unfinished(path: str, e: BaseException) -> None:
    """A warehouse this open was creating, left unfinished by a full disk or a lost permission
    (a file DuckDB can no longer open): removed, so the next command starts afresh."""
    if not (is_write_fault(e) or str(e).startswith("cannot write warehouse")):
        return
    for f in (path, path + ".wal"):
        try:
            os.unlink(f)
        except OSError:
            pass


def file_identity(path: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at ``path`` (links followed); None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _check_path(path: str, must_exist: bool) -> bool:
    """Whether a warehouse file is at ``path``; one line when none may be made there, or when the
    path is a folder, a FIFO (it would hang DuckDB's open) or a device."""
    exists = Path(path).exists()
    if not exists and must_exist:
        raise UserError(f"no warehouse at {path}; create one with `ctxprior --db {path} ingest demo`")
    if exists and Path(path).is_dir():
        raise UserError(f"warehouse path {path} is a directory; pass a file path with --db")
    if exists and not Path(path).is_file():
        raise UserError(
            f"warehouse path {path} is not a regular file (a FIFO or a device); pass a DuckDB file with --db"
        )
    if not exists:
        parent = Path(path).resolve().parent
        if not parent.exists():
            raise UserError(f"cannot create warehouse {path}: folder {parent} does not exist")
    return exists


def open_store(
    path: str | os.PathLike | None = None,
    read_only: bool = False,
    create: bool = True,
    wait: float = 0.0,
    brief: bool = False,
    migrating: bool = False,
    reads: Reads = (),
    threads: int | None = None,
) -> Store:
    """Open (and when writable, create or check) the warehouse at ``path``.

    - read_only: never writes; the file must exist and have a schema this version can read.
    - create: a missing file is created (read-write only).
    - wait: seconds to keep retrying while another process holds the write lock.
    - brief: a brief writer (long jobs such as scoring runs): hold the file only while writing,
      announce the intent to write, let readers in between commits (module docstring).
    - migrating: ``ctxprior migrate``: an existing file, opened read-write without the version check
      and without creating anything (the migration does both).
    - reads: the files / folders a command must read through DuckDB (its named inputs); the
      connection reads nothing else (``sandbox``). threads: DuckDB's thread count, fixed.

    Objects in the file that ctxprior does not make (views, macros, types, sequences, schemas) are
    dropped on a read-write open and refuse a read-only one (``trust.refuse_or_drop``).
    """
    from ..schema.versions import SCHEMA_VERSION, check_version

    path = str(path or default_db_path())
    wait = check_wait(wait)
    reads = [real for real, _, _ in named_reads(reads)]  # resolved once (named_reads)
    exists = _check_path(path, read_only or not create or migrating)
    if brief and not read_only:
        _write_marker(writer_marker(path))
    try:
        con, held = _connect(path, read_only, wait, brief and not read_only, reads=reads, threads=threads)
    except BaseException as e:
        if brief:
            _remove_marker(writer_marker(path))
        if not exists:
            _unlink_unfinished(path, e)
        raise
    store = Store(
        path, con, read_only, brief=brief and not read_only, wait=wait, reads=reads, threads=threads
    )
    store._lock = held
    store.identity = None if read_only else file_identity(path)
    store._noted = True
    note_warehouse(path)  # inputs are compared with it while it is open (ctxprior/inputs.py)
    if migrating:
        return store
    try:
        from . import trust

        foreign = trust.foreign_objects(store)  # read before any query resolves a name of the file
        version = store.schema_version()
        if version is None and exists and store.table_names():
            raise UserError(f"{path} is a DuckDB file but not a ctxprior warehouse (no meta table)")
        if version is None and read_only:  # an empty DuckDB file: a command creating it was killed
            raise UserError(
                f"{path} is an empty DuckDB file, not yet a ctxprior warehouse (a command that was "
                "creating it stopped); remove it and rerun that command"
            )
        if version is not None:
            check_version(path, version, SCHEMA_VERSION)
        if foreign:  # refused (read-only) or dropped (read-write), before any other query
            trust.refuse_or_drop(store, foreign)
        if not read_only:
            trust.check_tables(store)  # a table at a view's name, a foreign constraint: one line
            store.ensure_schema()
        if version is not None or not read_only:
            trust.check_views(store)
        if store.brief:
            store.release()
    except BaseException as e:
        store.close()
        if not exists:
            _unlink_unfinished(path, e)
        if isinstance(e, duckdb.IOException):
            raise write_error(path, e) from None
        raise
    return store
