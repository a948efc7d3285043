"""`ctxprior export parquet` / `ctxprior import parquet`: round trip, manifest, options, refusals."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest
from parquet_fixtures import build_warehouse, record_covariate_view
from warehouse_helpers import assert_same_warehouse


@pytest.fixture(scope="module")
def source_db(tmp_path_factory) -> str:
    return build_warehouse(str(tmp_path_factory.mktemp("src") / "src.duckdb"))


@pytest.mark.parametrize("use_demo", [True, False])
def test_roundtrip_every_table_equal(tmp_path, run_cli, source_db, use_demo):
    src = source_db if use_demo else build_warehouse(str(tmp_path / "src.duckdb"), use_demo=False)
    out = tmp_path / "export"
    r = run_cli("export", "parquet", out, db=src)
    assert r.exit_code == 0, r.output
    dst = str(tmp_path / "copy.duckdb")
    r = run_cli("import", "parquet", out, db=dst)
    assert r.exit_code == 0, r.output
    assert "imported" in r.output
    assert_same_warehouse(src, dst)


def test_manifest_records_versions_counts_hashes(tmp_path, run_cli, source_db):
    from ctxprior import __version__
    from ctxprior.schema import SCHEMA_VERSION
    from ctxprior.storage import open_store

    out = tmp_path / "export"
    assert run_cli("export", "parquet", out, db=source_db).exit_code == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["format"] == "ctxprior-parquet"
    assert m["ctxprior_version"] == __version__
    assert m["schema_version"] == SCHEMA_VERSION
    assert m["runs"] == [1, 2]
    store = open_store(source_db, read_only=True)
    try:
        assert sorted(e["name"] for e in m["tables"]) == store.table_names()
        for e in m["tables"]:
            assert e["kind"] == "table"
            assert e["rows"] == store.scalar(f'SELECT count(*) FROM "{e["name"]}"')
            assert [c["name"] for c in e["columns"]] == [
                r[0]
                for r in store.query(
                    "SELECT column_name FROM information_schema.columns WHERE "
                    "table_name=? ORDER BY ordinal_position",
                    [e["name"]],
                )
            ]
            assert sum(f["rows"] for f in e["files"]) == e["rows"]
            for f in e["files"]:
                data = (out / f["path"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == f["sha256"]
                assert len(data) == f["bytes"]
                assert f["path"].startswith(f"data/{e['name']}/")
    finally:
        store.close()


def test_export_is_deterministic_and_sharded(tmp_path, source_db):
    """Same warehouse -> byte-identical files (what lets publish skip unchanged commits)."""
    from ctxprior.publish.parquet import export_parquet, select
    from ctxprior.storage import open_store

    store = open_store(source_db, read_only=True)
    try:
        sel = select(store)
        m1 = export_parquet(store, tmp_path / "a", sel, stamp_time=False)
        m2 = export_parquet(store, tmp_path / "b", sel, stamp_time=False)
        m3 = export_parquet(store, tmp_path / "c", select(store, tables=["persuasion"]), rows_per_file=10)
    finally:
        store.close()
    assert m1 == m2
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()
    (p,) = m3["tables"]
    assert len(p["files"]) == -(-p["rows"] // 10) > 1
    assert [f["rows"] for f in p["files"]][:-1] == [10] * (len(p["files"]) - 1)
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path}/c/data/persuasion/*.parquet')").fetchall()[
        0
    ][0]
    assert n == p["rows"]


def test_export_options_tables_views_runs(tmp_path, run_cli, source_db):
    out = tmp_path / "x"
    r = run_cli("export", "parquet", out, "--tables", "run,persuasion", "--runs", "1", db=source_db)
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert [e["name"] for e in m["tables"]] == ["run", "persuasion"]
    assert m["runs"] == [1] and m["run_filter"] == [1]
    ids = duckdb.sql(
        f"SELECT DISTINCT run_id FROM read_parquet('{out}/data/persuasion/*.parquet')"
    ).fetchall()
    assert ids == [(1,)]

    out = tmp_path / "v"
    r = run_cli(
        "export", "parquet", out, "--views", "v_persuasion", "--views", "v_susceptibility", db=source_db
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert [(e["name"], e["kind"]) for e in m["tables"]] == [
        ("v_persuasion", "view"),
        ("v_susceptibility", "view"),
    ]
    assert m["tables"][0]["rows"] > 0
    # a views-only folder cannot rebuild a warehouse
    r = run_cli("import", "parquet", out, db=str(tmp_path / "n.duckdb"))
    assert r.exit_code == 2 and "only views" in r.output
    assert not (tmp_path / "n.duckdb").exists()

    out = tmp_path / "all"
    assert run_cli("export", "parquet", out, "--views", "all", db=source_db).exit_code == 0
    assert all(e["kind"] == "view" for e in json.loads((out / "manifest.json").read_text())["tables"])


@pytest.mark.parametrize(
    "args, msg",
    [
        (["--tables", "nope"], "--tables nope: no such table"),
        (["--views", "persuasion"], "--views persuasion: no such view"),
        (["--runs", "99"], "--runs 99: no such run"),
        (["--runs", "x"], "--runs x: not a run id"),
    ],
)
def test_export_bad_options_exit_2(tmp_path, run_cli, source_db, args, msg):
    r = run_cli("export", "parquet", tmp_path / "o", *args, db=source_db)
    assert r.exit_code == 2
    assert msg in r.output
    assert not (tmp_path / "o").exists()


def test_export_refuses_nonempty_folder(tmp_path, run_cli, source_db):
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = run_cli("export", "parquet", out, db=source_db)
    assert r.exit_code == 2 and "not empty" in r.output
    r = run_cli("export", "parquet", out, "--overwrite", db=source_db)  # written beside the user's file
    assert r.exit_code == 0, r.output
    assert (out / "keep.txt").read_text() == "mine"
    out2 = tmp_path / "o2"
    assert run_cli("export", "parquet", out2, "--tables", "run", db=source_db).exit_code == 0
    assert run_cli("export", "parquet", out2, "--overwrite", db=source_db).exit_code == 0
    assert len(json.loads((out2 / "manifest.json").read_text())["tables"]) > 1


def test_import_checks_sha256_before_writing(tmp_path, run_cli, source_db):
    out = tmp_path / "e"
    assert run_cli("export", "parquet", out, db=source_db).exit_code == 0
    m = json.loads((out / "manifest.json").read_text())
    f = out / next(e for e in m["tables"] if e["name"] == "persuasion")["files"][0]["path"]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    dst = tmp_path / "d.duckdb"
    r = run_cli("import", "parquet", out, db=str(dst))
    assert r.exit_code == 2
    assert "does not match the manifest" in r.output
    assert not dst.exists()
    f.unlink()
    r = run_cli("import", "parquet", out, db=str(dst))
    assert r.exit_code == 2 and "missing" in r.output


def test_import_refuses_nonempty_then_merge_and_replace(tmp_path, run_cli, source_db):
    out = tmp_path / "e"
    assert run_cli("export", "parquet", out, db=source_db).exit_code == 0
    dst = str(tmp_path / "d.duckdb")
    assert run_cli("import", "parquet", out, db=dst).exit_code == 0
    r = run_cli("import", "parquet", out, db=dst)
    assert r.exit_code == 2 and "already has rows" in r.output and "--merge" in r.output
    r = run_cli("import", "parquet", out, "--merge", db=dst)  # idempotent: nothing new
    assert r.exit_code == 0, r.output
    assert "imported 0 rows" in r.output
    assert_same_warehouse(source_db, dst)
    r = run_cli("import", "parquet", out, "--replace", db=dst)
    assert r.exit_code == 0, r.output
    assert_same_warehouse(source_db, dst)
    r = run_cli("import", "parquet", out, "--replace", "--merge", db=dst)
    assert r.exit_code == 2


def test_merge_adds_missing_runs_and_refuses_id_collisions(tmp_path, run_cli, source_db):
    only1, full = tmp_path / "only1", tmp_path / "full"
    assert run_cli("export", "parquet", full, db=source_db).exit_code == 0
    assert run_cli("export", "parquet", only1, "--runs", "1", db=source_db).exit_code == 0
    dst = str(tmp_path / "d.duckdb")
    assert run_cli("import", "parquet", only1, db=dst).exit_code == 0
    con = duckdb.connect(dst, read_only=True)
    assert con.execute("SELECT count(*) FROM persuasion WHERE run_id=2").fetchone()[0] == 0
    con.close()
    r = run_cli("import", "parquet", full, "--merge", db=dst)
    assert r.exit_code == 0, r.output
    assert_same_warehouse(source_db, dst)

    # a warehouse whose ids mean different rows cannot be merged by id
    other = str(tmp_path / "other.duckdb")
    assert run_cli("import", "parquet", full, db=other).exit_code == 0
    con = duckdb.connect(other)
    con.execute("UPDATE entity SET name = name || ' (other lab)' WHERE entity_id = 1")
    con.close()
    ex = tmp_path / "other_export"
    assert run_cli("export", "parquet", ex, db=other).exit_code == 0
    r = run_cli("import", "parquet", ex, "--merge", db=dst)
    assert r.exit_code == 2 and "cannot be merged by id" in r.output
    assert_same_warehouse(source_db, dst)


def test_tables_outside_the_schema_roundtrip_with_types(tmp_path, run_cli):
    """A user's own table (created by SQL, not in the SQLAlchemy metadata) comes back with its types."""
    src = build_warehouse(str(tmp_path / "s.duckdb"), use_demo=False)
    con = duckdb.connect(src)
    con.execute(
        "CREATE TABLE my_covariate (entity_id INTEGER, score DOUBLE, note VARCHAR, day DATE, "
        "big HUGEINT, flag BOOLEAN, ts TIMESTAMP, small SMALLINT)"
    )
    con.execute(
        "INSERT INTO my_covariate VALUES (1, 0.5, 'a', DATE '2024-01-02', 12345678901234567890, true, "
        "TIMESTAMP '2024-01-02 03:04:05.123456', 7), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    )
    con.close()
    out = tmp_path / "e"
    assert run_cli("export", "parquet", out, db=src).exit_code == 0
    dst = str(tmp_path / "d.duckdb")
    assert run_cli("import", "parquet", out, db=dst).exit_code == 0
    assert_same_warehouse(src, dst)


def test_import_not_a_ctxprior_folder(tmp_path, run_cli):
    (tmp_path / "f").mkdir()
    r = run_cli("import", "parquet", tmp_path / "f", db=str(tmp_path / "d.duckdb"))
    assert r.exit_code == 2 and "no manifest.json" in r.output
    (tmp_path / "f" / "manifest.json").write_text("{not json")
    r = run_cli("import", "parquet", tmp_path / "f", db=str(tmp_path / "d.duckdb"))
    assert r.exit_code == 2 and "not a readable JSON manifest" in r.output
    assert not (tmp_path / "d.duckdb").exists()


def test_a_broken_view_is_skipped_not_fatal(tmp_path, run_cli):
    src = build_warehouse(str(tmp_path / "s.duckdb"), use_demo=False)
    con = duckdb.connect(src)
    con.execute("CREATE TABLE tmp_x (a INTEGER)")
    con.execute("CREATE VIEW cov_broken AS SELECT a FROM tmp_x")  # a covariate view whose table is gone
    con.execute("DROP TABLE tmp_x")
    con.close()
    record_covariate_view(src, "cov_broken")
    out = tmp_path / "v"
    r = run_cli("export", "parquet", out, "--views", "all", db=src)
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert [v["name"] for v in m["skipped_views"]] == ["cov_broken"]
    assert "v_persuasion" in {e["name"] for e in m["tables"]}


def test_import_refuses_newer_schema_and_paths_outside_the_folder(tmp_path, run_cli):
    src = build_warehouse(str(tmp_path / "s.duckdb"), use_demo=False)
    out = tmp_path / "e"
    assert run_cli("export", "parquet", out, "--tables", "run,meta", db=src).exit_code == 0
    m = json.loads((out / "manifest.json").read_text())
    m["schema_version"] = 999
    (out / "manifest.json").write_text(json.dumps(m))
    dst = tmp_path / "d.duckdb"
    r = run_cli("import", "parquet", out, db=str(dst))
    assert r.exit_code == 2 and "newer than this ctxprior" in r.output
    m["schema_version"] = 1
    m["tables"][0]["files"][0]["path"] = "../s.duckdb"
    (out / "manifest.json").write_text(json.dumps(m))
    r = run_cli("import", "parquet", out, db=str(dst))
    assert r.exit_code == 2 and "leaves the folder" in r.output
    assert not dst.exists()
