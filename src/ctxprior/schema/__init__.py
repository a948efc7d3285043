"""What the warehouse is: its tables (SQLAlchemy Core, one module per area, on ``base.metadata``),
its views (``views/*.sql``), the DuckDB DDL both make (``tables.sql``, generated from the tables;
``declared.py``) and the schema version (``versions.py``). Opening, locking and migrating a file
is ``ctxprior.storage``'s.

Importing this package is light: the table modules (and SQLAlchemy) load on first use of
``metadata`` or ``tables()``, so a read-only command that opens a warehouse never imports them.
Every module here that defines tables is loaded then (no central list to edit).

Layer 1, above only layer 0. Import rules: the package table in docs/architecture.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

from .versions import SCHEMA_VERSION

if TYPE_CHECKING:
    from sqlalchemy import MetaData

__all__ = ["SCHEMA_VERSION", "metadata", "tables"]

_NOT_TABLES = {"base", "declared", "versions"}


def tables() -> MetaData:
    """``base.metadata`` with every table module of this package loaded on it."""
    for m in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if m not in _NOT_TABLES:
            importlib.import_module(f"{__name__}.{m}")
    from .base import metadata

    return metadata


def __getattr__(name: str):
    if name == "metadata":  # `from ctxprior.schema import metadata`: every table on it
        return tables()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
