"""Where a command may write: the one rule every writer of a user-named path follows.

A path the user names for output (``report --out``, ``figures --out``, ``export parquet DIR``,
``publish --dry-run DIR``, ``wh.datasets.write_demo_corpus(path)``, ...) is checked here before anything
is written:

- it is never the warehouse itself or one of its side files (``.wal``, ``.write-intent``), however
  it is spelled (symlinks and hard links resolved), and a folder that is cleared or filled never
  holds the warehouse;
- an existing file is replaced only when the user says so (``--overwrite``, ``overwrite=True``).

Each refusal is a one-line :class:`UserError` (exit 2), raised before the command writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .errors import UserError

SIDE_FILES = ("", ".wal", ".write-intent")


def _protected(warehouse: str | os.PathLike) -> list[str]:
    """The warehouse's file and side files, as given and resolved."""
    db = os.fspath(warehouse)
    out = []
    for base in dict.fromkeys([db, os.path.realpath(db)]):
        out += [base + s for s in SIDE_FILES]
    return out


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def is_warehouse_file(path: str | os.PathLike, warehouse: str | os.PathLike) -> bool:
    """Whether ``path`` names the warehouse or one of its side files."""
    p = os.fspath(path)
    return any(_same_file(p, w) for w in _protected(warehouse))


def check_output_file(
    path: str | os.PathLike, warehouse: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """``path`` as a file this command may write: not the warehouse, not a folder, and not an
    existing file unless ``overwrite``; UserError otherwise."""
    p = Path(path)
    if is_warehouse_file(p, warehouse):
        raise UserError(f"{path}: is the warehouse ({os.fspath(warehouse)}); write to another path")
    if p.is_dir():
        raise UserError(f"{path}: is a folder; give a file name")
    if (p.exists() or p.is_symlink()) and not overwrite:
        raise UserError(
            f"{path}: file exists; pass --overwrite (overwrite=True) to replace it, or another path"
        )
    return p


def check_output_files(
    paths: Iterable[str | os.PathLike], warehouse: str | os.PathLike, *, overwrite: bool = False
) -> list[Path]:
    """:func:`check_output_file` for each of ``paths``, all before any is written."""
    return [check_output_file(p, warehouse, overwrite=overwrite) for p in paths]


def check_output_dir(path: str | os.PathLike, warehouse: str | os.PathLike) -> Path:
    """``path`` as a folder this command may fill (or clear): not a file, and not holding the
    warehouse or its side files; UserError otherwise."""
    p = Path(path)
    if is_warehouse_file(p, warehouse):
        raise UserError(f"{path}: is the warehouse ({os.fspath(warehouse)}); write to another folder")
    if p.exists() and not p.is_dir():
        raise UserError(f"{path}: exists and is not a folder; pass a folder path")
    top = os.path.realpath(p)
    for w in _protected(warehouse):
        if os.path.exists(w) and os.path.realpath(w).startswith(top.rstrip(os.sep) + os.sep):
            raise UserError(
                f"{path}: holds the warehouse ({os.fspath(warehouse)}); write to a folder without it"
            )
    return p
