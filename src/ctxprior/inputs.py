"""Which paths a command may read: never the warehouse, however it is spelled.

Every input path a command reads (a CSV or Parquet file of ``covariates add``, KG files, corpus
files, a ``fakes add`` file, a spec file, ``publish --citation``, ``sql --allow-read``, an import
folder's files, ...) goes through :func:`check_input` before it is opened. It compares the path's
identity (``st_dev``, ``st_ino``, links followed) with the warehouse file and its ``.wal`` and
refuses a match in one line (a :class:`UserError`, exit 2): a symlink or hard link of the warehouse
given as an input would otherwise open a second descriptor of the file, and closing it drops
DuckDB's POSIX lock on it (docs/write-protocol.md).

The warehouses compared with are those this process has open (``schema.store.open_store`` calls
:func:`note_warehouse`, ``Store.close`` :func:`forget_warehouse`), the command's ``--db`` (set by
the CLI at start-up, so inputs read before the warehouse is opened are checked too), and any
``warehouse`` passed explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .errors import UserError

_WAREHOUSES: dict[str, int] = {}  # the warehouses this process has open: path -> how many opens
_COMMAND: list[str] = []  # the running command's --db


def note_warehouse(path: str | os.PathLike) -> None:
    """Compare every later input with the warehouse at ``path`` (and its ``.wal``) while it is open."""
    p = os.path.abspath(os.fspath(path))
    _WAREHOUSES[p] = _WAREHOUSES.get(p, 0) + 1


def forget_warehouse(path: str | os.PathLike) -> None:
    """One open of the warehouse at ``path`` ended (the counterpart of :func:`note_warehouse`)."""
    p = os.path.abspath(os.fspath(path))
    n = _WAREHOUSES.get(p, 0) - 1
    if n > 0:
        _WAREHOUSES[p] = n
    else:
        _WAREHOUSES.pop(p, None)


def command_warehouse(path: str | os.PathLike | None) -> None:
    """The CLI's ``--db`` for the command that runs now (replaces the previous command's)."""
    _COMMAND[:] = [os.path.abspath(os.fspath(path))] if path else []


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def warehouse_of(path: str | os.PathLike, warehouse: str | os.PathLike | None = None) -> str | None:
    """The warehouse (or its ``.wal``) that ``path`` is, by device and inode; None when none."""
    try:
        p = os.path.expanduser(os.fspath(path))
    except TypeError:
        return None
    if not p or "\0" in p:
        return None
    ident = _identity(p)
    if ident is None:
        return None
    bases = [*_COMMAND, *_WAREHOUSES]
    if warehouse is not None:
        bases.insert(0, os.fspath(warehouse))
    for base in bases:
        for f in (base, base + ".wal"):
            if _identity(f) == ident:
                return base
    return None


def check_input(path: str | os.PathLike, what: str = "", warehouse: str | os.PathLike | None = None) -> None:
    """Refuse ``path`` in one line when it is the warehouse or its WAL (a symlink, a hard link, the
    same name): call before opening any input. ``what`` names the option in the message."""
    base = warehouse_of(path, warehouse)
    if base is not None:
        label = f"{what} {os.fspath(path)}" if what else os.fspath(path)
        raise UserError(
            f"{label}: is the warehouse {base} (the same file by device and inode); "
            "give another file, or query its tables"
        )


def check_inputs(
    paths: Iterable[str | os.PathLike], what: str = "", warehouse: str | os.PathLike | None = None
) -> None:
    for p in paths:
        check_input(p, what, warehouse)
