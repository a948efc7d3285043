"""The one SQLAlchemy MetaData every table module registers on, and the short forms the table
modules declare with: ``table`` (a table on it), ``col`` (a column), ``ref`` / ``refs`` (id
columns that point at another table's id). Each makes exactly the SQLAlchemy object it names, so
the DDL (``tables.sql``) and the docs generated from the declarations are those of plain
``Table(...)`` / ``Column(...)`` calls."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, MetaData, Table

metadata = MetaData()

# The SQL type of ``<table>_id`` where ``ref`` makes it: contexts are many per sample (BIGINT),
# every other id is an INTEGER.
_ID_TYPES: dict[str, Any] = {"context": BigInteger}


def table(name: str, *items: Any, comment: str | None = None, **kw: Any) -> Table:
    """``Table(name, metadata, *items, comment=comment, **kw)``."""
    return Table(name, metadata, *items, comment=comment, **kw)


def col(
    name: str,
    type_: Any,
    comment: str | None = None,
    *,
    null: bool = True,
    pk: bool = False,
    fk: str | None = None,
    unique: bool = False,
    server_default: str | None = None,
) -> Column:
    """A column: ``pk`` a part of the primary key (never NULL), ``null=False`` NOT NULL, ``fk``
    the ``table.column`` it references; a flag left at its default is not passed to ``Column``."""
    kw: dict[str, Any] = {"comment": comment}
    if pk:
        kw["primary_key"] = True
    if not null:
        kw["nullable"] = False
    if unique:
        kw["unique"] = True
    if server_default is not None:
        kw["server_default"] = server_default
    return Column(name, type_, *([ForeignKey(fk)] if fk else []), **kw)


def ref(target: str, comment: str | None = None, *, null: bool = True, pk: bool = False) -> Column:
    """``<target>_id``, referencing ``<target>.<target>_id`` (its type: ``_ID_TYPES``)."""
    name = f"{target}_id"
    return col(name, _ID_TYPES.get(target, Integer), comment, null=null, pk=pk, fk=f"{target}.{name}")


def refs(*targets: str, null: bool = True, pk: bool = False) -> list[Column]:
    """``ref`` of each target, in order, without comments: a score table's keys."""
    return [ref(t, null=null, pk=pk) for t in targets]
