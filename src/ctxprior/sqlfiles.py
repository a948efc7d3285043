"""Named SQL files shipped inside the package (``ctxprior/<area>/.../*.sql``)."""

from functools import cache
from importlib import resources


@cache
def read_sql(package: str, name: str) -> str:
    """Text of ``name`` inside ``package``, e.g. ``read_sql("ctxprior.ingest", "sql/facts.sql")``."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def split_statements(text: str) -> list[str]:
    """The statements of a SQL script, as DuckDB's parser splits it (``extract_statements``)."""
    import duckdb

    return [stmt.query for stmt in duckdb.extract_statements(text)]


def glob_escaped(path: str) -> str:
    """``path`` as a glob pattern naming exactly that file: ``*``, ``?`` and ``[`` become the
    one-character classes ``[*]``, ``[?]`` and ``[[]``."""
    import re

    return re.sub(r"([*?\[])", r"[\1]", str(path))


def path_sql(path: str) -> str:
    """A SQL string literal naming exactly the file ``path`` for DuckDB's readers (read_csv,
    read_parquet, ...), which expand glob patterns (``glob_escaped``), so ``data[1].nt`` reads that
    file, not ``data1.nt``."""
    return "'" + glob_escaped(path).replace("'", "''") + "'"


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (``"a""b"``), for the places where DuckDB takes no
    parameter: table, view and column names. The only way names are formatted into our SQL."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(value: int | float | str | None) -> str:
    """``value`` as a SQL literal, for the statements that take no parameter (CREATE VIEW bodies,
    SET): None as NULL, an int or float as written by ``repr`` (checked to be one), a string quoted."""
    if value is None:
        return "NULL"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"not a SQL literal: {value!r}")
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def body(text: str) -> str:
    """``text`` without its leading comment block: the SQL a view body or a template keeps."""
    lines = text.splitlines()
    while lines and (lines[0].startswith("--") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)
