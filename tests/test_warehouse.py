"""Warehouse lifecycle, schema versions and migrations, read-only SQL, info, views."""

from __future__ import annotations

import json

import duckdb
import pytest

from ctxprior.errors import UserError
from ctxprior.schema import SCHEMA_VERSION
from ctxprior.storage import migrations, open_store


@pytest.mark.quick
def test_new_warehouse_has_schema_and_views(db_path):
    with open_store(db_path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert {
            "dataset",
            "relation",
            "entity",
            "answer",
            "fact",
            "query_form",
            "context_template",
            "sample",
            "sample_fact",
            "context",
            "run",
        } <= set(store.table_names())
        assert {"v_entity", "v_context", "v_persuasion", "v_susceptibility"} <= set(store.view_names())


def test_v_entity_and_v_context_columns(run_cli, db_path):
    run_cli("ingest", "demo", "--only", "demo")
    run_cli("sample", "--dataset", "demo", "--entities", "2", "--contexts", "6")
    with open_store(db_path, read_only=True) as store:
        cols = list(store.df("SELECT * FROM v_entity LIMIT 1").columns)
        for c in (
            "dataset",
            "relation",
            "entity",
            "entity_kind",
            "entity_class",
            "answer",
            "entity_uri",
            "uri_degree",
            "predicate_degree",
        ):
            assert c in cols
        cols = list(store.df("SELECT * FROM v_context LIMIT 1").columns)
        assert cols[:9] == [
            "sample_id",
            "seed",
            "dataset",
            "relation",
            "entity",
            "entity_kind",
            "answer",
            "context_type",
            "context",
        ]


@pytest.mark.quick
def test_missing_warehouse_read_only(tmp_path):
    with pytest.raises(UserError, match="no warehouse at"):
        open_store(str(tmp_path / "nope.duckdb"), read_only=True)


@pytest.mark.quick
def test_not_a_ctxprior_file(tmp_path):
    p = str(tmp_path / "other.duckdb")
    con = duckdb.connect(p)
    con.execute("CREATE TABLE x (a INT)")
    con.close()
    with pytest.raises(UserError, match="not a ctxprior warehouse"):
        open_store(p)


def _set_version(path, v):
    con = duckdb.connect(path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(v)])
    con.close()


@pytest.mark.quick
def test_newer_warehouse_says_upgrade(db_path):
    open_store(db_path).close()
    _set_version(db_path, SCHEMA_VERSION + 1)
    with pytest.raises(UserError, match="pip install -U ctxprior"):
        open_store(db_path, read_only=True)


def test_older_warehouse_says_what_to_run_and_migrates(db_path, run_cli, monkeypatch):
    open_store(db_path).close()
    _set_version(db_path, 0)
    res = run_cli("info")
    assert res.exit_code == 2 and "no migration exists" in res.output
    # a registered step: the warehouse says `ctxprior migrate`, which applies it (and the real ones)
    from ctxprior.schema import versions

    monkeypatch.setattr(versions, "OLDEST_MIGRATABLE", 0)
    monkeypatch.setitem(
        migrations.MIGRATIONS,
        0,
        lambda store: store.execute("INSERT INTO meta VALUES ('migrated', 'yes')"),
    )
    res = run_cli("info")
    assert res.exit_code == 2 and f"ctxprior --db {db_path} migrate" in res.output
    res = run_cli("migrate")
    assert res.exit_code == 0, res.output
    assert "backup written" in res.output
    with open_store(db_path, read_only=True) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.scalar("SELECT value FROM meta WHERE key = 'migrated'") == "yes"
    assert "already at" in run_cli("migrate").output


@pytest.mark.quick
def test_migrate_without_a_step_refuses_before_writing(db_path, tmp_path):
    # v0 has no registered step: migrate says so before it writes the backup or applies any step
    open_store(db_path).close()
    _set_version(db_path, 0)
    before = open(db_path, "rb").read()
    with pytest.raises(UserError, match="has schema v0 and no migration exists from v0"):
        migrations.migrate(db_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh.duckdb", "wh.duckdb.lock"]  # no backup left
    assert open(db_path, "rb").read() == before


def test_v1_warehouse_migrates_to_v2_with_the_head_column(db_path, run_cli):
    open_store(db_path).close()
    con = duckdb.connect(db_path)
    con.execute("ALTER TABLE run_unit_engine DROP COLUMN head")
    con.close()
    _set_version(db_path, 1)
    assert "migrate" in run_cli("info").output
    res = run_cli("migrate")
    assert res.exit_code == 0 and "migrated v1 -> v2" in res.output, res.output
    with open_store(db_path, read_only=True) as store:
        assert "head" in store.df("DESCRIBE run_unit_engine").column_name.tolist()


def test_sql_formats_and_read_only(run_cli, db_path, tmp_path):
    run_cli("ingest", "demo", "--only", "friend_enemy")
    res = run_cli("sql", "SELECT label, count(*) AS n FROM v_entity GROUP BY 1 ORDER BY 1")
    assert res.exit_code == 0 and "enemy" in res.output and "(2 rows)" in res.output
    res = run_cli("sql", "SELECT label, count(*) AS n FROM v_entity GROUP BY 1 ORDER BY 1", "--format", "csv")
    assert res.output.splitlines() == ["label,n", "enemy,48", "friend,25"]
    res = run_cli(
        "sql", "SELECT label, count(*) AS n FROM v_entity GROUP BY 1 ORDER BY 1", "--format", "json"
    )
    assert json.loads(res.output) == [{"label": "enemy", "n": 48}, {"label": "friend", "n": 25}]
    f = tmp_path / "q.sql"
    f.write_text("-- count one label\nSELECT count(*) AS n FROM v_entity WHERE label = getvariable('lab');\n")
    res = run_cli("sql", "--file", f, "--var", "lab=friend", "--format", "csv")
    assert res.output.splitlines() == ["n", "25"], res.output
    for bad in (
        "DELETE FROM fact",
        "DROP VIEW v_entity",
        "CREATE TABLE t AS SELECT 1",
        "COPY fact TO 'x.csv'",
        "INSERT INTO meta VALUES ('a','b')",
        "SELECT 1; DELETE FROM fact",
        "ATTACH 'x.duckdb'",
        "UPDATE fact SET label = 'x'",
    ):
        res = run_cli("sql", bad)
        assert res.exit_code == 2 and "read-only" in res.output, (bad, res.output)
    assert run_cli("sql", "SELECT count(*) FROM fact", "--format", "csv").output.splitlines()[1] == "73"
    res = run_cli("sql", "SELEC nonsense")
    assert res.exit_code == 2 and res.output.startswith("Error: ")


def test_sql_writes_no_file_and_reads_only_what_is_allowed(run_cli, db_path, tmp_path, monkeypatch):
    """Issue 19 D1/D10: EXPLAIN ANALYZE COPY ... TO the warehouse, COPY with USE_TMP_FILE false (the
    warehouse file is one DuckDB may always touch), EXPORT, INSTALL, SET of a setting: all refused
    by DuckDB's parser before they run (one line, exit 2, the file byte for byte unchanged); a
    SELECT reads no other file unless --allow-read names it; SET VARIABLE runs."""
    import hashlib

    monkeypatch.chdir(tmp_path)
    run_cli("ingest", "demo", "--only", "friend_enemy")
    digest = lambda: hashlib.sha256(open(db_path, "rb").read()).hexdigest()  # noqa: E731
    before = digest()
    out = tmp_path / "out"
    for bad in (
        f"EXPLAIN ANALYZE COPY (SELECT 'x' AS x) TO '{db_path}' (FORMAT csv)",
        f"explain /* c */ analyze copy (select 1) to '{out}.csv'",
        f"EXPLAIN (ANALYZE) COPY (SELECT 1) TO '{out}.csv'",
        f"EXPLAIN (FORMAT json) COPY (SELECT 1) TO '{out}.csv'",
        f"COPY (SELECT 'x' AS x) TO '{db_path}' (FORMAT csv, USE_TMP_FILE false)",
        f"EXPORT DATABASE '{out}'",
        "INSTALL httpfs",
        "LOAD json",
        "SET threads = 1",
        "SET enable_external_access = true",
        "PRAGMA version",
        "CALL pragma_version()",
        "CHECKPOINT",
        "DETACH wh",
        "USE memory",
        f"SELECT 1; COPY fact TO '{out}.csv'",
    ):
        res = run_cli("sql", bad)
        assert res.exit_code == 2 and "read-only" in res.output, (bad, res.output)
        assert len(res.output.strip().splitlines()) == 1 and res.output.startswith("Error: "), res.output
        assert digest() == before and not list(tmp_path.glob("out*")), bad
    for ok in (
        "EXPLAIN ANALYZE SELECT count(*) FROM fact",
        "EXPLAIN (ANALYZE) (SELECT 1)",
        "EXPLAIN SELECT 1",
        "SUMMARIZE fact",
        "SHOW TABLES",
    ):
        assert run_cli("sql", ok).exit_code == 0, ok
    res = run_cli(
        "sql",
        "SET VARIABLE lab = 'friend'; SELECT count(*) AS n FROM v_entity WHERE label = getvariable('lab')",
        "--format",
        "csv",
    )
    assert res.exit_code == 0 and res.output.splitlines() == ["n", "25"], res.output
    # reading files: none but the warehouse, unless named
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "pop.csv").write_text("label,pop\nfriend,7\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret\n")
    join = "SELECT e.label, max(p.pop) AS pop FROM v_entity e JOIN read_csv('{}') p USING (label) GROUP BY 1"
    for q in (
        join.format(tmp_path / "data" / "pop.csv"),
        f"SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM glob('/*')",
    ):
        res = run_cli("sql", q)
        assert res.exit_code == 2 and "--allow-read" in res.output and "s3cret" not in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1, res.output
    for allow in (tmp_path / "data", tmp_path / "data" / "pop.csv", "data"):
        res = run_cli("sql", join.format("data/pop.csv"), "--allow-read", allow, "--format", "csv")
        assert res.exit_code == 0 and res.output.splitlines() == ["label,pop", "friend,7"], (
            allow,
            res.output,
        )
        res = run_cli("sql", f"SELECT * FROM read_text('{secret}')", "--allow-read", allow)
        assert res.exit_code == 2 and "s3cret" not in res.output, res.output
    res = run_cli("sql", f"COPY (SELECT 1) TO '{tmp_path}/data/x.csv'", "--allow-read", tmp_path / "data")
    assert res.exit_code == 2 and "read-only" in res.output and not (tmp_path / "data" / "x.csv").exists()
    res = run_cli("sql", "SELECT 1", "--allow-read", tmp_path / "nope")
    assert res.exit_code == 2 and "--allow-read" in res.output and "no such file or folder" in res.output
    assert digest() == before


@pytest.mark.quick
def test_info(run_cli, demo_db):
    run_cli("sample", "--dataset", "demo", "--entities", "2", "--contexts", "6")
    res = run_cli("info")
    assert res.exit_code == 0
    assert f"schema v{SCHEMA_VERSION}" in res.output
    for word in ("demo", "friend_enemy", "gender", "real_entities", "fake_entities", "no runs yet"):
        assert word in res.output


@pytest.mark.quick
def test_transaction_rolls_back(db_path):
    with open_store(db_path) as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.execute("INSERT INTO meta VALUES ('k', 'v')")
            raise RuntimeError("boom")
        assert store.scalar("SELECT count(*) FROM meta WHERE key = 'k'") == 0


@pytest.mark.quick
def test_second_writer_gets_clear_message(db_path):
    """A second process opening for writing is told who holds the warehouse."""
    import subprocess
    import sys
    import textwrap

    open_store(db_path).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({db_path!r})
        print('ready', flush=True)
        time.sleep(30)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(UserError, match=r"in use by PID \d+"):
            open_store(db_path)
    finally:
        holder.kill()
        holder.wait()


def test_bad_input_leaves_the_file_byte_for_byte_unchanged(run_cli, db_path):
    """An up-to-date warehouse is not written by a read-write open; views are remade only when
    their files changed (their digest is kept in meta)."""
    import hashlib
    from pathlib import Path

    from ctxprior.storage.store import views_digest

    run_cli("ingest", "demo", "--only", "demo")
    before = hashlib.sha256(Path(db_path).read_bytes()).hexdigest()
    for args, code in (
        (("sample", "--dataset", "nope"), 2),
        (("sample-dynamic", "--partition", "bogus"), 2),
        (("score", "--resume", "999"), 2),
        (("ingest", "demo", "--only", "demo"), 0),
    ):  # a no-op
        res = run_cli(*args)
        assert res.exit_code == code, (args, res.output)
        assert hashlib.sha256(Path(db_path).read_bytes()).hexdigest() == before, args
    with open_store(db_path) as store:
        assert store.scalar("SELECT value FROM meta WHERE key = 'views_sha256'") == views_digest()
        store.execute("DROP VIEW v_entity")
        store.execute("UPDATE meta SET value = 'old' WHERE key = 'views_sha256'")  # as if the files changed
    with open_store(db_path) as store:
        assert "v_entity" in store.view_names()
        assert store.scalar("SELECT value FROM meta WHERE key = 'views_sha256'") == views_digest()
