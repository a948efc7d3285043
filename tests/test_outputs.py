"""No output path is the warehouse, and no existing file is replaced unless the user says so
(issue 27, seen item 1): ``ctxprior.outputs`` is the one rule every writer of a user-named path uses."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from parquet_fixtures import build_warehouse

import ctxprior
from ctxprior.errors import UserError


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def wh_file(tmp_path) -> str:
    return build_warehouse(str(tmp_path / "r.duckdb"))


def one_line_error(res, *words):
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for w in words:
        assert w in lines[0], res.output


def test_report_out_is_never_the_warehouse(run_cli, wh_file, tmp_path):
    before = digest(wh_file)
    os.symlink(wh_file, tmp_path / "link.duckdb")
    os.link(wh_file, tmp_path / "hard.duckdb")
    for out in (wh_file, tmp_path / "link.duckdb", tmp_path / "hard.duckdb", wh_file + ".wal"):
        for extra in ((), ("--overwrite",)):
            res = run_cli("report", "--out", out, *extra, db=wh_file)
            one_line_error(res, "is the warehouse")
    assert digest(wh_file) == before
    assert not Path(wh_file + ".wal").exists()
    assert ctxprior.open(wh_file).sql("SELECT count(*) AS n FROM run")["n"][0] == 2


def test_report_does_not_replace_a_file_unless_overwrite(run_cli, wh_file, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    res = run_cli("report", "--out", notes, db=wh_file)
    one_line_error(res, "notes.txt", "file exists", "--overwrite")
    assert notes.read_text() == "my notes"
    res = run_cli("report", "--out", notes, "--overwrite", db=wh_file)
    assert res.exit_code == 0, res.output
    assert notes.read_text().startswith("<!")


def test_figures_do_not_replace_files_unless_overwrite(run_cli, wh_file, tmp_path):
    from ctxprior.queries.figures import build_figures
    from ctxprior.schema import open_store

    with open_store(wh_file, read_only=True) as store:
        drawn = [f.name for f in build_figures(store) if f.fig is not None]
    out = tmp_path / "figs"
    out.mkdir()
    if drawn:
        (out / f"{drawn[0]}.png").write_text("mine")
        res = run_cli("figures", "--out", out, db=wh_file)
        one_line_error(res, "file exists")
        assert (out / f"{drawn[0]}.png").read_text() == "mine"
        assert run_cli("figures", "--out", out, "--overwrite", db=wh_file).exit_code == 0
    res = run_cli("figures", "--out", tmp_path, db=str(tmp_path / "r.duckdb"))
    one_line_error(res, "holds the warehouse")


def test_write_demo_corpus_never_the_warehouse_nor_an_existing_file(wh_file, tmp_path):
    before = digest(wh_file)
    wh = ctxprior.open(wh_file)
    with pytest.raises(UserError, match="is the warehouse"):
        wh.datasets.write_demo_corpus(wh_file)
    with pytest.raises(UserError, match="is the warehouse"):
        wh.datasets.write_demo_corpus(Path(wh_file), overwrite=True)
    assert digest(wh_file) == before
    mine = tmp_path / "corpus.jsonl.zst"
    mine.write_text("mine")
    with pytest.raises(UserError, match="file exists"):
        wh.datasets.write_demo_corpus(mine)
    assert mine.read_text() == "mine"
    assert wh.datasets.write_demo_corpus(mine, overwrite=True, n_documents=10)["documents"] == 10


def test_export_and_dry_run_never_clear_a_folder_holding_the_warehouse(run_cli, tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    db = build_warehouse(str(folder / "r.duckdb"))
    (folder / "manifest.json").write_text("{}")  # looks like an earlier export
    before = digest(db)
    res = run_cli("export", "parquet", folder, "--overwrite", db=db)
    one_line_error(res, "holds the warehouse")
    res = run_cli("publish", "me/data", "--dry-run", folder, "--overwrite", db=db)
    one_line_error(res, "holds the warehouse")
    assert digest(db) == before
    with pytest.raises(UserError, match="holds the warehouse"):
        ctxprior.open(db).parquet.export(tmp_path, overwrite=True)
