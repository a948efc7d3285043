"""ctxprior signals only its own processes, and a run has one driver (issue 27, seen items 2 and 5):
a run row's PID is trusted only with the driver's proof (``storage.runs.driver_pid``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import duckdb
import pytest
from parquet_fixtures import build_warehouse
from warehouse_helpers import DRIVER

from ctxprior.storage import runs


def set_running(db: str, pid: int, host: str | None = None) -> None:
    con = duckdb.connect(db)
    try:
        con.execute(
            "UPDATE run SET status = 'running', host = ?, pid = ?, ended_at = NULL WHERE run_id = 2",
            [host or socket.gethostname(), pid],
        )
    finally:
        con.close()


def status(db: str) -> str:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT status FROM run WHERE run_id = 2").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def wh_file(tmp_path) -> str:
    return build_warehouse(str(tmp_path / "r.duckdb"))


def test_cancel_never_signals_a_process_the_row_merely_names(run_cli, wh_file, sleeper):
    set_running(wh_file, sleeper.pid)  # an imported row, or a PID reused after a crash
    res = run_cli("runs", "cancel", "2", "--timeout", "2", db=wh_file)
    assert res.exit_code == 0, res.output
    time.sleep(0.3)
    assert sleeper.poll() is None, "an unrelated process was signalled"
    assert "not proven to drive run 2" in res.output
    assert status(wh_file) == "cancelled"


def test_a_forged_driver_file_is_no_proof(run_cli, wh_file, sleeper):
    set_running(wh_file, sleeper.pid)
    forged = {"host": socket.gethostname(), "pid": sleeper.pid, "boot_id": "x", "start": "1", "token": "t"}
    with open(runs._driver_file(wh_file, 2), "w") as f:
        json.dump(forged, f)
    assert runs.driver_pid(wh_file, 2, socket.gethostname(), sleeper.pid) is None
    res = run_cli("runs", "cancel", "2", "--timeout", "2", db=wh_file)
    assert res.exit_code == 0, res.output
    time.sleep(0.3)
    assert sleeper.poll() is None
    # the listing shows the run as stopped: its named process is not its driver
    listed = run_cli("runs", "--json", db=wh_file)
    assert any(json.loads(line)["run_id"] == 2 for line in listed.output.splitlines())


def test_a_forged_proof_copied_from_a_live_process_is_no_proof(run_cli, wh_file, sleeper):
    """Issue 42 seen 4: every field a driver file holds (host, the live sleep's PID, start time and
    command line, the warehouse's identity, a token), in both places the proof is read from; the
    sleep holds no driver lock, so it is not signalled."""
    from ctxprior.storage import procs

    set_running(wh_file, sleeper.pid)
    forged = {
        "host": socket.gethostname(),
        **procs.record(sleeper.pid),
        "warehouse": runs._file_identity(wh_file),
        "token": "0" * 32,
    }
    assert procs.proven(forged) == sleeper.pid  # the record alone would pass the liveness rule
    for f in runs._driver_files(wh_file, 2):
        with open(f, "w") as out:
            json.dump(forged, out)
    assert runs.driver_pid(wh_file, 2, socket.gethostname(), sleeper.pid) is None
    res = run_cli("runs", "cancel", "2", "--timeout", "2", db=wh_file)
    assert res.exit_code == 0, res.output
    time.sleep(0.3)
    assert sleeper.poll() is None, "a forged proof steered cancel"
    assert "not proven to drive run 2" in res.output
    assert status(wh_file) == "cancelled"
    for f in runs._driver_files(wh_file, 2):
        os.unlink(f)


def test_resume_refuses_a_live_run_and_cancel_stops_its_driver(run_cli, wh_file):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, wh_file], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert driver.stdout.readline().strip() == "ready"
        assert runs.driver_pid(wh_file, 2, socket.gethostname(), driver.pid) == driver.pid
        res = run_cli("--wait", "30", "runs", "resume", "2", db=wh_file)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert lines == [
            f"Error: run 2 is running in PID {driver.pid} on this host; wait for it to finish, "
            "or stop it with `ctxprior runs cancel 2` and resume it then"
        ], res.output
        res = run_cli("--wait", "30", "score", "--resume", "2", db=wh_file)
        assert res.exit_code == 2 and f"run 2 is running in PID {driver.pid}" in res.output, res.output
        res = run_cli("--wait", "30", "runs", "cancel", "2", "--timeout", "30", db=wh_file)
        assert res.exit_code == 0, res.output
        assert driver.wait(timeout=30) == 0
        assert status(wh_file) == "cancelled"
        assert not os.path.exists(runs._driver_file(wh_file, 2))  # the driver removed its proof
    finally:
        driver.kill()
        driver.wait()
