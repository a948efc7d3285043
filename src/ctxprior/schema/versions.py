"""Schema versions: the current version, the registry of migration steps, and the check made
when a warehouse is opened. The steps themselves are in ``migrations.py`` (imported by the
package, so the registry is full whenever ``ctxprior.schema`` is)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UserError

SCHEMA_VERSION = 4

# version N -> function(warehouse) that upgrades a version-N warehouse to N+1
MIGRATIONS: dict[int, Callable] = {}


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
    missing = [v for v in range(found, current) if v not in MIGRATIONS]
    if missing:
        raise UserError(
            f"warehouse {path} has schema v{found} and no migration exists from v{missing[0]}; "
            f"export it with an older ctxprior (`ctxprior export parquet DIR`) and re-import"
        )
    raise UserError(
        f"warehouse {path} has schema v{found}, this ctxprior uses v{current}; "
        f"run `ctxprior --db {path} migrate` (a backup copy is made first)"
    )
