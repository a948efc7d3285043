"""Comparing warehouse files: ``snapshot`` (every table's rows: "the warehouse is exactly as it
was") and ``assert_same_warehouse`` (same tables, columns, types and rows)."""

from __future__ import annotations

import textwrap

import duckdb


def snapshot(db: str) -> dict:
    """Every table's rows, sorted: 'the warehouse is exactly as it was'."""
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type='BASE TABLE'"
            ).fetchall()
        ]
        return {t: sorted(map(repr, con.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}
    finally:
        con.close()


def _tables(path: str) -> dict[str, list[tuple]]:
    """table -> [(column, type)] for every base table."""
    con = duckdb.connect(path, read_only=True)
    try:
        out: dict[str, list[tuple]] = {}
        for t, c, ty in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema='main' AND table_name IN (SELECT table_name FROM information_schema.tables "
            "WHERE table_schema='main' AND table_type='BASE TABLE') ORDER BY table_name, ordinal_position"
        ).fetchall():
            out.setdefault(t, []).append((c, ty))
        return out
    finally:
        con.close()


def assert_same_warehouse(a: str, b: str, tables: list[str] | None = None) -> None:
    """Every table: same columns, same types, same rows (as multisets), compared inside DuckDB."""
    ta, tb = _tables(a), _tables(b)
    names = tables or sorted(ta)
    if tables is None:
        assert sorted(ta) == sorted(tb)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        for t in names:
            assert ta[t] == tb[t], f"columns/types of {t} differ"
            na = con.execute(f'SELECT count(*) FROM a."{t}"').fetchone()[0]
            nb = con.execute(f'SELECT count(*) FROM b."{t}"').fetchone()[0]
            assert na == nb, f"{t}: {na} vs {nb} rows"
            for x, y in (("a", "b"), ("b", "a")):
                diff = con.execute(
                    f'SELECT count(*) FROM (SELECT * FROM {x}."{t}" EXCEPT ALL SELECT * FROM {y}."{t}")'
                ).fetchone()[0]
                assert diff == 0, f"{t}: {diff} rows of {x} missing from {y}"
    finally:
        con.close()


# A driver of run 2 in a subprocess (argv[1]: the warehouse): reopens the run, says "ready", holds
# it for two minutes, and ends the run cancelled on SIGTERM.
DRIVER = textwrap.dedent(
    """
    import sys, time
    from ctxprior.storage import open_store, runs
    store = open_store(sys.argv[1], brief=True)
    with store.transaction():
        runs.reopen_run(store, 2)
    print("ready", flush=True)
    try:
        with runs.sigterm_interrupts(), runs.closing(store, 2) as out:
            time.sleep(120)
            out.status = "done"
    except KeyboardInterrupt:
        pass
    store.close()
    """
)
