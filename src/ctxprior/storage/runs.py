"""A run's life cycle, one for every kind of run: persuasion runs (``ctxprior score``, whose unit
is a shard of entities, ``run_unit``) and DynamicQA runs (``ctxprior score-dynamic``, whose unit
is a fact, ``dynamicqa_fact_done``).

- ``start_run``: insert the ``run`` row (status running, this host and PID); its id;
- ``find_resumable``: the newest unfinished run of a kind whose stored options match;
- ``reopen_run``: mark a resumed run running again (this host and PID, no end time, no error);
- ``closing``: the block in which a run computes its units and commits each with its own marker
  in one transaction (the kind's commit); at its end the row is closed: the status the block set
  (``running`` leaves the run open), ``cancelled`` on Ctrl-C or SIGTERM (inside
  ``sigterm_interrupts``), ``failed`` on an error;
- ``close_run``: final status, end time and error; never raises;
- ``cancel_run``: from another process: SIGTERM the run's driver on this host, wait, mark the
  run cancelled (``ctxprior runs cancel``);
- ``claim_driver`` / ``driver_pid``: the proof that a process drives a run. A run row's host and
  PID alone prove nothing (a row imported or pulled from elsewhere, a PID reused after a crash):
  the driver writes ``<warehouse>.run-<id>.driver`` beside the warehouse (host, PID, the process's
  start time and command line, the warehouse file's identity (st_dev, st_ino), a random token), and
  a PID is trusted, for a signal or for refusing a second driver, only when that file names it, the
  warehouse opened is that file, the live process's start time and command line still match
  (``procs.proven``, the one liveness rule), and that process holds the run's driver lock: an
  exclusive ``flock`` on ``<tmp>/ctxprior-<uid>/<dev>-<ino>.run-<id>.driver.lock`` (the private
  folder: this user's, mode 0700; the file mode 0600), which the driver takes when it claims the run
  and keeps until it releases it, and which ``/proc/locks`` names by PID. Everything in a driver file
  can be copied or forged (a live ``sleep``'s PID, start time and command line); a lock held by that
  very process cannot: the kernel records who took it, and a process that never ran ctxprior's
  driver code holds none (a forked child closes its copy).
- ``list_runs``, ``run_kind``, and ``default_runs``: which runs an analysis, figure, report or
  publication uses when none are given (the one definition).

It lives in ``storage`` (layer 2) because it is the ``run`` table's life cycle beside the file's
locks and processes, knows no model or unit, and every layer-3 package that starts runs or chooses
them (scoring, dynamicqa, analyses, publish) may import ``storage``.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import socket
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..sqlfiles import read_sql
from ..version import __version__
from . import procs
from .lock import proc_locks, sidecar_base
from .sandbox import private_root
from .store import Store, utcnow

KINDS = ("persuasion", "dynamic")


# -- a run from start to close ----------------------------------------------------------------


def start_run(store: Store, kind: str, **columns: Any) -> int:
    """Insert a new run row of ``kind`` with ``columns`` (model, sample_id, config_json, ...), status
    running, on this host and PID, nothing done yet; returns its run_id."""
    with store.transaction():
        run_id = store.next_id("run", "run_id")
        store.insert_arrow(
            "run",
            {
                "run_id": [run_id],
                "kind": [kind],
                **{k: [v] for k, v in columns.items()},
                "ctxprior_version": [__version__],
                "host": [socket.gethostname()],
                "pid": [os.getpid()],
                "status": ["running"],
                "units_done": [0],
                "prompts_done": [0],
                "started_at": [utcnow()],
            },
        )
    claim_driver(store.path, run_id)
    return run_id


def find_resumable(
    store: Store, kind: str, matches: Callable[[str], bool], sample_id: int | None = None
) -> int | None:
    """The newest unfinished run of ``kind`` (of ``sample_id`` when given) whose stored
    ``config_json`` ``matches``; None when there is none."""
    resumable = read_sql("ctxprior.storage", "sql/resumable_runs.sql")
    for run_id, cfg in store.query(resumable, [kind, sample_id, sample_id]):
        try:
            if matches(cfg):
                return run_id
        except (TypeError, ValueError):
            continue
    return None


def reopen_run(store: Store, run_id: int, units_total: int | None = None) -> None:
    """Mark run ``run_id`` running again on this host and PID (a resume); ``units_total`` when
    the plan was counted again. UserError when another live process drives it."""
    refuse_if_driven(store, run_id)
    claim_driver(store.path, run_id)
    store.execute(
        read_sql("ctxprior.storage", "sql/reopen_run.sql"),
        [socket.gethostname(), os.getpid(), units_total, run_id],
    )


@dataclass
class RunOutcome:
    """What the units of one call did; ``status`` is the run's status at the end of ``closing``."""

    status: str = "failed"
    n_done: int = 0
    n_failed: int = 0
    errors: list[str] = field(default_factory=list)


@contextmanager
def closing(
    store: Store,
    run_id: int,
    *,
    recount: Callable[[Store, int], Any] | None = None,
    record_crash: bool = False,
) -> Iterator[RunOutcome]:
    """The block that computes and commits a run's units; the run row is closed when it ends.

    The block sets ``outcome.status`` (``done``, ``failed``, or ``running`` to leave the run open).
    Ctrl-C or SIGTERM (``sigterm_interrupts``) -> ``cancelled``; an exception -> ``failed`` (with
    ``record_crash``, its ``Type: message`` is the run's error). ``recount``: refresh the run's
    counts in the closing transaction."""
    out = RunOutcome()
    try:
        yield out
    except KeyboardInterrupt:
        out.status = "cancelled"
        raise
    except Exception as e:
        out.status = "failed"
        if record_crash:
            out.errors.append(f"{type(e).__name__}: {e}")
        raise
    finally:
        if out.status != "running":
            close_run(store, run_id, out.status, out.errors, recount)
        release_driver(store.path, run_id)


def close_run(
    store: Store,
    run_id: int,
    status: str,
    errors: Sequence[str] = (),
    recount: Callable[[Store, int], Any] | None = None,
) -> None:
    """Final counts (``recount``), status, end time and, unless done, the joined errors; never
    raises (the warehouse may be the thing that failed)."""
    try:
        with store.transaction():
            if recount is not None:
                recount(store, run_id)
            store.execute(
                "UPDATE run SET status = ?, ended_at = ?, error = ? WHERE run_id = ?",
                [status, utcnow(), ("; ".join(errors)[:2000] or None) if status != "done" else None, run_id],
            )
    except Exception:
        pass


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While a run computes, SIGTERM (``ctxprior runs cancel``) stops it like Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


# -- runs from outside ------------------------------------------------------------------------


def run_kind(store: Store, run_id: int) -> str:
    """The kind of run ``run_id`` (persuasion or dynamic); UserError when there is no such run."""
    kind = store.scalar("SELECT kind FROM run WHERE run_id = ?", [run_id])
    if kind is None:
        raise UserError(f"run {run_id}: no such run in {store.path}; see `ctxprior runs`")
    return kind


def default_runs(store: Store, kind: str | None = None, with_results: bool = False) -> list[int]:
    """The runs used when none are given, in run_id order.

    - ``kind="persuasion"``: the finished persuasion runs (``analyze``; the SQL view
      ``analysis_runs`` applies the same rule when no run_ids are set);
    - ``kind="dynamic"``: the dynamic runs with scores, finished or not (``analyze``,
      ``analyze-dynamic``);
    - ``kind=None``: every finished run (``publish``);
    - ``with_results``: the runs with stored analysis rows, else every finished run (figures, report).
    """
    if "run" not in store.table_names():
        return []
    if with_results:
        ids = [r[0] for r in store.query(read_sql("ctxprior.storage", "sql/runs_with_results.sql"))]
        if ids:
            return ids
    if kind == "dynamic":
        return [r[0] for r in store.query(read_sql("ctxprior.storage", "sql/dynamic_runs_with_scores.sql"))]
    return [r[0] for r in store.query(read_sql("ctxprior.storage", "sql/done_runs.sql"), [kind, kind])]


# -- who drives a run ------------------------------------------------------------------------


def _driver_file(path: str, run_id: int) -> str:
    """``<db>.run-<id>.driver`` beside the warehouse, named from ``lock.sidecar_base`` (links
    resolved; every hard link of the file in its folder names the same driver file)."""
    return f"{sidecar_base(path)}.run-{int(run_id)}.driver"


def _identity_driver_file(path: str, run_id: int) -> str | None:
    """The same proof keyed by the file's identity alone: ``<tmp>/ctxprior-<uid>/<dev>-<ino>.run-<id>
    .driver``, so a name of the warehouse in another folder (a hard link there has side files of
    its own) finds a live driver too. None when the file or a private folder (this user's, mode
    0700, not a link) is not there to use."""
    ident = _file_identity(path)
    if ident is None:
        return None
    folder = private_root()  # the system's temp folder's, whatever CTXPRIOR_DUCKDB_TEMP says
    if folder is None:
        return None
    return os.path.join(folder, f"{ident[0]}-{ident[1]}.run-{int(run_id)}.driver")


def _driver_files(path: str, run_id: int) -> list[str]:
    """Where run ``run_id``'s driver proof is written and read: beside the warehouse, and by the
    file's identity (``_identity_driver_file``)."""
    keyed = _identity_driver_file(path, run_id)
    return [_driver_file(path, run_id), *([keyed] if keyed else [])]


def _file_identity(path: str) -> list[int] | None:
    """The warehouse file's identity (st_dev, st_ino): a driver file proves a run of that file only."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_dev, st.st_ino]


_DRIVER_LOCKS: dict[str, int] = {}
"""The driver locks this process holds: lock file -> its descriptor."""


def _forget_driver_locks_in_child() -> None:
    for fd in _DRIVER_LOCKS.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _DRIVER_LOCKS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_driver_locks_in_child)


def _driver_lock_file(path: str, run_id: int) -> str | None:
    """The run's driver lock, in the private folder (``_identity_driver_file``); None without one."""
    keyed = _identity_driver_file(path, run_id)
    return None if keyed is None else keyed + ".lock"


def _open_driver_lock(lock_file: str, create: bool) -> int | None:
    """A descriptor of the driver lock (a regular file of this user, never through a link)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock_file, flags | (os.O_CREAT if create else 0), 0o600)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        return None
    return fd


def _hold_driver_lock(path: str, run_id: int) -> None:
    """Take run ``run_id``'s driver lock (kept until ``release_driver``); nothing when it cannot be
    taken (no private folder, another process holds it): then this driver is marked, not signalled."""
    lock_file = _driver_lock_file(path, run_id)
    if lock_file is None or lock_file in _DRIVER_LOCKS:
        return
    fd = _open_driver_lock(lock_file, create=True)
    if fd is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return
    _DRIVER_LOCKS[lock_file] = fd


def _release_driver_lock(path: str, run_id: int) -> None:
    lock_file = _driver_lock_file(path, run_id)
    fd = _DRIVER_LOCKS.pop(lock_file, None) if lock_file else None
    if fd is not None:
        os.close(fd)


def _holds_driver_lock(path: str, run_id: int, pid: int) -> bool:
    """Whether process ``pid`` holds run ``run_id``'s driver lock (``/proc/locks`` names the PID that
    took it; without ``/proc``, whether any process holds it)."""
    lock_file = _driver_lock_file(path, run_id)
    if lock_file is None:
        return False
    if lock_file in _DRIVER_LOCKS:
        return pid == os.getpid()
    held = proc_locks(lock_file)
    if held is not None:
        return ("FLOCK", "WRITE", str(int(pid))) in held
    fd = _open_driver_lock(lock_file, create=False)
    if fd is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def claim_driver(path: str, run_id: int) -> None:
    """Record this process as the driver of run ``run_id`` (the file ``driver_pid`` checks) and take
    the run's driver lock (the part of the proof a forged file cannot give)."""
    _hold_driver_lock(path, run_id)
    proof = {
        "host": socket.gethostname(),
        **procs.record(),
        "warehouse": _file_identity(path),
        "token": secrets.token_hex(16),
    }
    for f in _driver_files(path, run_id):
        procs.write_marker(f, proof)  # no proof on failure: marked, not signalled


def release_driver(path: str, run_id: int) -> None:
    """Remove the driver file of run ``run_id`` when it names this process."""
    for f in _driver_files(path, run_id):
        procs.remove_marker(f)
    _release_driver_lock(path, run_id)


def driver_pid(path: str, run_id: int, host: str | None, pid: int | None) -> int | None:
    """``pid`` when it is proven to drive run ``run_id`` of the warehouse at ``path`` now: the row's
    host is this host, the driver file (a regular file, read without blocking) names that host, that
    PID and this warehouse file's identity (st_dev, st_ino), and the live process has the start time
    and command line the file recorded (``procs.proven``). None otherwise (never for a bare row)."""
    if not pid or host != socket.gethostname():
        return None
    for f in _driver_files(path, run_id):
        found = _proven_driver(procs.read_marker(f), path, host, pid)
        if found is not None and _holds_driver_lock(path, run_id, found):
            return found
    return None


def _proven_driver(proof: dict | None, path: str, host: str, pid: int) -> int | None:
    if proof is None or proof.get("host") != host or not proof.get("token"):
        return None
    try:
        if int(proof.get("pid") or 0) != int(pid):
            return None
    except (TypeError, ValueError):
        return None
    if proof.get("warehouse") != _file_identity(path):
        return None
    return procs.proven(proof)


def refuse_if_driven(store: Store, run_id: int) -> None:
    """UserError when another live process on this host is proven to drive run ``run_id``."""
    row = store.query("SELECT host, pid, status FROM run WHERE run_id = ?", [run_id])
    if not row or row[0][2] != "running":
        return
    pid = driver_pid(store.path, run_id, row[0][0], row[0][1])
    if pid is not None and pid != os.getpid():
        raise UserError(
            f"run {run_id} is running in PID {pid} on this host; wait for it to finish, "
            f"or stop it with `ctxprior runs cancel {run_id}` and resume it then"
        )


def _alive_here(path: str, run_id: int, host: str | None, pid: int | None) -> bool | None:
    """True when run ``run_id``'s driver is proven alive on this host, False when it is not, None
    when the row names another host (or no PID)."""
    if not pid or host != socket.gethostname():
        return None
    return driver_pid(path, run_id, host, pid) is not None


def list_runs(store: Store, run_id: int | None = None) -> list[dict]:
    """Runs of every kind with status, units done/total, failed units, prompts/s and the first error."""
    rows = store.query(read_sql("ctxprior.storage", "sql/list_runs.sql"), [run_id, run_id])
    out = []
    now = None
    for (
        rid,
        kind,
        model,
        sample,
        status,
        done,
        total,
        prompts,
        start,
        end,
        host,
        pid,
        err,
        nfail,
        ferr,
        last,
    ) in rows:
        if now is None:
            now = utcnow()
        stop = end or (now if status == "running" else last) or now
        secs = max((stop - start).total_seconds(), 1e-9) if start else None
        alive = _alive_here(store.path, rid, host, pid)
        shown = status
        if status == "running" and alive is False:
            shown = "stopped"  # its process is gone (killed / crashed): resume it
        out.append(
            {
                "run_id": rid,
                "kind": kind,
                "model": model,
                "sample_id": sample,
                "status": shown,
                "units_done": done or 0,
                "units_total": total or 0,
                "units_failed": int(nfail or 0),
                "prompts": int(prompts or 0),
                "prompts_per_s": (prompts or 0) / secs if secs else None,
                "host": host,
                "pid": pid,
                "error": err or ferr,
            }
        )
    return out


def cancel_run(
    path: str, run_id: int, timeout: float = 60.0, wait: float = 0.0, log: Callable[[str], None] | None = None
) -> str:
    """Stop run ``run_id`` (any kind): SIGTERM its driver when it is proven to run on this host
    (``driver_pid``; finished units are kept), wait for it to stop, mark it cancelled. A PID the row
    names without that proof (an imported row, a reused PID) is never signalled. Returns the run's
    status afterwards."""
    from .store import open_store

    log = log or (lambda m: None)
    with open_store(path, read_only=True, wait=wait) as store:
        info = list_runs(store, run_id)
    if not info:
        raise UserError(f"run {run_id}: no such run in {path}; see `ctxprior runs`")
    r = info[0]
    if r["status"] in ("done", "cancelled"):
        return r["status"]
    pid = driver_pid(path, run_id, r["host"], r["pid"])
    if r["status"] == "running" and pid is None and r["host"] != socket.gethostname():
        raise UserError(
            f"run {run_id} runs on host {r['host']} (PID {r['pid']}); interrupt it there "
            "(Ctrl-C), then cancel it here"
        )
    if pid is not None:
        _stop_driver(path, run_id, r["host"], pid, timeout, log)
    elif r["pid"] and r["host"] == socket.gethostname() and procs.alive(int(r["pid"])):
        log(f"PID {r['pid']} is not proven to drive run {run_id}; it was not signalled")
    with open_store(path, wait=max(wait, 30.0)) as store:
        with store.transaction():
            store.execute(read_sql("ctxprior.storage", "sql/cancel_run.sql"), [utcnow(), run_id])
        return store.scalar("SELECT status FROM run WHERE run_id = ?", [run_id])


def _stop_driver(
    path: str, run_id: int, host: str, pid: int, timeout: float, log: Callable[[str], None]
) -> None:
    """SIGTERM run ``run_id``'s proven driver ``pid`` and wait up to ``timeout`` s for it to stop."""
    import time

    os.kill(pid, signal.SIGTERM)
    log(f"sent SIGTERM to PID {pid}; waiting for it to stop")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and driver_pid(path, run_id, host, pid):
        time.sleep(0.2)
    if driver_pid(path, run_id, host, pid):
        raise UserError(
            f"run {run_id}: PID {pid} did not stop within {timeout:g} s; "
            "try again or kill it (finished units are kept)"
        )


def stored_config(store: Store, run_id: int) -> dict:
    """The options run ``run_id`` was started with (its ``config_json``)."""
    row = store.query("SELECT config_json FROM run WHERE run_id = ?", [run_id])
    if not row:
        raise UserError(f"run {run_id}: no such run in {store.path}; see `ctxprior runs`")
    return json.loads(row[0][0] or "{}")
