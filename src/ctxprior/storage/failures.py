"""How a failed write or read of DuckDB or the OS becomes one line: a full disk, a read-only file
system or a lost permission names the file and says the last commit is intact."""

from __future__ import annotations

import errno
import os
import re

import duckdb

from ..errors import UserError

_IO_WORDS = (
    "No space",
    "Permission denied",
    "File too large",
    "Read-only file system",
    "Could not write",
    "Could not open",
    "Could not truncate",
    "Disk quota",
    "fsync",
)


def is_io_error(e: BaseException) -> bool:
    return isinstance(e, (duckdb.IOException, OSError)) or any(w in str(e) for w in _IO_WORDS)


IO_ERRORS = (duckdb.IOException, OSError)
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}


def is_write_fault(e: BaseException) -> bool:
    """A full disk, a read-only file system, a lost permission (not a missing input file)."""
    if isinstance(e, OSError) and not isinstance(e, duckdb.Error):
        return e.errno in _WRITE_ERRNOS
    return any(w in str(e) for w in _IO_WORDS)


def _detail(e: BaseException) -> str:
    """The first line of an I/O error; DuckDB's async writes wrap the cause in JSON."""
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    m = re.search(r'"exception_message":"((?:[^"\\]|\\.)*)"', first)
    if m:
        try:
            import json

            first = "IO Error: " + json.loads(f'"{m.group(1)}"')
        except ValueError:
            pass
    return first


def io_error(path: str, e: BaseException) -> UserError:
    """A write fault of a command as one line: the warehouse's own file, or an output file."""
    detail = _detail(e)
    if os.path.basename(path) in detail and not re.search(r"\.(parquet|csv|json|html|png)\b", detail):
        return write_error(path, e)
    return UserError(
        f"cannot write: {detail}; the warehouse {path} is intact "
        "(free disk space / fix permissions or choose another folder, then rerun)"
    )


def write_error(path: str, e: BaseException) -> UserError:
    """A failed write (disk full, no permission, ...) as one line; the last commit stays intact."""
    first = _detail(e)
    return UserError(
        f"cannot write warehouse {path}: {first}; the last committed state is intact "
        "(free disk space / fix permissions, then rerun or resume)"
    )
