"""Every query and wait is bounded (issue 42, seen 9 and 5; docs/write-protocol.md, "Bounds"):
an input file that is a FIFO or a device is refused as it is opened (``inputs.open_input``:
``O_NONBLOCK``, a regular file only), so is one at the warehouse path; a covariate view that never
ends is interrupted (``Store.bounded``, ``CTXPRIOR_QUERY_TIMEOUT`` lowered here) and one that fails
is named, never quoted; a marker naming a live process that is not a ctxprior writer makes nobody
wait. Each probe: exit 2 (or 0 with a warning), one line, no secret, the warehouse unchanged."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from parquet_fixtures import build_warehouse, record_covariate_view

from ctxprior.storage import open_store, procs
from ctxprior.storage.store import intent_marker, writer_marker

pytestmark = pytest.mark.timeout(60)


SECRET = "TOPSECRET-b0a7d5"


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def one_line(res, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert SECRET not in res.output
    return lines[0]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A small warehouse with a run (no demo data: fast) and two covariate views the catalog
    records: one whose rows quote a value it read, one that never ends."""
    db = str(tmp_path_factory.mktemp("bounds") / "t.duckdb")
    build_warehouse(db, use_demo=False)
    con = duckdb.connect(db)
    try:
        con.execute(
            f"CREATE VIEW cov_bad AS SELECT entity, ('{SECRET}' || entity)::INTEGER AS x "
            "FROM (SELECT DISTINCT entity FROM v_susceptibility)"
        )
        con.execute(
            "CREATE VIEW cov_loop AS WITH RECURSIVE q(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM q) "
            "SELECT 'e' || n AS entity, n AS x FROM q"
        )
    finally:
        con.close()
    record_covariate_view(db, "cov_bad")
    record_covariate_view(db, "cov_loop")
    return Path(db)


@pytest.fixture
def wh(template, tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CTXPRIOR_QUERY_TIMEOUT", "0.5")
    db = str(tmp_path / "wh.duckdb")
    shutil.copyfile(template, db)
    return db


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("path", ["fifo", "/dev/zero"])
def test_sql_file_that_is_not_a_file(wh, run_cli, fifo, path):
    before = digest(wh)
    line = one_line(run_cli("sql", "--file", fifo if path == "fifo" else path, db=wh))
    assert "not a regular file" in line and "--file" in line
    assert digest(wh) == before


@pytest.mark.quick
def test_quick_entities_file_fifo(run_cli, fifo, tmp_path):
    (tmp_path / "c.txt").write_text("ctx\n")
    args = ["quick", "--query", "X is", "--entities-file", fifo, "--contexts-file", tmp_path / "c.txt"]
    assert "not a regular file" in one_line(run_cli(*args))


@pytest.mark.quick
def test_other_input_files_that_are_not_files(wh, run_cli, fifo, tmp_path):
    before = digest(wh)
    res = run_cli("covariates", "add", fifo, "--name", "x", "--on", "entity", db=wh)
    assert "fifo: not a regular file" in one_line(res)  # the one wording of inputs.py, never opened
    assert "/dev/zero: not a" in one_line(
        run_cli("fakes", "add", "/dev/zero", "--dataset", "d", "--relation", "r", db=wh)
    )
    assert digest(wh) == before


@pytest.mark.quick
@pytest.mark.parametrize("command", [["info"], ["ingest", "demo"]])
def test_a_fifo_at_the_warehouse_path(run_cli, fifo, command):
    assert "not a regular file" in one_line(run_cli(*command, db=str(fifo)))


@pytest.mark.quick
def test_a_recursive_covariate_view_is_interrupted(wh, run_cli, tmp_path):
    """Seen 9: export and publish --dry-run hung on it (60 s and counting)."""
    before = digest(wh)
    start = time.monotonic()
    res = run_cli("export", "parquet", tmp_path / "out", "--views", "cov_loop", db=wh)
    assert res.exit_code == 0, res.output
    assert "view cov_loop: still running after 0.5 s, stopped" in res.output
    res = run_cli("analyze", "--covariate", "cov_loop.x", "--only", "covariate", db=wh)
    assert "covariate view cov_loop: still running after 0.5 s" in one_line(res)
    assert time.monotonic() - start < 30
    assert digest(wh) == before


@pytest.mark.quick
def test_a_failing_covariate_view_is_named_not_quoted(wh, run_cli, tmp_path):
    """Seen 5: the error's text held what the view read (a traceback from analyze, a warning
    from export --views)."""
    before = digest(wh)
    res = run_cli("analyze", "--covariate", "cov_bad.x", "--only", "covariate", db=wh)
    assert "view cov_bad cannot be read (Conversion error" in one_line(res)
    res = run_cli("export", "parquet", tmp_path / "out", "--views", "cov_bad", db=wh)
    assert "view cov_bad cannot be read" in one_line(res)
    for f in (tmp_path / "out").rglob("*") if (tmp_path / "out").exists() else []:
        assert not f.is_file() or SECRET.encode() not in f.read_bytes()
    assert digest(wh) == before


@pytest.mark.quick
def test_a_marker_naming_another_live_process_costs_nothing(wh, run_cli, monkeypatch, sleeper):
    """Seen 9: markers naming a live process that is not a ctxprior writer (its PID, start time
    and command line recorded right) cost 63 s per command."""
    monkeypatch.setenv("CTXPRIOR_BRIEF_GRACE", "20")
    rec = procs.record(sleeper.pid)
    assert procs.proven(rec) == sleeper.pid  # the record itself is right
    for marker in (writer_marker(wh), intent_marker(wh)):
        procs.write_marker(marker, rec)
        assert procs.marker_pid(marker) is None
    start = time.monotonic()
    assert run_cli("info", db=wh).exit_code == 0
    open_store(wh, read_only=True).close()
    assert time.monotonic() - start < 10
