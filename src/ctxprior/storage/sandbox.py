"""The sandbox every connection to the warehouse runs in (docs/write-protocol.md, "The sandbox"):
DuckDB's external access off, except the named reads (files and folders resolved once to their
real paths, their identities checked after a query: ``named_reads``); DuckDB's temp directory a
private folder of this process (``private_temp``); a user's input file read through a private copy
whose bytes are the bytes hashed (``private_copies``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress

import duckdb

from ..errors import UserError
from ..sqlfiles import glob_escaped, literal

Reads = Iterable[str | os.PathLike]  # the files and folders a sandboxed connection may read


def _fault(point: str) -> None:
    if os.environ.get("CTXPRIOR_FAULT"):
        from ..faults import hit

        hit(point)


NamedRead = tuple[str, bool, tuple[int, int]]  # (real path, a folder?, (st_dev, st_ino))


def named_reads(reads: Reads) -> list[NamedRead]:
    """Each of ``reads`` resolved once (links followed) to the file or folder it names now: its
    real path, whether it is a folder, and its identity ``(st_dev, st_ino)``. DuckDB is given only
    these real paths (``read_paths``), and ``Store.check_reads`` compares the identities after a
    query, so a link retargeted or a file renamed over the name later is not read as the file named.
    Paths that do not exist are left out (the command that names them says so itself)."""
    out: list[NamedRead] = []
    for p in reads:
        try:
            real = os.path.realpath(os.path.expanduser(str(p)))
            st = os.stat(real)
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            out.append((real, stat.S_ISDIR(st.st_mode), (st.st_dev, st.st_ino)))
    return out


def read_paths(reads: Reads) -> tuple[list[str], list[str]]:
    """(files, folders) of ``reads`` as DuckDB's ``allowed_paths`` / ``allowed_directories`` take
    them: only the real path each names now (``named_reads``; DuckDB resolves links on both sides
    of its check), plain and as ``sqlfiles.path_sql`` escapes glob characters (DuckDB checks the
    pattern before it expands it); folders end in ``/``. A FIFO or a device is never allowed."""
    files: list[str] = []
    dirs: list[str] = []
    for real, is_dir, _ in named_reads(reads):
        names = sorted({real, glob_escaped(real)})
        if is_dir:
            dirs += [n.rstrip("/") + "/" for n in names]
        else:
            files += names
    return files, dirs


TEMP_ENV = "CTXPRIOR_DUCKDB_TEMP"  # where the private temp folders are made (default: $TMPDIR)
_TEMP: dict[int, str] = {}  # this process's private DuckDB temp folder, by PID


def private_root(base: str | None = None) -> str | None:
    """``<base>/ctxprior-<uid>`` (``base``: the system's temp folder by default), the one folder of
    this user's own that ctxprior keeps files in (DuckDB's temp folders, private copies of inputs,
    run driver proofs): made mode 0700 when missing, and used only when it is a folder (not a
    link) of this user that no one else can enter; None otherwise."""
    import tempfile

    root = os.path.join(base or tempfile.gettempdir(), f"ctxprior-{os.getuid()}")
    try:
        with suppress(FileExistsError):
            os.mkdir(root, 0o700)
        st = os.lstat(root)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return root


@contextmanager
def private_copies(paths: Sequence[str | os.PathLike], what: str = "") -> Iterator[list[tuple[str, str]]]:
    """Each of ``paths`` copied into a new folder of this process's own (mode 0700, in
    :func:`private_temp`) while its sha256 is computed from the bytes copied (``inputs.copy_input``):
    (the copy, which keeps the file's name, its sha256) each; removed after the block. A reader
    given the copies reads exactly the bytes hashed (issue 42: a checked file is the file read).
    UserErrors of the block name the paths given, not the copies."""
    import shutil
    import tempfile

    from ..inputs import check_input, copy_input

    stage = tempfile.mkdtemp(prefix="copy-", dir=private_temp() or None)
    originals: dict[str, str] = {}
    try:
        out = []
        for i, p in enumerate(paths):
            check_input(p, what)
            if not os.path.isfile(p):
                raise UserError(f"{os.fspath(p)}: no such file")
            dst = os.path.join(stage, f"{i:04d}", os.path.basename(os.fspath(p)))
            os.mkdir(os.path.dirname(dst), 0o700)
            out.append((dst, copy_input(p, dst, what)))
            originals[dst] = os.fspath(p)
        _fault("inputs.copied")
        yield out
    except UserError as err:
        text = str(err)
        for copy, original in originals.items():
            text = text.replace(copy, original)
        raise UserError(text) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def private_temp() -> str:
    """DuckDB's temp directory for this process: a folder of its own, mode 0700, inside
    ``<tmp>/ctxprior-<uid>`` (the user's, mode 0700, not a link), removed at exit. DuckDB lets a
    sandboxed connection read its temp directory, whose default ``<db>.tmp`` a link beside the
    warehouse could point anywhere. "" (no spilling to disk) when no such folder can be made."""
    pid = os.getpid()
    if pid in _TEMP:
        return _TEMP[pid]
    import tempfile

    root = private_root(os.environ.get(TEMP_ENV))
    try:
        folder = tempfile.mkdtemp(prefix=f"duckdb-{pid}-", dir=root) if root else ""
    except OSError:
        folder = ""
    _TEMP[pid] = folder
    if folder:
        import atexit

        atexit.register(_remove_temp, folder, pid)
    return folder


def _remove_temp(folder: str, pid: int) -> None:
    """Remove ``folder`` (``private_temp``) at exit, in the process that made it only (not a fork)."""
    import shutil

    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def sandbox(
    con: duckdb.DuckDBPyConnection, read_only: bool, reads: Reads = (), threads: int | None = None
) -> None:
    """Lock ``con``'s database before any query runs on it (docs/write-protocol.md, "The sandbox"):
    DuckDB's external access off, so no query (nor a view, macro or default the file carries)
    reads or writes a file other than the warehouse, except the named ``reads`` (files, or folders
    and all below them); on a read-only open without ``reads`` the local file system off altogether
    (DuckDB would still let a query open the warehouse file itself, and a second handle on it drops
    this process's lock); then the configuration locked, so no SQL turns any of it back on.
    ``threads``: DuckDB's thread count (fixed from here on)."""
    files, dirs = read_paths(reads)
    setting = "SELECT value FROM system.main.duckdb_settings() WHERE name = ?"
    if con.execute(setting, ["lock_configuration"]).fetchall() == [("true",)]:
        # this process has the file open already (DuckDB shares one database per file): its sandbox
        # stands, and cannot be widened for this connection's reads or threads
        if (
            files
            or dirs
            or (threads is not None and con.execute(setting, ["threads"]).fetchall() != [(str(threads),)])
        ):
            con.close()
            raise UserError(
                "another connection of this process holds the warehouse with other settings "
                "(--allow-read, or an analysis); run this once it is closed"
            )
        return
    if threads is not None:
        con.execute(f"SET threads = {literal(int(threads))}")
    con.execute(f"SET temp_directory = {literal(private_temp())}")  # never <db>.tmp
    if files:
        con.execute(f"SET allowed_paths = [{', '.join(literal(f) for f in files)}]")
    if dirs:
        con.execute(f"SET allowed_directories = [{', '.join(literal(d) for d in dirs)}]")
    con.execute("SET enable_external_access = false")
    if read_only and not (files or dirs):
        con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET lock_configuration = true")
