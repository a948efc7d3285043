"""The one rule for "is this process alive, and is it the one a file names" (psutil), and the
marker files that name a process (``<db>.writer``, ``<db>.write-intent``, ``<db>.run-N.driver``).

- :func:`alive`: the PID exists and is not a zombie (a killed process not yet reaped holds
  nothing). Used where a bare PID is all there is (a build folder named by its PID).
- :func:`record` / :func:`proven`: a file that names a process records its PID, its start time
  (``psutil.Process.create_time``) and its command line; the file is proof only while a live
  process has that PID, that start time and that command line. A PID reused after a crash, a
  marker copied from elsewhere or forged (``echo "$! sleep" > wh.duckdb.writer``) proves nothing.
- :func:`read_marker`: a marker file is opened only when it is a regular file (no link followed),
  without blocking (``O_NONBLOCK``: a FIFO there cannot hang a command), and read up to 64 KiB.
"""

from __future__ import annotations

import json
import os
import stat
import sys

import psutil

MAX_MARKER = 1 << 16


def _process(pid: int) -> psutil.Process | None:
    try:
        p = psutil.Process(int(pid))
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        return p
    except (psutil.Error, ValueError, OverflowError, TypeError):
        return None


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        if int(pid) <= 0:
            return False
    except (TypeError, ValueError):
        return False
    return _process(pid) is not None


def _cmdline(p: psutil.Process) -> list[str] | None:
    try:
        return list(p.cmdline())
    except psutil.Error:
        return None


def record(pid: int | None = None) -> dict:
    """What a marker records of process ``pid`` (this one by default): PID, start time, command."""
    pid = os.getpid() if pid is None else int(pid)
    p = _process(pid)
    started = p.create_time() if p is not None else None
    cmd = (_cmdline(p) if p is not None else None) or [sys.argv[0]]
    return {"pid": pid, "started": started, "cmdline": cmd}


def proven(rec: object) -> int | None:
    """The PID ``rec`` (a marker's record) names when a live process with that PID, start time and
    command line exists; None otherwise."""
    if not isinstance(rec, dict):
        return None
    try:
        pid = int(rec["pid"])
        started = float(rec["started"])
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    cmd = rec.get("cmdline")
    if pid <= 0 or not isinstance(cmd, list):
        return None
    p = _process(pid)
    if p is None:
        return None
    try:
        if abs(p.create_time() - started) > 0.05:
            return None
    except psutil.Error:
        return None
    if _cmdline(p) != cmd:
        return None
    return pid


def describe(pid: int) -> str:
    """``pid``'s command line on one line (at most 160 characters), for messages ("in use by
    PID n (cmd)")."""
    p = _process(pid)
    cmd = _cmdline(p) if p is not None else None
    shown = " ".join(" ".join(cmd).split()) if cmd else ""
    return (shown[:157] + "...") if len(shown) > 160 else (shown or "?")


def read_marker(path: str) -> dict | None:
    """The JSON object in marker file ``path``; None when it is absent, not a regular file (a link,
    a FIFO, a device, a folder), larger than 64 KiB or not a JSON object. Never blocks."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_MARKER + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_MARKER:
        return None
    try:
        rec = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def marker_pid(path: str) -> int | None:
    """The proven PID a marker file names (:func:`proven`), never this process's own, and only a
    process that can be a ctxprior writer (:func:`loads_duckdb`): a marker naming a live ``sleep``,
    its start time and command line copied right, proves nothing and makes nobody wait."""
    pid = proven(read_marker(path))
    if pid is None or pid == os.getpid() or loads_duckdb(pid) is False:
        return None
    return pid


def loads_duckdb(pid: int) -> bool | None:
    """Whether process ``pid`` has DuckDB's library mapped (``/proc/<pid>/maps``), as every
    ctxprior writer has; None where that cannot be known (no ``/proc``). A process of another
    user whose maps cannot be read counts as not proven."""
    try:
        with open(f"/proc/{int(pid)}/maps", "rb") as f:
            return any(b"duckdb" in line for line in f)
    except FileNotFoundError:
        return None if not os.path.isdir("/proc/self") else False
    except (OSError, ValueError):
        return False


def write_marker(path: str, rec: dict) -> bool:
    """Write ``rec`` to marker ``path`` atomically (temporary file, rename); False when the folder
    is not writable (the protocol then degrades to plain lock retries)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags | os.O_NONBLOCK, 0o666)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError("not a regular file")
            os.write(fd, json.dumps(rec).encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            if os.path.isfile(tmp) and not os.path.islink(tmp):
                os.unlink(tmp)
        except OSError:
            pass
        return False


def remove_marker(path: str) -> None:
    """Remove marker ``path`` when it names this process."""
    rec = read_marker(path)
    try:
        if rec is not None and int(rec.get("pid") or 0) == os.getpid():
            os.unlink(path)
    except (OSError, TypeError, ValueError):
        pass
