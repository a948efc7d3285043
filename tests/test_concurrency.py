"""Several processes on one warehouse while a run writes (issue 8; protocol in storage/store.py).

- a second writer during a run: it fails with "warehouse ... is in use by PID n (command)" when it
  hits a commit (no --wait), or waits its turn (--wait), and the run still ends identical;
- the load test: 8 concurrent read-only `ctxprior sql` clients querying v_persuasion aggregates
  during a run (each in its own process); every answer is a committed state (the units it saw as
  done, with exactly their rows), no reader fails; queries/s printed.
"""

from __future__ import annotations

import re
import time

import pytest
from scale_helpers import (
    SCORE,
    copy_db,
    duplicates,
    forkserver,
    run_cli_child,
    snapshot,
    start_cli,
)

# many processes against one file, with timing: these and tests/test_write_protocol.py share one
# pytest-xdist worker, so two such crowds never run at once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]


@pytest.fixture
def base(scored):
    """The session's scored warehouse (conftest.py), built once instead of once per module."""
    return scored


def test_second_writer_fails_or_waits(base, tmp_path, monkeypatch):
    from ctxprior.errors import UserError
    from ctxprior.storage import open_store

    monkeypatch.setenv("CTXPRIOR_BRIEF_GRACE", "0.2")  # do not sit out the driver's commit window
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    # the driver holds the file for 3 s inside unit 2's transaction (and briefly at every commit)
    p = start_cli(
        ["--db", db, *SCORE, "--model", base["tiny"]],
        tmp_path / "run.log",
        env={"CTXPRIOR_FAULT": "tx.before_commit@4:sleep=3"},
    )
    refused, got_in = [], 0
    deadline = time.monotonic() + 300
    while not refused and time.monotonic() < deadline and p.is_alive():
        try:
            with open_store(db) as store:  # a second writer, no --wait
                with store.transaction():
                    store.execute("INSERT INTO meta VALUES (?, 'between commits')", [f"probe-{got_in}"])
                got_in += 1
        except UserError as e:
            refused.append(str(e))
        time.sleep(0.05)
    assert refused, "never saw the driver holding the warehouse"
    assert re.search(
        rf"is in use by PID {p.pid} \(.+\); wait for it to finish \(or pass --wait SECONDS\)", refused[0]
    ), refused[0]
    # with --wait it queues behind the driver's commit and then writes
    with open_store(db, wait=120) as store, store.transaction():
        store.execute("INSERT INTO meta VALUES ('probe-wait', 'waited')")
    p.join(300)
    assert p.exitcode == 0, (tmp_path / "run.log").read_text()
    assert snapshot(db) == base["ref"] and duplicates(db) == 0
    with open_store(db, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM meta WHERE key LIKE 'probe-%'") == got_in + 1


def test_eight_readers_during_a_run(base, tmp_path):
    from loadtest import check_answers, reader, unit_reference, wait_for_run

    db = copy_db(base["db"], tmp_path / "w.duckdb")
    stop = tmp_path / "stop"
    ctx = forkserver()
    readers = [
        ctx.Process(target=reader, args=(db, str(tmp_path / f"r{i}.jsonl"), str(stop), 30.0))
        for i in range(8)
    ]
    writer = start_cli(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "run.log")
    assert wait_for_run(db, 1, proc=writer)  # start the readers once the run has begun
    t0 = time.perf_counter()
    for r in readers:
        r.start()
    for r in readers:  # bounded: readers stop after 30 s (or when the run ends)
        while r.is_alive() and writer.is_alive():
            r.join(0.5)
    stop.touch()
    for r in readers:
        r.join(60)
    elapsed = time.perf_counter() - t0
    writer.join(300)
    assert writer.exitcode == 0, (tmp_path / "run.log").read_text()
    res = check_answers([str(tmp_path / f"r{i}.jsonl") for i in range(8)], unit_reference(base["refdb"]))
    print(
        f"\n8 readers during a run: {res['queries']} queries in {elapsed:.1f} s = "
        f"{res['queries'] / elapsed:.1f} queries/s (p50 {res['p50'] * 1000:.0f} ms, "
        f"p95 {res['p95'] * 1000:.0f} ms); states seen {res['states_seen']}"
    )
    assert res["errors"] == 0, res["error_samples"]
    assert res["n_inconsistent"] == 0, res["inconsistent"]
    assert res["queries"] >= 8 and len(res["states_seen"]) >= 2  # readers saw the run progress
    assert snapshot(db) == base["ref"] and duplicates(db) == 0


SLOW_REOPENS = {"CTXPRIOR_FAULT": "store.connect@3+:sleep=0.3"}


def test_runs_cancel_then_resume(base, tmp_path):
    """`ctxprior runs cancel 1` stops a running run (SIGTERM, finished units kept, status
    cancelled); `ctxprior runs resume 1` finishes it with the rows of an uninterrupted run."""
    from click.testing import CliRunner

    from ctxprior.cli import cli
    from ctxprior.storage import open_store

    db = copy_db(base["db"], tmp_path / "w.duckdb")
    # the writer waits 0.3 s (file released) before each reopen from the third, so the cancel lands mid-run however fast
    # the engine computes the tiny model's units (they are computed ahead while the driver commits)
    p = start_cli(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "run.log", env=SLOW_REOPENS)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.is_alive():
        try:
            with open_store(db, read_only=True, wait=5) as store:
                if (store.scalar("SELECT count(*) FROM run_unit") or 0) >= 1:
                    break
        except Exception:
            pass
        time.sleep(0.05)
    res = CliRunner().invoke(cli, ["--db", db, "runs", "cancel", "1"])
    assert res.exit_code == 0, res.output
    p.join(60)
    assert not p.is_alive() and p.exitcode == 130, (tmp_path / "run.log").read_text()
    with open_store(db, read_only=True) as store:
        status, done = store.query("SELECT status, units_done FROM run")[0]
    assert status == "cancelled" and done >= 1
    code, out = run_cli_child(["--db", db, "runs", "resume", "1", "--quiet"], tmp_path / "resume.log")
    assert code == 0, out
    assert snapshot(db) == base["ref"] and duplicates(db) == 0
