"""The schema version this ctxprior reads and writes, and how a file's ``meta.schema_version`` is
read, and the check made when a warehouse is opened. The steps from older versions are
``storage/migrations.py``'s."""

from __future__ import annotations

from ..errors import UserError

SCHEMA_VERSION = 4
OLDEST_MIGRATABLE = 1  # storage/migrations.py has a step from each version since


def parse_schema_version(path: str, value: object) -> int:
    """``meta.schema_version`` as an int: its declared form is a non-negative integer of at most six
    digits written as text (``'3'``); anything else (``'abc'``, ``'2.0'``, ``''``, a huge number) is
    a UserError naming the value, not a ValueError from ``int()``."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or not 1 <= len(value) <= 6:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise UserError(
            f"warehouse {path}: meta.schema_version {shown} is not a schema version (a "
            "non-negative integer); the file was changed outside ctxprior"
        )
    return int(value)


def check_version(path: str, found: int, current: int) -> None:
    """UserError unless a warehouse of version ``found`` can be used by this ctxprior (``current``)."""
    if found == current:
        return
    if found > current:
        raise UserError(
            f"warehouse {path} has schema v{found}, newer than this ctxprior (v{current}); "
            "upgrade with `pip install -U ctxprior`"
        )
    if found < OLDEST_MIGRATABLE:
        raise UserError(
            f"warehouse {path} has schema v{found} and no migration exists from v{found}; "
            f"export it with an older ctxprior (`ctxprior export parquet DIR`) and re-import"
        )
    raise UserError(
        f"warehouse {path} has schema v{found}, this ctxprior uses v{current}; "
        f"run `ctxprior --db {path} migrate` (a backup copy is made first)"
    )
