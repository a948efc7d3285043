"""Issue 42, seen 1 and 6: a name read from the warehouse never becomes a path, and nothing inside an
output folder (a symbolic link to elsewhere) redirects a write or a delete (``ctxprior.outputs``:
``file_name``, ``write_inside``, ``OutputFolder``). Each probe: exit code 2 and one line (or a run
that touches nothing outside the folder), the warehouse's and the victim's bytes unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest
from outputs_helpers import fake_demo

from ctxprior.errors import UserError
from ctxprior.outputs import MAX_RECORDED, file_name, write_inside
from ctxprior.storage import open_store

FOLDER_COMMANDS = {
    "export": ("export", "parquet"),
    "dry-run": ("publish", "me/data", "--dry-run"),
}


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _tree(folder) -> dict[str, str]:
    """Every file under ``folder`` (links not followed) with its bytes' digest."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for f in files:
            p = Path(root, f)
            out[str(p)] = "link" if p.is_symlink() else _sha(p)
    return out


def _one_line(res, *words) -> str:
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for w in words:
        assert w in lines[0], res.output
    return lines[0]


@pytest.fixture
def small_wh(tmp_path) -> str:
    db = str(tmp_path / "work" / "wh.duckdb")
    Path(db).parent.mkdir()
    with open_store(db, read_only=False) as store:
        store.execute("CREATE TABLE notes (a INTEGER)")
        store.execute("INSERT INTO notes VALUES (1)")
    return db


@pytest.mark.quick
@pytest.mark.parametrize(
    "name", ["../../escape", "../../../../../../../../tmp/x/deep", "/abs/deep", ".hidden", "a/b", "x\ny"]
)
def test_a_name_that_is_not_a_file_name_is_refused(name):
    with pytest.raises(UserError) as e:
        file_name(name)
    assert "cannot be a file name" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.quick
@pytest.mark.parametrize("name", ["run", "cov_my-thing", "v_reliance_rates", "a.b+c=d"])
def test_plain_names_are_their_own_file_names(name):
    assert file_name(name) == name


@pytest.mark.parametrize("kind", FOLDER_COMMANDS)
@pytest.mark.parametrize("name", ["../../escape", "../../../../../../../../{tmp}/x/deep"])
def test_a_table_named_like_a_path_writes_nothing_outside_the_folder(run_cli, small_wh, tmp_path, kind, name):
    name = name.format(tmp=str(tmp_path).strip("/"))
    with open_store(small_wh, read_only=False) as store:
        store.execute(f'CREATE TABLE "{name}" (a INTEGER)')
        store.execute(f'INSERT INTO "{name}" VALUES (1)')
    victim = tmp_path / "escape-00000-of-00001.parquet"  # what the export wrote two folders up
    victim.write_text("the user's file")
    before, wh_before = _tree(tmp_path), _sha(small_wh)
    out = tmp_path / "work" / "a" / "out"
    res = run_cli(*FOLDER_COMMANDS[kind], out, db=small_wh)
    _one_line(res, "cannot be a file name")
    assert _sha(small_wh) == wh_before and victim.read_text() == "the user's file"
    assert _tree(tmp_path) == before and not out.exists()


def _linked_folder(tmp_path, absolute: bool):
    """``out/`` from an earlier run whose manifest lists ``sub/keep.txt``, with ``out/sub`` now a
    link to the victim's folder holding ``keep.txt``."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim if absolute else Path("..") / "victim", out / "sub")
    return out, victim


@pytest.mark.parametrize("absolute", [False, True], ids=["relative-link", "absolute-link"])
@pytest.mark.parametrize("kind", [*FOLDER_COMMANDS, "demo"])
def test_overwrite_never_deletes_through_a_link(run_cli, small_wh, tmp_path, monkeypatch, kind, absolute):
    from ctxprior import pipeline

    monkeypatch.setattr(pipeline, "run_demo", fake_demo)
    out, victim = _linked_folder(tmp_path, absolute)
    fmt = {"export": "ctxprior-parquet", "dry-run": "ctxprior-parquet", "demo": "ctxprior-demo"}[kind]
    (out / "manifest.json").write_text(json.dumps({"format": fmt, "written": ["sub/keep.txt"]}))
    wh_before = _sha(small_wh)
    args = ("demo", "--out") if kind == "demo" else FOLDER_COMMANDS[kind]
    res = run_cli(*args, out, "--overwrite", db=small_wh)
    _one_line(res, "sub", "not a plain folder")
    assert (victim / "keep.txt").read_text() == "precious"
    if kind != "demo":
        assert _sha(small_wh) == wh_before


def test_overwrite_deletes_only_regular_files_it_listed(run_cli, small_wh, tmp_path):
    out = tmp_path / "out"
    assert run_cli("export", "parquet", out, db=small_wh).exit_code == 0
    listed = json.loads((out / "manifest.json").read_text())["written"]
    shard = out / listed[0]
    mine = tmp_path / "mine.txt"
    mine.write_text("mine")
    shard.unlink()
    os.symlink(mine, shard)  # a listed name that is now a link: refused, its target kept
    _one_line(run_cli("export", "parquet", out, "--overwrite", db=small_wh), "not a regular file")
    assert mine.read_text() == "mine" and shard.is_symlink()


@pytest.mark.parametrize("what", ["bytes", "entries"])
def test_a_huge_manifest_is_refused_quickly(run_cli, small_wh, tmp_path, what):
    out = tmp_path / "out"
    out.mkdir()
    m = out / "manifest.json"
    if what == "bytes":  # over MAX_MANIFEST_BYTES: not even parsed
        with open(m, "w") as f:
            f.write('{"format": "ctxprior-parquet", "written": ["' + "a" * (17 << 20) + '"]}')
    else:  # under the byte bound, over MAX_RECORDED entries
        rows = ",".join(f'"f{i}"' for i in range(MAX_RECORDED + 1))
        m.write_text('{"format": "ctxprior-parquet", "written": [' + rows + "]}")
    start = time.monotonic()
    _one_line(run_cli("export", "parquet", out, "--overwrite", db=small_wh), "not a manifest ctxprior wrote")
    assert time.monotonic() - start < 5


@pytest.mark.quick
def test_write_inside_never_follows_a_link(tmp_path):
    out, victim = _linked_folder(tmp_path, absolute=True)
    for rel in ("sub/new.txt", "sub/keep.txt"):
        with pytest.raises(UserError, match="not a plain folder"), write_inside(out, rel) as p:
            Path(p).write_text("x")
    os.symlink(victim / "keep.txt", out / "file.txt")
    with pytest.raises(UserError, match="symbolic link"), write_inside(out, "file.txt") as p:
        Path(p).write_text("x")
    for rel in ("../x.txt", "/abs.txt", "a//b", "./a"):
        with pytest.raises(UserError, match="not a path inside"), write_inside(out, rel):
            pass
    assert (victim / "keep.txt").read_text() == "precious" and sorted(os.listdir(victim)) == ["keep.txt"]
    with write_inside(out, "new/deep/ok.txt") as p:
        Path(p).write_text("ok")
    assert (out / "new" / "deep" / "ok.txt").read_text() == "ok"
    assert sorted(os.listdir(out / "new" / "deep")) == ["ok.txt"]  # no temporary file left


def test_demo_never_writes_figures_through_a_link(run_cli, tmp_path, monkeypatch):
    """``out/figures`` a link to another folder: the demo's figures (written by path) would land
    there; refused in one line before any work, the other folder unchanged."""
    from ctxprior import pipeline

    monkeypatch.setattr(pipeline, "run_demo", fake_demo)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "fig5_summary.png").write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "figures")
    before = _tree(victim)
    res = run_cli("demo", "--out", out, "--overwrite", db=str(tmp_path / "new.duckdb"))
    _one_line(res, "figures", "not a plain folder")
    assert _tree(victim) == before


@pytest.mark.parametrize("rel", ["figures/fig5_summary.png", "corpus/demo.jsonl.zst"])
def test_a_link_planted_during_the_demo_redirects_no_write(run_cli, tmp_path, monkeypatch, rel):
    """Issue 42 (round 2), item 1: the demo's figures and corpus were written by path, so a folder
    swapped for a link after the checks (``out/figures -> victim``) took the write. The swap happens
    at the fault point ``outputs.replacing``, between the check and the write: every write is made
    through ``out``'s descriptor, so the sub-folder link is refused in one line, the victim unchanged."""
    from ctxprior import faults, pipeline

    monkeypatch.setattr(pipeline, "run_demo", fake_demo)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / Path(rel).name).write_text("precious")
    out = tmp_path / "out"
    sub = out / Path(rel).parent
    swapped = []

    def swap(action, point, n):
        if point == "outputs.replacing" and not swapped and sub.is_dir() and not sub.is_symlink():
            sub.rename(tmp_path / "moved")
            os.symlink(victim, sub)
            swapped.append(point)

    monkeypatch.setenv("CTXPRIOR_FAULT", "outputs.replacing@1+:raise")
    monkeypatch.setattr(faults, "_act", swap)
    faults.reset()
    before = _tree(victim)
    res = run_cli("demo", "--out", out, db=str(tmp_path / "new.duckdb"))
    assert swapped == ["outputs.replacing"]
    _one_line(res, Path(rel).parent.name, "not a plain folder")
    assert _tree(victim) == before and sorted(os.listdir(victim)) == [Path(rel).name]


@pytest.mark.quick
def test_replacing_inside_a_folder_being_filled_never_follows_a_sub_folder_link(tmp_path):
    """``replacing`` a path inside a folder an ``OutputFolder`` is filling opens every folder below
    it without following a link (before, only the folder's own writes did)."""
    from ctxprior.outputs import OutputFolder, claim_patterns, replacing

    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / "sub").symlink_to(victim)
    folder = OutputFolder(
        tmp_path / "top", tmp_path / "wh.duckdb", fmt="ctxprior-demo", claims=claim_patterns(".*")
    )
    with folder.filling():
        with (
            pytest.raises(UserError, match="not a plain folder"),
            replacing(tmp_path / "top" / "sub" / "x.png") as p,
        ):
            p.write_text("x")
        with replacing(tmp_path / "top" / "ok.png") as p:
            p.write_text("ok")
    assert os.listdir(victim) == [] and (tmp_path / "top" / "ok.png").read_text() == "ok"
    with replacing(tmp_path / "top" / "sub" / "y.png") as p:  # not being filled: the user's path
        p.write_text("y")
    assert os.listdir(victim) == ["y.png"]
