"""The warehouse's lock: ``flock`` on ``<db>.lock``, a lock no other file access can drop.

DuckDB locks its file with a POSIX record lock (``fcntl``). Such a lock belongs to the process,
and closing *any* descriptor of the file drops it (``fcntl(2)``): a command that reads a link of
the warehouse as an input, even one byte, leaves the process unlocked. So ctxprior takes its own
lock first: ``flock`` on the lock file beside the warehouse, exclusive for a read-write open,
shared for a read-only one, before DuckDB's open, released after DuckDB's close. An ``flock``
belongs to the open file description, so only closing that one descriptor releases it.

- **Where**: :func:`sidecar_base` names the warehouse for every file beside it (this lock, the
  ``.writer`` / ``.write-intent`` markers, the run driver files): the real path, links resolved;
  for a file with several hard links in its folder, the first of those names (sorted) that has a
  lock file, else the first name, so every name of the file in that folder shares them.
- **How it is opened**: never through a link (``O_NOFOLLOW``), without blocking (``O_NONBLOCK``),
  and only a lock file that is a lock file is locked: a regular file with one link (a hard link of
  the warehouse, or of any other file, is refused: locking it would be a lock on that file) that
  is not the warehouse; a link, a FIFO or a device there is refused in one line. A lock file that
  exists but cannot be opened (``chmod 000``) is one line, never a command run without the lock.
  Only a folder where the lock file is absent and cannot be created (read-only) is read without it
  (DuckDB's lock still excludes writers there).
- **One process, one lock**: a process keeps one descriptor per lock file and counts its users
  (DuckDB shares one database per file in a process, too). A forked child closes its copies.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from dataclasses import dataclass

from ..errors import UserError

LOCK_SUFFIX = ".lock"
_MAX_SCAN = 100_000


def sidecar_base(path: str) -> str:
    """The name the side files of the warehouse at ``path`` are made from (module docstring)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return real
    if st.st_nlink <= 1 or not stat.S_ISREG(st.st_mode):
        return real
    folder = os.path.dirname(real)
    names = []
    try:
        with os.scandir(folder) as it:
            for i, entry in enumerate(it):
                if i >= _MAX_SCAN:
                    break
                try:
                    if entry.inode() == st.st_ino and entry.is_file(follow_symlinks=False):
                        names.append(entry.path)
                except OSError:
                    continue
    except OSError:
        return real
    names.sort()
    for n in names:
        if os.path.lexists(n + LOCK_SUFFIX):
            return n
    return names[0] if names else real


def lock_path(path: str) -> str:
    return sidecar_base(path) + LOCK_SUFFIX


class Busy(Exception):
    """The lock is held by another process (``pid`` when ``/proc/locks`` names it)."""

    def __init__(self, pid: int | None):
        super().__init__(pid)
        self.pid = pid


@dataclass
class _Held:
    fd: int
    exclusive: bool
    users: int
    key: tuple[int, int]


_HELD: dict[tuple[int, int], _Held] = {}


def _forget_in_child() -> None:
    # a forked child shares the parent's open file descriptions: closing its copies leaves the
    # parent's lock in place, and the child holds nothing
    for h in list(_HELD.values()):
        try:
            os.close(h.fd)
        except OSError:
            pass
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _open(path: str, db: str) -> int | None:
    """A descriptor of the lock file (created when missing); None only where it is absent and
    cannot be created (a read-only folder)."""
    base = os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = None
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            fd = os.open(path, flags | base, 0o666)
            break
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise UserError(
                    f"lock file {path} of warehouse {db} is a symbolic link; remove it and rerun"
                ) from None
            if e.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
                continue
            if e.errno == errno.ENOENT:
                return None
            raise UserError(f"cannot open lock file {path} of warehouse {db}: {e.strerror}") from None
    if fd is None:
        if os.path.lexists(path):  # there, but not ours to open: never run without the lock
            raise UserError(
                f"cannot open lock file {path} of warehouse {db} (permission denied); "
                "give it read permission (chmod 644) or remove it, and rerun"
            )
        return None
    _check_lock_file(fd, path, db)
    return fd


def _check_lock_file(fd: int, path: str, db: str) -> None:
    """Close ``fd`` and refuse in one line unless it is a lock file: a regular file with one link
    that is not the warehouse."""
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "is not a regular file"
    elif st.st_nlink != 1:
        problem = f"has {st.st_nlink} names (a hard link of another file)"
    else:
        try:
            wst = os.stat(db)
            if (wst.st_dev, wst.st_ino) == (st.st_dev, st.st_ino):
                problem = "is the warehouse itself"
        except (OSError, ValueError):
            pass
    if problem:
        os.close(fd)
        raise UserError(f"lock file {path} of warehouse {db} {problem}; remove it and rerun")


def proc_locks(path: str) -> list[tuple[str, str, str]] | None:
    """The locks held on ``path`` as ``/proc/locks`` lists them: (kind ``FLOCK`` / ``POSIX``, mode
    ``READ`` / ``WRITE``, PID) each, waiters left out; None where unknown (no /proc, no file)."""
    try:
        ino = str(os.stat(path).st_ino)
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    held = []
    for line in lines:
        parts = line.split()
        if "->" in parts or len(parts) < 6:  # "->": a waiter blocked on a lock, not a lock held
            continue
        if parts[5].rsplit(":", 1)[-1] == ino:
            held.append((parts[1], parts[3], parts[4]))
    return held


def holder(path: str, exclusive: bool) -> int | None:
    """The PID ``/proc/locks`` names as holding an ``flock`` on ``path`` that conflicts with the
    one wanted (any, for an exclusive lock; a WRITE one, for a shared lock); None where unknown or
    gone by now (it let go after the try: readers that came in since are no conflict)."""
    me = str(os.getpid())
    for kind, mode, pid in proc_locks(path) or ():
        if kind == "FLOCK" and pid != me and (exclusive or mode == "WRITE"):
            return int(pid) if pid.isdigit() else None
    return None


class Lock:
    """This process's hold of one warehouse's lock file (released once, by :meth:`release`)."""

    def __init__(self, held: _Held | None):
        self._held = held

    def release(self) -> None:
        h, self._held = self._held, None
        if h is None:
            return
        h.users -= 1
        if h.users <= 0:
            _HELD.pop(h.key, None)
            try:
                os.close(h.fd)  # the only descriptor of this open file description: the lock goes
            except OSError:
                pass


def acquire(db: str, exclusive: bool) -> Lock:
    """Take the warehouse's lock without waiting (the caller retries): exclusive or shared.
    Raises :class:`Busy` when another process holds it in a conflicting mode."""
    path = lock_path(db)
    fd = _open(path, db)
    if fd is None:
        return Lock(None)
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    held = _HELD.get(key)
    if held is not None:  # this process holds it already: one descriptor, counted
        os.close(fd)  # another description of the file: closing it leaves the flock in place
        if exclusive and not held.exclusive:
            raise UserError(
                f"this process has warehouse {db} open read-only; close it before opening it for writing"
            )
        held.users += 1
        return Lock(held)
    mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    for attempt in (1, 2):
        try:
            fcntl.flock(fd, mode)
            break
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                pid = holder(path, exclusive)
                if pid is None and attempt == 1:  # the holder let go since the try: once more now
                    continue
                os.close(fd)
                raise Busy(pid) from None
            os.close(fd)
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                return Lock(None)  # a file system without flock: DuckDB's lock alone
            raise
    held = _Held(fd, exclusive, 1, key)
    _HELD[key] = held
    return Lock(held)
