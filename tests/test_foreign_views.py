"""A warehouse from elsewhere is data, not code (issue 27, seen item 3): tampered view definitions
never run in export, publish (dry run too), report or sql (``ctxprior.schema.trust``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest
from parquet_fixtures import build_warehouse

import ctxprior

SECRET = "TOP-SECRET-7f3a91"


def tamper(db: str, secret: Path, view: str = "v_susceptibility") -> None:
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


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def nothing_leaked(folder: Path) -> None:
    for f in folder.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


@pytest.fixture
def tampered(tmp_path):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    tamper(db, secret)
    return db, secret


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


def test_a_foreign_view_reading_files_is_refused_in_one_line(run_cli, tmp_path):
    db = build_warehouse(str(tmp_path / "r.duckdb"))
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    tamper(db, secret, view="cov_leak")
    before = digest(db)
    for args in (
        ("export", "parquet", tmp_path / "exp", "--views", "all"),
        ("publish", "me/data", "--dry-run", tmp_path / "dry"),
        ("sql", "SELECT * FROM cov_leak", "--allow-read", tmp_path),
    ):
        res = run_cli(*args, db=db)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "view cov_leak is not one ctxprior makes" in lines[0], res.output
        assert "read_text" in lines[0]
    assert digest(db) == before
    assert not (tmp_path / "exp").exists() or not any((tmp_path / "exp").iterdir())
