"""A lock nothing can drop, inputs compared with the warehouse by identity, markers that cannot hang
or stall a command (issue 35 part 2; docs/write-protocol.md, "The lock"). Grouped by mechanism:

1. the flock on ``<db>.lock``: held while the warehouse is open, by the open file description, so a
   second descriptor of the warehouse, opened and closed, leaves it held and a second process out;
2. inputs by (st_dev, st_ino): a symlink or hard link of the warehouse given to any command that
   reads a path is refused in one line, exit 2, the warehouse unchanged;
3. markers opened only when regular, without blocking: a FIFO at any marker leaves `info`, `runs`
   and `runs cancel` prompt; a lock file that is a FIFO or a link is refused in one line;
4. markers proven (``storage/procs.py``, the one liveness rule): a stale marker naming a live
   process that is not the writer does not make a command wait;
5. runs keyed by the file's identity: `runs resume` through a hard link refuses a live run.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from parquet_fixtures import build_warehouse
from warehouse_helpers import DRIVER

from ctxprior.errors import UserError
from ctxprior.storage import lock, open_store, procs, runs

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def digest(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    return build_warehouse(str(tmp_path_factory.mktemp("lock") / "w.duckdb"))


@pytest.fixture
def wh(built, tmp_path) -> str:
    """A fresh copy of the small warehouse (demo rows, two runs) in this test's folder."""
    path = str(tmp_path / "wh.duckdb")
    with open(built, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    return path


def one_line(res) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    return lines[0]


# -- 1. the flock --------------------------------------------------------------------------------

HOLDER = textwrap.dedent(
    """
    import sys, time
    from ctxprior.storage import open_store
    store = open_store(sys.argv[1])
    store.scalar("SELECT count(*) FROM run")
    # a second descriptor of the warehouse, opened and closed: this drops DuckDB's POSIX lock
    with open(sys.argv[2], "rb") as f:
        f.read(16)
    print("ready", flush=True)
    time.sleep(60)
    """
)


def flock_holders(path: str) -> set[int]:
    ino = str(os.stat(path).st_ino)
    out = set()
    for line in open("/proc/locks").read().splitlines():
        parts = line.split()
        if "->" not in parts and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == ino:
            out.add(int(parts[4]))
    return out


def test_a_second_descriptor_cannot_drop_the_lock(wh, tmp_path):
    link = str(tmp_path / "hard.csv")
    os.link(wh, link)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, wh, link], stdout=subprocess.PIPE, text=True, env=ENV
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert holder.pid in flock_holders(lock.lock_path(wh))
        probe = textwrap.dedent(
            """
            import sys
            from ctxprior.errors import UserError
            from ctxprior.storage import open_store
            for ro in (False, True):
                try:
                    open_store(sys.argv[1], read_only=ro).close()
                    print("opened")
                except UserError as e:
                    print(e)
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", probe, wh], capture_output=True, text=True, env=ENV, timeout=60
        ).stdout.splitlines()
        assert len(out) == 2 and all(f"is in use by PID {holder.pid}" in line for line in out), out
    finally:
        holder.kill()
        holder.wait()
    assert flock_holders(lock.lock_path(wh)) == set()  # the kernel released it with the process


@pytest.mark.quick
def test_one_process_shares_one_lock_and_releases_it_when_the_last_store_closes(wh):
    from ctxprior.storage import open_store

    a = open_store(wh, read_only=True)
    b = open_store(wh, read_only=True)
    assert flock_holders(lock.lock_path(wh)) == {os.getpid()}
    a.close()
    assert flock_holders(lock.lock_path(wh)) == {os.getpid()}
    b.close()
    assert flock_holders(lock.lock_path(wh)) == set()


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused(wh, tmp_path, run_cli, kind):
    lp = lock.lock_path(wh)
    if os.path.exists(lp):
        os.unlink(lp)
    if kind == "fifo":
        os.mkfifo(lp)
    elif kind == "symlink":
        os.symlink(str(tmp_path / "elsewhere"), lp)
    else:
        os.mkdir(lp)
    before = digest(wh)
    line = one_line(run_cli("info", db=wh))
    assert "lock file" in line and wh in line, line
    assert digest(wh) == before


@pytest.mark.parametrize("kind", ["the-warehouse", "another-file"])
def test_a_lock_file_that_is_a_hard_link_is_refused(wh, tmp_path, run_cli, kind):
    """Issue 42 seen 8: ``<db>.lock`` a hard link of the warehouse (or of any file) is no lock."""
    lp = lock.lock_path(wh)
    if os.path.exists(lp):
        os.unlink(lp)
    other = tmp_path / "other.txt"
    other.write_text("mine")
    os.link(wh if kind == "the-warehouse" else other, lp)
    before = digest(wh)
    for args in (("info",), ("sql", "SELECT 1")):
        line = one_line(run_cli(*args, db=wh))
        assert "lock file" in line and "remove it" in line, line
    with pytest.raises(UserError, match="lock file"):
        open_store(wh, read_only=True)
    assert digest(wh) == before and other.read_text() == "mine"


def test_a_lock_file_that_cannot_be_opened_is_one_line(wh, run_cli, monkeypatch):
    """Issue 42 seen 8: ``chmod 000`` on the lock file: one line, never a command without the lock
    (the refusal is made here by os.open's EACCES: root opens a mode-000 file)."""
    lp = lock.lock_path(wh)
    run_cli("info", db=wh)
    assert os.path.exists(lp)
    os.chmod(lp, 0)
    real_open = os.open

    def denied(path, flags, *a, **k):
        if os.fspath(path) == lp:
            raise PermissionError(errno.EACCES, "Permission denied", lp)
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(lock.os, "open", denied)
    before = digest(wh)
    line = one_line(run_cli("info", db=wh))
    assert "cannot open lock file" in line and "chmod 644" in line, line
    assert digest(wh) == before


def test_no_output_replaces_the_lock_file(wh, run_cli):
    """A report written over ``<db>.lock`` would give later openers another file to lock."""
    run_cli("info", db=wh)
    before = os.stat(lock.lock_path(wh)).st_ino
    line = one_line(run_cli("report", "--out", wh + ".lock", "--overwrite", db=wh))
    assert "is the warehouse" in line, line
    assert os.stat(lock.lock_path(wh)).st_ino == before


# -- 2. inputs by identity -----------------------------------------------------------------------


def _inputs(tmp_path, link):
    """(arguments, the link's name) of every command that reads a user-named path."""
    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    (d / "t.csv").write_text("question,answer\nq,a\n")
    return {
        "covariates add csv": (["covariates", "add", "{csv}", "--on", "entity", "--name", "c1"], "c.csv"),
        "covariates add parquet": (
            ["covariates", "add", "{parquet}", "--on", "entity", "--name", "c1"],
            "c.parquet",
        ),
        "covariates kg-degree": (["covariates", "kg-degree", "{nt}", "--name", "k1"], "t.nt"),
        "covariates cooccurrence": (["covariates", "cooccurrence", "{dir}", "--name", "co1"], "c.jsonl"),
        "fakes add": (["fakes", "add", "{txt}", "--dataset", "demo", "--relation", "capital"], "f.txt"),
        "publish --citation": (
            ["publish", "me/x", "--dry-run", str(tmp_path / "dry"), "--citation", "{txt}"],
            "c.bib",
        ),
        "sql --allow-read": (["sql", "SELECT 1", "--allow-read", "{txt}"], "r.csv"),
        "sql --file": (["sql", "--file", "{txt}"], "q.sql"),
        "ingest table --spec": (["ingest", "table", str(d / "t.csv"), "--spec", "{txt}"], "s.yaml"),
        "ingest table": (
            ["ingest", "table", "{csv}", "--name", "t2", "--question", "question", "--gold", "answer"]
            + ["--context", "gold=ctx"],
            "t.csv",
        ),
        "import parquet": (["import", "parquet", "{dir}"], "manifest.json"),
    }


def _cases():
    names = [
        "covariates add csv",
        "covariates add parquet",
        "covariates kg-degree",
        "covariates cooccurrence",
        "fakes add",
        "publish --citation",
        "sql --allow-read",
        "sql --file",
        "ingest table --spec",
        "ingest table",
        "import parquet",
    ]
    return [(n, k) for n in names for k in ("symlink", "hardlink")]


@pytest.mark.parametrize("command,kind", _cases())
def test_a_link_of_the_warehouse_as_an_input_is_refused(wh, tmp_path, run_cli, command, kind):
    args, name = _inputs(tmp_path, kind)[command]
    folder = tmp_path / "links"
    folder.mkdir()
    link = folder / name
    if kind == "symlink":
        os.symlink(wh, link)
    else:
        os.link(wh, link)
    args = [a.format(csv=link, parquet=link, nt=link, txt=link, dir=folder) for a in args]
    before = digest(wh)
    line = one_line(run_cli(*args, db=wh))
    assert "is the warehouse" in line or "that is the warehouse file" in line, line
    assert digest(wh) == before
    assert not os.path.exists(wh + ".wal")


@pytest.mark.quick
def test_the_identity_check_follows_links_and_names_the_option(wh, tmp_path):
    from ctxprior.errors import UserError
    from ctxprior.inputs import check_input, warehouse_of

    sym, hard, other = tmp_path / "s.csv", tmp_path / "h.csv", tmp_path / "o.csv"
    os.symlink(wh, sym)
    os.link(wh, hard)
    other.write_text("x\n")
    for p in (wh, sym, hard):
        assert warehouse_of(p, wh) == wh
        with pytest.raises(UserError, match=r"--spec .*: is the warehouse"):
            check_input(p, "--spec", warehouse=wh)
    open(wh + ".wal", "wb").close()
    assert warehouse_of(wh + ".wal", wh) == wh
    os.unlink(wh + ".wal")
    for p in (other, tmp_path / "missing.csv", "", "a\0b"):
        assert warehouse_of(p, wh) is None
        check_input(p, warehouse=wh)


# -- 3. markers never block ----------------------------------------------------------------------

PROMPT = textwrap.dedent(
    """
    import sys, time
    from click.testing import CliRunner
    from ctxprior.cli import cli
    for args in (["info"], ["runs"], ["runs", "cancel", "2", "--timeout", "2"]):
        t = time.monotonic()
        res = CliRunner().invoke(cli, ["--db", sys.argv[1], *args])
        print(" ".join(args), res.exit_code, round(time.monotonic() - t, 2), flush=True)
    """
)


def run_prompt(db: str) -> list[tuple[str, int, float]]:
    out = subprocess.run(
        [sys.executable, "-c", PROMPT, db], capture_output=True, text=True, env=ENV, timeout=90
    )
    rows = []
    for line in out.stdout.splitlines():
        *cmd, code, secs = line.split()
        rows.append((" ".join(cmd), int(code), float(secs)))
    assert len(rows) == 3, out.stdout + out.stderr
    return rows


@pytest.mark.parametrize("marker", [".write-intent", ".writer", ".run-2.driver"])
def test_a_fifo_at_a_marker_hangs_nothing(wh, marker):
    runs_row_running(wh)
    os.mkfifo(wh + marker)
    for cmd, code, secs in run_prompt(wh):
        assert code == 0 and secs < 15, (cmd, code, secs)


def runs_row_running(db: str, pid: int | None = None) -> None:
    import duckdb

    con = duckdb.connect(db)
    try:
        con.execute(
            "UPDATE run SET status = 'running', host = ?, pid = ?, ended_at = NULL WHERE run_id = 2",
            [socket.gethostname(), pid or 1],
        )
    finally:
        con.close()


# -- 4. markers are proven -----------------------------------------------------------------------


@pytest.mark.parametrize("style", ["pid-and-name", "json-wrong-start", "json-wrong-command"])
def test_a_stale_marker_naming_a_live_other_process_does_not_stall(wh, sleeper, style):
    rec = procs.record(sleeper.pid)
    assert procs.proven(rec) == sleeper.pid  # the sleeper itself is alive and proven
    if style == "pid-and-name":
        text = f"{sleeper.pid} sleep\n"  # the reproduction, and the old marker format
    elif style == "json-wrong-start":
        text = json.dumps({**rec, "started": rec["started"] - 100})
    else:
        text = json.dumps({**rec, "cmdline": [sys.executable, "-m", "ctxprior"]})
    for m in (".writer", ".write-intent"):
        with open(wh + m, "w") as f:
            f.write(text)
    runs_row_running(wh, sleeper.pid)
    t = time.monotonic()
    rows = run_prompt(wh)
    assert all(code == 0 and secs < 15 for _, code, secs in rows), rows
    assert time.monotonic() - t < 60
    assert sleeper.poll() is None  # never signalled


@pytest.mark.quick
def test_the_one_liveness_rule(sleeper):
    rec = procs.record(sleeper.pid)
    assert procs.alive(sleeper.pid) and procs.proven(rec) == sleeper.pid
    assert procs.proven({**rec, "started": rec["started"] + 1}) is None
    assert procs.proven({**rec, "cmdline": ["sleep", "301"]}) is None
    assert procs.proven({"pid": sleeper.pid}) is None and procs.proven("x") is None
    sleeper.kill()
    sleeper.wait()
    assert not procs.alive(sleeper.pid) and procs.proven(rec) is None
    assert not procs.alive(0) and not procs.alive(-1)


# -- 5. runs keyed by the file's identity --------------------------------------------------------


def test_resume_through_a_hard_link_refuses_a_live_run(wh, tmp_path, run_cli):
    hard = str(tmp_path / "hl.duckdb")
    os.link(wh, hard)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, wh], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert driver.stdout.readline().strip() == "ready"
        assert runs._driver_file(hard, 2) == runs._driver_file(wh, 2)
        assert runs.driver_pid(hard, 2, socket.gethostname(), driver.pid) == driver.pid
        elsewhere = tmp_path / "other"  # a hard link in another folder: side files of its own,
        elsewhere.mkdir()  # the proof found by the file's identity (runs._identity_driver_file)
        os.link(wh, elsewhere / "far.duckdb")
        assert runs._driver_file(str(elsewhere / "far.duckdb"), 2) != runs._driver_file(wh, 2)
        for db in (hard, str(tmp_path / "sym.duckdb"), str(elsewhere / "far.duckdb")):
            if db.endswith("sym.duckdb"):
                os.symlink(hard, db)
            res = run_cli("--wait", "30", "runs", "resume", "2", db=db)
            assert one_line(res).startswith(f"Error: run 2 is running in PID {driver.pid}"), res.output
        assert driver.poll() is None
    finally:
        driver.kill()
        driver.wait()


def test_a_driver_file_of_another_file_is_no_proof(wh, tmp_path, sleeper):
    """A driver file copied beside a different warehouse (another inode) proves nothing there."""
    proof = {"host": socket.gethostname(), **procs.record(sleeper.pid), "token": "t"}
    with open(runs._driver_file(wh, 2), "w") as f:
        json.dump({**proof, "warehouse": [0, 0]}, f)
    assert runs.driver_pid(wh, 2, socket.gethostname(), sleeper.pid) is None
    st = os.stat(wh)
    with open(runs._driver_file(wh, 2), "w") as f:
        json.dump({**proof, "warehouse": [st.st_dev, st.st_ino]}, f)
    # issue 42 seen 4: even with this file's identity, a proof naming a live process that holds no
    # driver lock (it never ran claim_driver) is none; the real driver's is checked in test_run_ownership
    assert runs.driver_pid(wh, 2, socket.gethostname(), sleeper.pid) is None


# -- the writer holds its file by identity (issue 42 seen 7) -------------------------------------


def _two_warehouses(tmp_path):
    wh, other = str(tmp_path / "wh.duckdb"), str(tmp_path / "other.duckdb")
    for p in (wh, other):
        with open_store(p, read_only=False) as s:
            s.execute("CREATE TABLE notes (a INTEGER)")
    return wh, other


def _add(store, value):
    with store.transaction():
        store.execute("INSERT INTO notes VALUES (?)", [value])


@pytest.mark.parametrize("swap", ["another-moved-in", "moved-away", "deleted"])
@pytest.mark.parametrize("brief", [True, False], ids=["brief", "held"])
def test_a_writer_stops_when_its_path_names_another_file(tmp_path, swap, brief):
    wh, other = _two_warehouses(tmp_path)
    store = open_store(wh, brief=brief)
    try:
        _add(store, 1)
        if not brief:
            store.con.execute("CHECKPOINT")
        mine_before = digest(wh)
        if swap == "another-moved-in":
            other_before = digest(other)
            os.replace(other, wh)  # `mv other.duckdb wh.duckdb` while the writer runs
        elif swap == "moved-away":
            os.rename(wh, tmp_path / "moved.duckdb")
        else:
            os.unlink(wh)
        with pytest.raises(UserError) as e:
            _add(store, 2)
        assert "\n" not in str(e.value) and f"warehouse {wh} " in str(e.value), str(e.value)
    finally:
        store.close()
    if swap == "another-moved-in":
        assert digest(wh) == other_before  # the other warehouse was not written
    elif swap == "moved-away":
        assert not os.path.exists(wh)  # no new warehouse at the old name
        assert digest(tmp_path / "moved.duckdb") == mine_before or brief is False
    else:
        assert not os.path.exists(wh)
