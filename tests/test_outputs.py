"""No output path is the warehouse, and no existing file is replaced unless the user says so
(issue 27, seen item 1): ``ctxprior.outputs`` is the one rule every writer of a user-named path uses."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest
from outputs_helpers import fake_demo
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
    from ctxprior.analyses.figures import build_figures
    from ctxprior.storage import open_store

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


# -- folders ctxprior fills: --overwrite replaces only the files its manifest records (issue 35) --

FOLDER_COMMANDS = {
    "export": ("export", "parquet"),
    "dry-run": ("publish", "me/data", "--dry-run"),
}


def fill(run_cli, kind, folder, *extra, db):
    return run_cli(*FOLDER_COMMANDS[kind], folder, *extra, db=db)


def recorded(folder) -> set[str]:
    return set(json.loads((Path(folder) / "manifest.json").read_text())["written"])


def files_under(folder) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if not p.is_dir()}


@pytest.mark.parametrize("kind", FOLDER_COMMANDS)
def test_overwrite_keeps_the_users_files_and_replaces_the_recorded_ones(run_cli, wh_file, tmp_path, kind):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    one_line_error(fill(run_cli, kind, out, db=wh_file), "not empty", "--overwrite")
    assert files_under(out) == {"notes.txt"}
    res = fill(run_cli, kind, out, "--overwrite", db=wh_file)
    assert res.exit_code == 0, res.output
    first = recorded(out)
    assert files_under(out) == first | {"manifest.json", "notes.txt"}
    assert (kind == "dry-run") == ("README.md" in first)
    (out / "data" / "mine.txt").write_text("keep too")  # a user's file inside ctxprior's subfolder
    one_line_error(fill(run_cli, kind, out, db=wh_file), "an earlier ctxprior", "--overwrite")
    res = fill(run_cli, kind, out, "--overwrite", db=wh_file)  # twice: the normal path
    assert res.exit_code == 0, res.output
    assert recorded(out) == first
    assert files_under(out) == first | {"manifest.json", "notes.txt", "data/mine.txt"}
    assert (out / "notes.txt").read_text() == "keep" and (out / "data" / "mine.txt").read_text() == "keep too"
    assert not list(out.rglob(".*tmp*"))  # no temporary file left


def test_a_smaller_export_removes_the_earlier_ones_files_and_nothing_else(run_cli, wh_file, tmp_path):
    out = tmp_path / "out"
    assert run_cli("export", "parquet", out, db=wh_file).exit_code == 0
    (out / "notes.txt").write_text("keep")
    res = run_cli("export", "parquet", out, "--tables", "run", "--overwrite", db=wh_file)
    assert res.exit_code == 0, res.output
    assert files_under(out) == {"manifest.json", "notes.txt", "data/run/run-00000-of-00001.parquet"}
    assert sorted(p.name for p in (out / "data").iterdir()) == ["run"]  # emptied folders removed


@pytest.mark.parametrize("kind", FOLDER_COMMANDS)
@pytest.mark.parametrize(
    "manifest, words",
    [
        ('{"name": "x"}', "not a manifest ctxprior wrote"),
        ("{not json", "not a manifest ctxprior wrote"),
        ('{"format": "ctxprior-parquet", "written": ["../notes.txt"]}', "not a manifest ctxprior wrote"),
        ('{"format": "ctxprior-parquet", "written": ["/etc/hostname"]}', "not a manifest ctxprior wrote"),
        ('{"format": "ctxprior-demo", "written": ["report.html"]}', "another kind"),
    ],
)
def test_a_manifest_ctxprior_did_not_write_is_refused(run_cli, wh_file, tmp_path, kind, manifest, words):
    out = tmp_path / "p"
    out.mkdir()
    (out / "manifest.json").write_text(manifest)
    (out / "notes.txt").write_text("keep")
    (out / "report.html").write_text("mine")
    one_line_error(fill(run_cli, kind, out, "--overwrite", db=wh_file), "manifest.json", words)
    assert (out / "manifest.json").read_text() == manifest
    assert files_under(out) == {"manifest.json", "notes.txt", "report.html"}


@pytest.mark.parametrize("kind", FOLDER_COMMANDS)
def test_a_users_file_where_ctxprior_would_write_is_refused(run_cli, wh_file, tmp_path, kind):
    out = tmp_path / "out"
    assert fill(run_cli, kind, out, db=wh_file).exit_code == 0
    rel = sorted(recorded(out))[-1]
    m = json.loads((out / "manifest.json").read_text())
    m["written"].remove(rel)  # the file is now the user's: ctxprior did not record it
    (out / "manifest.json").write_text(json.dumps(m))
    (out / rel).write_text("mine")
    one_line_error(fill(run_cli, kind, out, "--overwrite", db=wh_file), rel, "not written by ctxprior")
    assert (out / rel).read_text() == "mine"
    assert all((out / f).exists() for f in m["written"])  # nothing removed by the refusal


def test_a_manifest_that_is_a_fifo_is_refused_without_blocking(run_cli, wh_file, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "manifest.json")
    one_line_error(run_cli("export", "parquet", out, "--overwrite", db=wh_file), "not a manifest")


def test_a_killed_export_leaves_its_files_recorded(run_cli, wh_file, tmp_path, monkeypatch):
    """The manifest is rewritten before each file: an export that stops half-way is replaced whole."""
    import ctxprior.publish.parquet as parquet

    out = tmp_path / "out"
    calls = []

    def dies_on_the_third(path):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(path)

    real = parquet.sha256_file
    monkeypatch.setattr(parquet, "sha256_file", dies_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        ctxprior.open(wh_file).parquet.export(out)
    monkeypatch.setattr(parquet, "sha256_file", real)
    m = json.loads((out / "manifest.json").read_text())
    assert m["incomplete"] and len(m["written"]) == 3
    # the file being written when it stopped is absent (its temporary file removed), the rest recorded
    assert files_under(out) <= set(m["written"]) | {"manifest.json"} and len(files_under(out)) == 3
    (out / "notes.txt").write_text("keep")
    assert run_cli("export", "parquet", out, "--overwrite", db=wh_file).exit_code == 0
    assert "incomplete" not in json.loads((out / "manifest.json").read_text())
    assert files_under(out) == recorded(out) | {"manifest.json", "notes.txt"}


def test_demo_replaces_only_its_recorded_files(run_cli, tmp_path, monkeypatch):
    from ctxprior import pipeline

    monkeypatch.setattr(pipeline, "run_demo", fake_demo)
    db = str(tmp_path / "new.duckdb")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("mine")  # issue 35: the user's own report.html was replaced
    (out / "notes.txt").write_text("keep")
    for extra in ((), ("--overwrite",)):
        res = run_cli("demo", "--out", out, *extra, db=db)
        one_line_error(res, "not empty" if not extra else "report.html")
        assert (out / "report.html").read_text() == "mine"
    assert not Path(db).exists()  # refused before the warehouse was opened
    (out / "report.html").unlink()
    for _ in range(2):  # the normal path, twice
        res = run_cli("demo", "--out", out, "--overwrite", db=db)
        assert res.exit_code == 0, res.output
        assert recorded(out) == {
            "report.html",
            "corpus/demo.jsonl.zst",
            "figures/fig5_summary.png",
            "figures/fig5_summary.csv",
        }
        assert (out / "notes.txt").read_text() == "keep"
    one_line_error(run_cli("demo", "--out", out, db=db), "an earlier ctxprior demo", "--overwrite")
    (out / "figures" / "fig9_mine.png").write_text("mine")  # named like a figure, not the demo's
    one_line_error(run_cli("demo", "--out", out, "--overwrite", db=db), "fig9_mine.png")
    assert (out / "report.html").read_text() == "demo"  # nothing removed by the refusal


# -- single files: a temporary file beside the target, renamed over it; only regular files replaced --


def _single_file_writers(wh_file):
    """(name, write(path, overwrite)) for each command that writes one user-named file."""
    from ctxprior.analyses.figures import build_figures
    from ctxprior.storage import open_store

    with open_store(wh_file, read_only=True) as store:
        drawn = next(f.name for f in build_figures(store) if f.fig is not None)
    wh = ctxprior.open(wh_file)
    return {
        "report": lambda p, ow: wh.analyses.report(p, overwrite=ow),
        "figures": lambda p, ow: wh.analyses.figures(Path(p).parent, overwrite=ow),
        "corpus": lambda p, ow: wh.datasets.write_demo_corpus(p, overwrite=ow, n_documents=10),
    }, drawn


@pytest.mark.parametrize("writer", ["report", "figures", "corpus"])
def test_a_target_that_is_not_a_regular_file_is_refused(wh_file, tmp_path, writer):
    writers, fig = _single_file_writers(wh_file)
    name = {"report": "r.html", "figures": f"{fig}.png", "corpus": "c.jsonl.zst"}[writer]
    mine = tmp_path / "mine.txt"
    mine.write_text("mine")
    folder = tmp_path / writer
    folder.mkdir()
    os.symlink(mine, folder / name)
    with pytest.raises(UserError, match="symbolic link"):
        writers[writer](folder / name, True)
    os.unlink(folder / name)
    os.mkfifo(folder / name)
    with pytest.raises(UserError, match="not a regular file"):
        writers[writer](folder / name, True)  # and it does not block on the FIFO
    assert mine.read_text() == "mine"
    os.unlink(folder / name)
    writers[writer](folder / name, False)
    writers[writer](folder / name, True)  # the normal path, twice
    assert (folder / name).is_file() and not list(folder.glob(".*tmp*"))
    umask = os.umask(0)
    os.umask(umask)
    assert (folder / name).stat().st_mode & 0o777 == 0o666 & ~umask  # a new file's mode, not the temp's


def test_report_into_proc_self_fd_is_refused(run_cli, wh_file, tmp_path):
    """Issue 35: ``report --out /proc/self/fd/N`` wrote into whatever the process had open as N."""
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    with open(victim, "a") as f:
        one_line_error(run_cli("report", "--out", f"/proc/self/fd/{f.fileno()}", "--overwrite", db=wh_file))
    free = max(int(n) for n in os.listdir("/proc/self/fd")) + 50
    res = run_cli("report", "--out", f"/proc/self/fd/{free}", "--overwrite", db=wh_file)
    one_line_error(res, f"/proc/self/fd/{free}")
    assert victim.read_text() == "mine"


def test_a_link_put_in_place_during_the_write_is_not_followed(tmp_path):
    from ctxprior.outputs import replacing

    mine = tmp_path / "mine.txt"
    mine.write_text("mine")
    target = tmp_path / "report.html"
    with pytest.raises(UserError, match="symbolic link"), replacing(target) as tmp:
        tmp.write_text("report")
        os.symlink(mine, target)  # another process (or a descriptor opened meanwhile) takes the name
    assert mine.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == [
        "mine.txt",
        "report.html",
    ]


# -- migrate: the backup never replaces a file, fits on the disk, and is never left half-written ---


def _v1(db: str) -> str:
    """Make ``db`` (a current warehouse) a version-1 one, as test_warehouse does."""
    import duckdb

    con = duckdb.connect(db)
    con.execute("ALTER TABLE run_unit_engine DROP COLUMN IF EXISTS head")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    return db


def schema_version(db) -> str:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def v1_db(tmp_path) -> str:
    from ctxprior.storage import open_store

    db = str(tmp_path / "wh.duckdb")
    open_store(db).close()
    return _v1(db)


def test_migrate_never_replaces_a_backup(run_cli, v1_db, tmp_path):
    Path(v1_db + ".v1.bak").write_text("mine")  # issue 35: replaced silently
    os.symlink(v1_db, v1_db + ".v1.1.bak")  # issue 35: SameFileError
    res = run_cli("migrate", db=v1_db)
    assert res.exit_code == 0, res.output
    assert f"backup written to {v1_db}.v1.2.bak" in res.output
    assert Path(v1_db + ".v1.bak").read_text() == "mine" and os.path.islink(v1_db + ".v1.1.bak")
    _v1(v1_db)  # the normal path, twice: distinct names
    res = run_cli("migrate", db=v1_db)
    assert res.exit_code == 0 and f"backup written to {v1_db}.v1.3.bak" in res.output, res.output
    assert schema_version(v1_db + ".v1.3.bak") == "1" and schema_version(v1_db) != "1"
    assert os.stat(v1_db + ".v1.3.bak").st_mode == os.stat(v1_db).st_mode
    assert not list(tmp_path.glob(".*tmp"))


def test_migrate_on_a_full_disk_leaves_no_backup_and_one_line(run_cli, v1_db, tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 1000, 1000))
    one_line_error(run_cli("migrate", db=v1_db), "MiB free", "free disk space")
    assert (
        sorted(p.name for p in tmp_path.iterdir()) == ["wh.duckdb", "wh.duckdb.lock"]
        and schema_version(v1_db) == "1"
    )
    monkeypatch.undo()

    def fills_the_disk(src, dst, length=0):
        dst.write(src.read(4096))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(shutil, "copyfileobj", fills_the_disk)
    one_line_error(run_cli("migrate", db=v1_db), "No space left on device", "nothing was changed")
    assert (
        sorted(p.name for p in tmp_path.iterdir()) == ["wh.duckdb", "wh.duckdb.lock"]
        and schema_version(v1_db) == "1"
    )
