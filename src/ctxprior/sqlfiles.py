"""Named SQL files shipped inside the package (``ctxprior/<area>/.../*.sql``)."""

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def read_sql(package: str, name: str) -> str:
    """Text of ``name`` inside ``package``, e.g. ``read_sql("ctxprior.ingest", "sql/facts.sql")``."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def split_statements(text: str) -> list[str]:
    """Split a SQL script on ';' at line ends (our files never put ';' inside strings at EOL)."""
    out, cur = [], []
    for line in text.splitlines():
        cur.append(line)
        if line.rstrip().endswith(";"):
            stmt = "\n".join(cur).strip()
            if stmt.strip(";").strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in cur):
                out.append(stmt)
            cur = []
    rest = "\n".join(cur).strip()
    if rest and not all(ln.strip().startswith("--") or not ln.strip() for ln in cur):
        out.append(rest)
    return out


def path_sql(path: str) -> str:
    """A SQL string literal naming exactly the file ``path`` for DuckDB's readers (read_csv,
    read_parquet, ...), which expand glob patterns: ``*``, ``?`` and ``[`` become the one-character
    classes ``[*]``, ``[?]`` and ``[[]``, so ``data[1].nt`` reads that file, not ``data1.nt``."""
    import re

    return "'" + re.sub(r"([*?\[])", r"[\1]", str(path)).replace("'", "''") + "'"
