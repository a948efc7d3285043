"""A warehouse from elsewhere is data, not code (issue 27 item 3, issue 35 part 1): a tampered
``.duckdb`` file never gets a local file's contents into an export, a publication (dry run too),
a report or ``ctxprior sql``.

Two mechanisms (``ctxprior.storage.sandbox``, ``ctxprior.storage.trust``; docs/write-protocol.md,
"The sandbox"), tested by the ways into DuckDB's file access a file's catalog offers:

- the sandbox: every connection runs with DuckDB's external access off and its configuration
  locked, so whatever a view or macro calls cannot read a file (tested with objects ctxprior
  counts as its own: a tampered package view, a covariate view the catalog records);
- the catalog check: objects ctxprior does not make refuse a read-only open in one line and are
  dropped on a read-write one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest
from parquet_fixtures import build_warehouse, record_covariate_view

import ctxprior
from ctxprior.storage import open_store

SECRET = "TOP-SECRET-7f3a91"


def tamper_view(db: str, secret: Path, view: str = "v_susceptibility") -> None:
    """What an edited file holds: the view reads a local file, meta.views_sha256 left as it was."""
    con = duckdb.connect(db)
    try:
        cols = [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall()] if view.startswith("v_") else []
        body = ", ".join(f"NULL AS {c}" for c in cols[1:])
        first = cols[0] if cols else "leak"
        con.execute(
            f"CREATE OR REPLACE VIEW {view} AS SELECT content AS {first}{', ' + body if body else ''} "
            f"FROM read_text('{secret}')"
        )
    finally:
        con.close()


def run_sql(db: str, sql: str) -> None:
    con = duckdb.connect(db)
    try:
        con.execute(sql)
    finally:
        con.close()


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def nothing_leaked(*places) -> None:
    for place in places:
        if isinstance(place, str):
            assert SECRET not in place
            continue
        for f in [place] if place.is_file() else place.rglob("*"):
            if f.is_file():
                assert SECRET.encode() not in f.read_bytes(), f


def one_line_or_ok(res) -> None:
    """Exit 0, or exit 2 with one line (never a traceback)."""
    assert res.exit_code in (0, 2), res.output
    if res.exit_code == 2:
        assert len(res.output.strip().splitlines()) == 1, res.output


@pytest.fixture
def files(tmp_path):
    """The secrets a tampered file tries to read: a text file, a CSV, a Parquet file."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "secret.csv").write_text(f"a,b\n{SECRET},2\n")
    con = duckdb.connect(":memory:")
    con.execute(f"COPY (SELECT '{SECRET}' AS a) TO '{tmp_path / 'secret.parquet'}' (FORMAT parquet)")
    con.close()
    return tmp_path


@pytest.fixture
def tampered(tmp_path, files):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    tamper_view(db, files / "secret.txt")
    return db, files / "secret.txt"


# -- the ways in: SQL a file's catalog can carry that reads a file (issue 35's three leaks first) --
# {txt}/{csv}/{parquet}: the secret files; {db}: the warehouse itself. Each defines `cov_evil`.
WAYS_IN = {
    "macro wrapping read_text": (
        "CREATE MACRO m() AS (SELECT content FROM read_text('{txt}')); CREATE VIEW cov_evil AS SELECT m() AS x"
    ),
    "replacement scan of a path": "CREATE VIEW cov_evil AS SELECT * FROM '{csv}'",
    "read_csv_auto": "CREATE VIEW cov_evil AS SELECT * FROM read_csv_auto('{csv}')",
    "read_parquet": "CREATE VIEW cov_evil AS SELECT * FROM read_parquet('{parquet}')",
    "glob": "CREATE VIEW cov_evil AS SELECT file FROM glob('{dir}/*')",
    "sniff_csv": "CREATE VIEW cov_evil AS SELECT Prompt FROM sniff_csv('{csv}')",
    "table macro": (
        "CREATE MACRO t() AS TABLE SELECT content FROM read_text('{txt}'); CREATE VIEW cov_evil AS SELECT * FROM t()"
    ),
    "scalar macro over read_blob": (
        "CREATE MACRO b() AS (SELECT content::VARCHAR FROM read_blob('{txt}')); "
        "CREATE VIEW cov_evil AS SELECT b() AS x"
    ),
    "read_blob of the warehouse itself": "CREATE VIEW cov_evil AS SELECT size FROM read_blob('{db}')",
    "view over duckdb_settings()": "CREATE VIEW cov_evil AS SELECT name, value FROM duckdb_settings()",
}


def _fill(sql: str, files: Path, db: str) -> str:
    return sql.format(
        txt=files / "secret.txt", csv=files / "secret.csv", parquet=files / "secret.parquet", dir=files, db=db
    )


@pytest.mark.parametrize("way", list(WAYS_IN))
def test_a_foreign_object_refuses_a_read_only_open_in_one_line(run_cli, tmp_path, files, way):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    run_sql(db, _fill(WAYS_IN[way], files, db))
    before = digest(db)
    for args in (
        ("export", "parquet", tmp_path / "exp", "--views", "all"),
        ("publish", "me/data", "--dry-run", tmp_path / "dry"),
        ("sql", "SELECT * FROM cov_evil", "--allow-read", files),
        ("report", "--out", tmp_path / "r.html"),
    ):
        res = run_cli(*args, db=db)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "holds objects ctxprior does not make (" in lines[0], res.output
        assert "view cov_evil" in lines[0]
        nothing_leaked(res.output)
    assert digest(db) == before  # read-only: the file is not written
    nothing_leaked(tmp_path / "exp" if (tmp_path / "exp").exists() else tmp_path / "r.duckdb")


@pytest.mark.parametrize("way", list(WAYS_IN))
def test_the_sandbox_keeps_a_view_ctxprior_counts_as_its_own_from_reading_files(
    run_cli, tmp_path, files, way
):
    """The view passes the catalog check (the `covariate` table names it); the sandbox alone keeps
    the file out of every output: the view cannot be read (the export skips it with a warning)."""
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    # no macro may stay (it is foreign): the macro's body goes into the view itself
    sql = _fill(WAYS_IN[way], files, db)
    sql = sql.replace(
        "SELECT m() AS x", f"SELECT (SELECT content FROM read_text('{files / 'secret.txt'}')) AS x"
    )
    sql = sql.replace("FROM t()", f"FROM read_text('{files / 'secret.txt'}')")
    sql = sql.replace(
        "SELECT b() AS x", f"SELECT content::VARCHAR AS x FROM read_blob('{files / 'secret.txt'}')"
    )
    run_sql(db, ";".join(s for s in sql.split(";") if "MACRO" not in s))
    record_covariate_view(db, "cov_evil")  # ctxprior counts it as its own: only the sandbox stands
    before = digest(db)
    res = run_cli("export", "parquet", tmp_path / "exp", "--views", "cov_evil", db=db)
    one_line_or_ok(res)
    nothing_leaked(res.output, tmp_path / "exp")
    if way != "view over duckdb_settings()":  # the one way in that reads no file: it may be exported
        assert "cov_evil" not in [t["name"] for t in _manifest(tmp_path / "exp").get("tables", [])]
    res = run_cli("sql", "SELECT * FROM cov_evil", db=db)
    one_line_or_ok(res)
    nothing_leaked(res.output)
    res = ctxprior.open(db).query("SELECT 1 AS one")  # the warehouse is still readable
    assert res.rows == [(1,)]
    assert digest(db) == before


def _manifest(folder: Path) -> dict:
    p = folder / "manifest.json"
    return json.loads(p.read_text()) if p.exists() else {}


def test_a_macro_shadowing_a_builtin_used_by_a_package_view(run_cli, tmp_path, files):
    """Issue 35's third leak: a persisted ``to_json`` macro read by ``v_run_replicate`` (the view's
    text unchanged). A read-only publication refuses; a read-write open drops the macro."""
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    run_sql(db, f"CREATE MACRO to_json(x) AS (SELECT content FROM read_text('{files / 'secret.txt'}'))")
    before = digest(db)
    res = run_cli("publish", "me/x", "--dry-run", tmp_path / "dry", db=db)
    assert res.exit_code == 2 and "macro to_json" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    assert digest(db) == before
    with ctxprior.open(db, write=True).connect(write=True):
        pass
    res = run_cli("publish", "me/x", "--dry-run", tmp_path / "dry", db=db)
    assert res.exit_code == 0, res.output
    nothing_leaked(res.output, tmp_path / "dry")


def test_a_read_write_open_drops_every_foreign_object(tmp_path, files, capfd):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    run_sql(
        db,
        "CREATE MACRO to_json(x) AS 'x'; CREATE MACRO tm() AS TABLE SELECT 1 AS a; "
        "CREATE TYPE mood AS ENUM ('a', 'b'); CREATE SEQUENCE sq; CREATE VIEW cov_evil AS SELECT 1 AS a; "
        "CREATE SCHEMA elsewhere; CREATE VIEW elsewhere.v AS SELECT 1 AS a; "
        "CREATE MACRO elsewhere.m() AS 1",
    )
    with ctxprior.open(db, write=True).connect(write=True) as store:
        from ctxprior.storage.trust import foreign_objects

        assert foreign_objects(store) == []
    err = capfd.readouterr().err
    assert "dropped what ctxprior does not make" in err and "macro to_json" in err
    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT to_json(1)").fetchone()[0] == "1"  # DuckDB's own again
        assert not con.execute("SELECT * FROM duckdb_views() WHERE view_name = 'cov_evil'").fetchall()
        assert not con.execute("SELECT * FROM duckdb_schemas() WHERE schema_name = 'elsewhere'").fetchall()
    finally:
        con.close()
    # the package's own objects stay: a second open finds nothing to drop and writes nothing
    before = digest(db)
    with ctxprior.open(db, write=True).connect(write=True):
        pass
    assert digest(db) == before
    assert "dropped" not in capfd.readouterr().err


def test_macros_shadowing_the_catalog_queries_do_not_hide_anything(run_cli, tmp_path, files):
    """The catalog is read through DuckDB's `system` catalog: a macro of the file named like the
    functions that list it (``duckdb_views``, ``current_database``) hides nothing."""
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    run_sql(
        db,
        "CREATE MACRO duckdb_views() AS TABLE SELECT 1 AS x; CREATE MACRO duckdb_functions() AS TABLE "
        "SELECT 1 AS x; CREATE MACRO current_database() AS 'elsewhere'; "
        f"CREATE VIEW cov_evil AS SELECT content FROM read_text('{files / 'secret.txt'}')",
    )
    res = run_cli("export", "parquet", tmp_path / "exp", "--views", "all", db=db)
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    for name in ("table macro duckdb_views", "macro current_database", "view cov_evil"):
        assert name in res.output
    with ctxprior.open(db, write=True).connect(write=True):
        pass
    res = run_cli("export", "parquet", tmp_path / "exp", "--views", "all", db=db)
    assert res.exit_code == 0, res.output
    nothing_leaked(res.output, tmp_path / "exp")


@pytest.mark.parametrize("read_only", [True, False])
def test_every_connection_is_sandboxed_and_locked(tmp_path, files, read_only):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    with open_store(db, read_only=read_only) as store:
        for sql in (
            f"SELECT content FROM read_text('{files / 'secret.txt'}')",
            f"SELECT * FROM '{files / 'secret.csv'}'",
            f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
            f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
            "INSTALL httpfs",
        ):
            with pytest.raises(duckdb.Error):
                store.con.execute(sql).fetchall()
        for setting in ("enable_external_access = true", "lock_configuration = false", "threads = 1"):
            with pytest.raises(duckdb.Error, match=r"locked|Cannot enable"):
                store.con.execute(f"SET {setting}")
        assert store.scalar("SELECT count(*) FROM run") >= 1  # the warehouse itself reads
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


def test_the_named_reads_are_the_only_files_a_connection_reads(tmp_path, files):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    with open_store(db, reads=[files / "secret.csv"]) as store:
        assert store.query(f"SELECT a FROM read_csv('{files / 'secret.csv'}')") == [(SECRET,)]
        with pytest.raises(duckdb.PermissionException):
            store.query(f"SELECT content FROM read_text('{files / 'secret.txt'}')")


def test_user_sql_reads_no_file_unless_allowed(run_cli, tmp_path, files):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    for sql in (
        f"SELECT content FROM read_text('{files / 'secret.txt'}')",
        f"SELECT * FROM '{files / 'secret.csv'}'",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
    ):
        res = run_cli("sql", sql, db=db)
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
        nothing_leaked(res.output)
    res = run_cli(
        "sql", f"SELECT a FROM '{files / 'secret.csv'}'", "--allow-read", files / "secret.csv", db=db
    )
    assert res.exit_code == 0 and SECRET in res.output, res.output  # the user asked for this read


# -- the package's own views, tampered: recreated (read-write) or shadowed (read-only) -------------


def test_export_views_and_publish_dry_run_do_not_run_a_tampered_view(run_cli, tampered, tmp_path):
    db, _ = tampered
    before = digest(db)
    res = run_cli("export", "parquet", tmp_path / "exp", "--views", "v_susceptibility", db=db)
    assert res.exit_code == 0, res.output
    nothing_leaked(tmp_path / "exp")
    res = run_cli("publish", "me/data", "--dry-run", tmp_path / "dry", db=db)
    assert res.exit_code == 0, res.output
    nothing_leaked(tmp_path / "dry")
    names = [t["name"] for t in json.loads((tmp_path / "dry" / "manifest.json").read_text())["tables"]]
    assert len(names) == len(set(names))  # the shadowing TEMP views are not listed twice
    assert digest(db) == before  # read-only: the file is not written


def test_sql_and_report_do_not_run_a_tampered_view(run_cli, tampered, tmp_path):
    db, secret = tampered
    res = run_cli("sql", "SELECT * FROM v_susceptibility", "--allow-read", secret.parent, db=db)
    assert res.exit_code == 0, res.output
    assert SECRET not in res.output
    out = ctxprior.open(db).sql("SELECT * FROM v_susceptibility", allow_read=secret.parent)
    assert SECRET not in out.to_string()
    res = run_cli("report", "--out", tmp_path / "r.html", db=db)
    assert res.exit_code == 0, res.output
    assert SECRET not in (tmp_path / "r.html").read_text()


def test_a_file_read_back_holds_the_package_view_texts(tmp_path):
    """DuckDB 1.5 writes a view's text one way as made (``CAST(x AS "DOUBLE")``, ``DECIMAL(10, 2)``)
    and another once read back from the file (``CAST(x AS DOUBLE)``, ``DECIMAL(10,2)``): both are
    the package's, so a read-write open of an untouched file remakes no view (and writes nothing)."""
    from ctxprior.sqlfiles import read_sql
    from ctxprior.storage import trust

    db = str(tmp_path / "w.duckdb")
    open_store(db).close()
    con = duckdb.connect(db, read_only=True)
    try:
        actual = dict(con.execute(read_sql("ctxprior.storage", "sql/view_texts.sql")).fetchall())
    finally:
        con.close()
    for name, text in trust.package_views():
        assert trust.is_package_view_text(name, actual.get(name), text), (name, actual.get(name), text)
    before = hashlib.sha256(Path(db).read_bytes()).hexdigest()
    open_store(db).close()
    assert hashlib.sha256(Path(db).read_bytes()).hexdigest() == before


def test_a_read_write_open_restores_the_package_views(tampered):
    db, _ = tampered
    with ctxprior.open(db, write=True).connect(write=True):
        pass
    con = duckdb.connect(db, read_only=True)
    try:
        text = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'v_susceptibility'").fetchone()[
            0
        ]
    finally:
        con.close()
    assert "read_text" not in text


# -- names ctxprior writes to, holding something else: one line, never a traceback (issue 42, 10) --


def test_a_table_at_a_package_views_name_is_one_line(run_cli, tmp_path):
    db = build_warehouse(str(tmp_path / "r.duckdb"), use_demo=False)
    run_sql(db, "DROP VIEW v_susceptibility CASCADE; CREATE TABLE v_susceptibility AS SELECT 1 AS x")
    before = digest(db)
    res = run_cli("analyze", db=db)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "table v_susceptibility has the name of a view ctxprior makes" in lines[0]
    assert digest(db) == before


def test_a_foreign_check_constraint_on_a_package_table_is_one_line(run_cli, tmp_path):
    db = build_warehouse(str(tmp_path / "r.duckdb"), use_demo=False)
    con = duckdb.connect(db)
    try:
        ddl = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'analysis_result'").fetchone()[
            0
        ]
        con.execute("DROP TABLE analysis_result")
        con.execute(ddl.replace("run_id INTEGER NOT NULL", "run_id INTEGER NOT NULL CHECK (run_id < 0)", 1))
    finally:
        con.close()
    before = digest(db)
    res = run_cli("analyze", db=db)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "table analysis_result carries a CHECK constraint" in lines[0], res.output
    assert digest(db) == before


def test_an_empty_duckdb_file_is_one_line(run_cli, tmp_path):
    """What an `import parquet` killed after its first seconds leaves: a DuckDB file with no table."""
    db = str(tmp_path / "k.duckdb")
    duckdb.connect(db).close()
    before = digest(db)
    for args in (["info"], ["sql", "SELECT 1"], ["runs"]):
        res = run_cli(*args, db=db)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "is an empty DuckDB file" in lines[0], res.output
    assert digest(db) == before
