"""What the package declares its warehouse to be: the SQLAlchemy tables (``base.metadata``) as
DuckDB DDL, and the view files (``views/*.sql``) with their digest. ``store`` creates them, and
``trust`` tells the package's own objects of a file from the others by building them."""

from __future__ import annotations

import hashlib
from importlib import resources

from sqlalchemy.schema import CreateTable

from .base import metadata


def dialect():
    """SQLAlchemy's DuckDB dialect, positional parameters."""
    from duckdb_engine import Dialect

    return Dialect(paramstyle="qmark")


def ddl_statements() -> list[str]:
    """CREATE TABLE statements for every table, in dependency order.

    Ids are assigned by ctxprior, so no column autoincrements. Foreign keys stay in the
    SQLAlchemy metadata (documentation, dataset card, integrity tests) but are not emitted:
    DuckDB implements an UPDATE of a referenced row as delete+insert and would refuse e.g.
    marking a run done once score rows point at it.
    """
    d = dialect()
    out = []
    for t in metadata.sorted_tables:
        for c in t.primary_key.columns:
            c.autoincrement = False
        out.append(str(CreateTable(t, include_foreign_key_constraints=[]).compile(dialect=d)).strip())
    return out


def view_scripts() -> list[tuple[str, str]]:
    """(file name, SQL text) of every view file, in name order."""
    root = resources.files("ctxprior.schema").joinpath("views")
    files = sorted((p for p in root.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


def views_digest() -> str:
    """sha256 over the view files' names and texts: stored in ``meta`` when the views are made."""
    h = hashlib.sha256()
    for name, text in view_scripts():
        h.update(f"{name}\0{text}\0".encode())
    return h.hexdigest()
