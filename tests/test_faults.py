"""Crash safety of scoring runs (issue 8). The scoring process is the real CLI (`ctxprior score`)
in a forked child (see scale_helpers.start_cli), so it can be SIGKILLed, given a full disk or
denied permission for real.

- SIGKILL at 7 different points (model load, creating the run row, inside a unit's transaction,
  after a commit before the checkpoint, in a brief writer's release, at a random moment, during
  the final status update), each followed by a rerun: no duplicates after any crash, and the
  final tables equal an uninterrupted run;
- disk full (RLIMIT_FSIZE) and permission loss (root without CAP_DAC_OVERRIDE on a 0444 file) in
  the middle of a run: a one-line error, the last committed state intact, resumable;
- a model whose output head is NaN / inf: its units are marked failed with the reason, no rows.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time

import pytest
from scale_helpers import (
    SCORE,
    copy_db,
    duplicates,
    make_tiny_folder,
    run_cli_child,
    snapshot,
    start_cli,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def base(scored):
    """The session's scored warehouse (conftest.py), built once instead of once per module."""
    return scored


def _state(db):
    from ctxprior.storage import open_store

    with open_store(db, read_only=True, wait=30) as store:
        runs = store.query("SELECT run_id, status, units_done, units_total FROM run ORDER BY 1")
        units = store.scalar("SELECT count(*) FROM run_unit WHERE status = 'done'")
        rows = store.scalar("SELECT count(*) FROM persuasion")
    return runs, units, rows


def _consistent(db, per_unit_rows=12):
    """Every committed unit has its rows and nothing else (one transaction per unit)."""
    runs, units, rows = _state(db)
    assert duplicates(db) == 0
    assert rows == units * per_unit_rows, (runs, units, rows)
    for _, _, done, _ in runs:
        assert done is None or done <= units
    return runs, units


def test_sigkill_at_many_points_then_resume(base, tmp_path):
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    cmd = ["--db", db, *SCORE, "--model", base["tiny"]]
    log = tmp_path / "child.log"
    points = []

    def crash(fault, expect_units=None):
        code, out = run_cli_child(cmd, log, env={"CTXPRIOR_FAULT": fault})
        assert code == -signal.SIGKILL, f"{fault}: exit {code}\n{out}"
        runs, units = _consistent(db)
        if expect_units is not None:
            assert units == expect_units, (fault, units)
        points.append(fault)
        return runs, units

    # 1. while loading the model: nothing but the schema exists yet
    runs, _ = crash("model.load:kill", expect_units=0)
    assert runs == []
    # 2. inside the transaction creating the run row (tx #1 is the schema check at open)
    runs, _ = crash("tx.before_commit@2:kill", expect_units=0)
    assert runs == []
    # 3. inside unit 3's transaction: its rows were inserted but never committed
    runs, _ = crash("tx.before_commit@5:kill", expect_units=2)
    assert runs[0][1] == "running"
    # 4. right after unit 4's COMMIT, before the checkpoint: the WAL alone must carry it
    crash("tx.after_commit@4:kill", expect_units=4)  # tx: schema, run row, unit 3, unit 4
    # 5. in a brief writer's release (checkpointed, file not closed yet)
    crash("store.release@6:kill")
    # 6. at a random moment, from outside
    p = start_cli(cmd, log)
    time.sleep(random.Random(8).uniform(1.0, 4.0))
    os.kill(p.pid, signal.SIGKILL)
    p.join()
    _consistent(db)
    points.append("random")
    # 7. during the final status update: every unit committed, the run still says running
    runs, units = _state(db)[:2]
    pending = runs[0][3] - units
    if pending > 0:
        _, units = crash(f"tx.before_commit@{3 + pending}:kill", expect_units=runs[0][3])
        from click.testing import CliRunner

        from ctxprior.cli import cli

        res = CliRunner().invoke(cli, ["--db", db, "runs"])
        assert re.search(r"\s1\s+persuasion\s+stopped\s+8/8", res.output), res.output
    assert len(points) >= 6
    # resume: `ctxprior runs resume R`
    code, out = run_cli_child(["--db", db, "runs", "resume", "1", "--quiet"], log)
    assert code == 0, out
    assert len(_state(db)[0]) == 1  # one run, resumed every time
    assert snapshot(db, 1) == base["ref"]
    assert duplicates(db) == 0


def test_disk_full_mid_run(base, tmp_path):
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    size = os.path.getsize(db)
    code, out = run_cli_child(
        ["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "c.log", fsize=size + 600_000
    )
    lines = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert code == 2, out
    assert len(lines) == 1 and "cannot write warehouse" in lines[0] and "intact" in lines[0], out
    assert "Traceback" not in out
    runs, units = _consistent(db)
    assert units < 8
    # disk space back: the same command finishes the run, identical to an uninterrupted one
    code, out = run_cli_child(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "d.log")
    assert code == 0, out
    assert snapshot(db) == base["ref"]


def test_permission_lost_mid_run(base, tmp_path):
    """Root ignores file modes, so the child drops CAP_DAC_OVERRIDE; the test makes the warehouse
    read-only (chmod 0444) after the run committed its first unit; the next commit fails."""
    from ctxprior.storage import open_store

    db = copy_db(base["db"], tmp_path / "w.duckdb")
    # the writer waits 0.3 s (file released) before each reopen from the third: the chmod lands mid-run
    p = start_cli(
        ["--db", db, *SCORE, "--model", base["tiny"]],
        tmp_path / "c.log",
        no_dac=True,
        env={"CTXPRIOR_FAULT": "store.connect@3+:sleep=0.3"},
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.is_alive():
        try:
            with open_store(db, read_only=True, wait=5) as store:
                if (store.scalar("SELECT count(*) FROM run_unit") or 0) >= 1:
                    break
        except Exception:
            pass
        time.sleep(0.05)
    os.chmod(db, 0o444)
    p.join(300)
    out = (tmp_path / "c.log").read_text()
    assert p.exitcode == 2, out
    err = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert len(err) == 1 and "Permission denied" in err[0] and "intact" in err[0], out
    os.chmod(db, 0o644)
    _, units = _consistent(db)
    assert 1 <= units < 8
    code, out = run_cli_child(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "d.log")
    assert code == 0, out
    assert snapshot(db) == base["ref"]


@pytest.mark.parametrize("poison", ["nan", "inf"])
def test_broken_model_units_fail_with_reason(base, tmp_path, poison):
    from click.testing import CliRunner

    from ctxprior.cli import cli

    bad = make_tiny_folder(tmp_path / f"tiny-{poison}", poison=poison)
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    res = CliRunner().invoke(
        cli,
        [
            "--db",
            db,
            "score",
            "--sample",
            "1",
            "--query-types",
            "open",
            "--relation",
            "capital",
            "--shard-size",
            "4",
            "--model",
            bad,
            "--quiet",
        ],
    )
    assert res.exit_code == 2
    from ctxprior.storage import open_store

    with open_store(db, read_only=True) as store:
        status, err = store.query("SELECT status, error FROM run")[0]
        units = store.query("SELECT status, error FROM run_unit")
        n = store.scalar("SELECT count(*) FROM persuasion") + store.scalar(
            "SELECT count(*) FROM susceptibility"
        )
        nan = store.scalar("SELECT count(*) FROM persuasion WHERE isnan(persuasion) OR isinf(persuasion)")
    assert status == "failed" and n == 0 and nan == 0
    assert units and all(s == "failed" and "NaN/inf" in e for s, e in units), units
    res = CliRunner().invoke(cli, ["--db", db, "runs"])
    assert "failed" in res.output and "NaN/inf" in res.output


def test_an_unknown_fault_point_is_refused_not_ignored(monkeypatch):
    """A misspelt or renamed point (wh.connect is store.connect now) would make a crash test pass
    without crashing anything; it is an error naming the points instead."""
    from ctxprior import faults

    monkeypatch.setattr(faults, "_spec_cache", None)
    monkeypatch.setattr(faults, "_counts", {})
    monkeypatch.setenv(faults.ENV, "wh.connect@2+:sleep=0.3")
    with pytest.raises(ValueError, match=r"unknown point 'wh.connect'; the points are .*store\.connect"):
        faults.hit("store.connect")
    monkeypatch.setenv(faults.ENV, "store.connect@2:raise")
    faults.hit("store.connect")  # the first arrival: nothing
