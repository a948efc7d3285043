"""The write protocol's soak test (issue 27; docs/write-protocol.md): a scoring run SIGKILLed at
random moments and resumed, while ``--wait`` writers commit probe rows and readers query the run,
all in separate processes on one warehouse file. Afterwards: 0 lost, 0 doubled, 0 corrupt, and
the run's rows equal an uninterrupted run's.

Short version: ``tests/test_write_protocol.py::test_soak_short`` (about 30 s).
Long version (a documented command)::

    PYTHONPATH=src:tests python tests/soak.py --minutes 20 --readers 4 --writers 3 \
        --fault 'store.connect@2+:sleep=0.3' --fault 'store.release@1+:sleep=0.2' \
        --fault 'tx.after_commit@1+:sleep=0.2' --fault 'tx.before_commit@2+:sleep=0.2'

A hostile process runs beside them (issue 35): it gives a symlink and a hard link of the
warehouse as inputs (``covariates add``, ``covariates kg-degree``), each of which must end in one
line and exit 2, and puts FIFOs and a stale marker naming a live process that is not ctxprior
(``sleep``) at the marker names (``<db>.write-intent``, ``<db>.writer``, ``<db>.run-N.driver``),
while ``info`` and ``runs`` must still answer promptly.

It prints the figures: processes, operations, kills, minutes, rows checked, lost / doubled /
corrupt, and the hostile process's operations and errors.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

from scale_helpers import SCORE, copy_db, duplicates, forkserver, open_handles, snapshot, start_cli

# the driver pauses 0.3 s (file released) before each reopen: a run lasts long enough to be killed
# at many moments, readers and writers get in between its commits
SLOW = {"CTXPRIOR_FAULT": "store.connect@2+:sleep=0.3"}


def writer(db: str, name: str, log: str, stop_file: str, max_seconds: float) -> None:
    """A --wait writer: commits probe rows one transaction each; logs a row only once committed;
    records the most handles this process ever held on the file (must be 1)."""
    from ctxprior.storage import open_store

    deadline = time.monotonic() + max_seconds
    n, most, errors = 0, 0, []
    with open(log, "w") as out:
        while time.monotonic() < deadline and not os.path.exists(stop_file):
            key = f"soak-{name}-{n}"
            try:
                with open_store(db, wait=120) as store, store.transaction():
                    store.execute("INSERT INTO meta VALUES (?, 'probe')", [key])
                    most = max(most, open_handles(db))
            except Exception as e:
                errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
                time.sleep(0.1)
                continue
            out.write(json.dumps({"key": key}) + "\n")
            out.flush()
            n += 1
            time.sleep(random.uniform(0.0, 0.2))
        out.write(json.dumps({"most_handles": most, "errors": errors}) + "\n")


def _plant(db: str, sleeper: int) -> None:
    """FIFOs and a stale marker at the marker names, where none is (the driver's own replace them)."""
    stale = f"{sleeper} sleep\n"  # the reproduction: a live PID, no proof
    for name, fifo in (
        (".write-intent", True),
        (".writer", False),
        *((f".run-{k}.driver", True) for k in (1, 2)),
    ):
        path = db + name
        try:
            if fifo:
                os.mkfifo(path)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                os.write(fd, stale.encode())
                os.close(fd)
        except FileExistsError:
            pass


def hostile(db: str, log: str, stop_file: str, max_seconds: float) -> None:
    """Links of the warehouse as inputs (refused: exit 2, one line) and FIFOs / stale markers at the
    marker names (``info`` and ``runs`` still answer within 60 s), over and over; logs each failure."""
    import subprocess

    from click.testing import CliRunner

    from ctxprior.cli import cli

    folder = os.path.dirname(db)
    sym, hard = os.path.join(folder, "hostile-sym.csv"), os.path.join(folder, "hostile-hard.nt")
    os.symlink(db, sym)
    os.link(db, hard)
    sleeper = subprocess.Popen(["sleep", str(int(max_seconds) + 60)])
    deadline = time.monotonic() + max_seconds
    ops, errors, slowest = 0, [], 0.0
    refused = (
        ["covariates", "add", sym, "--on", "entity", "--name", "hostile"],
        ["covariates", "kg-degree", hard, "--name", "hostile"],
    )

    def alarm(signum, frame):
        raise TimeoutError("no answer within 90 s")

    signal.signal(signal.SIGALRM, alarm)
    try:
        while time.monotonic() < deadline and not os.path.exists(stop_file):
            _plant(db, sleeper.pid)
            for args, want in [(a, 2) for a in refused] + [(["info"], 0), (["runs"], 0)]:
                t = time.monotonic()
                signal.alarm(90)
                try:
                    res = CliRunner().invoke(cli, ["--db", db, "--wait", "120", *args])
                    code, out = res.exit_code, res.output.strip()
                except TimeoutError as e:
                    code, out = -1, str(e)
                finally:
                    signal.alarm(0)
                secs = time.monotonic() - t
                slowest = max(slowest, secs)
                ops += 1
                one_line = want != 2 or (len(out.splitlines()) == 1 and "is the warehouse" in out)
                if code != want or not one_line or secs > 60:
                    errors.append(f"{' '.join(args[:2])}: exit {code} in {secs:.1f} s: {out[-300:]}")
            time.sleep(random.uniform(0.0, 0.5))
    finally:
        sleeper.kill()
        sleeper.wait()
        with open(log, "w") as out:
            out.write(json.dumps({"ops": ops, "errors": errors, "slowest_s": round(slowest, 2)}) + "\n")


def soak(
    base: dict,
    workdir: Path,
    seconds: float,
    readers: int = 2,
    writers: int = 2,
    seed: int = 0,
    fault: str = SLOW["CTXPRIOR_FAULT"],
    hostile_links: bool = True,
) -> dict:
    """Run the soak for about ``seconds``; returns the figures (see the module docstring). ``fault``:
    the driver's CTXPRIOR_FAULT (faults.py), the delay that widens one step of the hand-over."""
    from loadtest import check_answers, reader, unit_reference

    from ctxprior.sqlfiles import ident
    from ctxprior.storage import open_store

    rng = random.Random(seed)
    db = copy_db(base["db"], workdir / "soak.duckdb")
    stop = workdir / "stop"
    ctx = forkserver()
    t0 = time.monotonic()
    procs = [
        ctx.Process(target=reader, args=(db, str(workdir / f"r{i}.jsonl"), str(stop), seconds + 600, 1, 60.0))
        for i in range(readers)
    ] + [
        ctx.Process(target=writer, args=(db, f"w{i}", str(workdir / f"w{i}.jsonl"), str(stop), seconds + 600))
        for i in range(writers)
    ]
    if hostile_links:
        procs.append(
            ctx.Process(target=hostile, args=(db, str(workdir / "hostile.jsonl"), str(stop), seconds + 600))
        )
    for p in procs:
        p.start()
    cmd = ["--db", db, *SCORE, "--model", base["tiny"]]
    kills = starts = 0
    while True:  # a driver, killed at a random moment while time is left, then started again
        starts += 1
        d = start_cli(cmd, workdir / f"driver{starts}.log", env={"CTXPRIOR_FAULT": fault})
        if time.monotonic() - t0 < seconds:
            d.join(rng.uniform(0.5, 4.0))
            if d.is_alive():
                os.kill(d.pid, signal.SIGKILL)
                d.join()
                kills += 1
                continue
        d.join(600)
        if d.exitcode == 0 and time.monotonic() - t0 >= seconds:
            break
        if d.exitcode != 0 and d.exitcode != -signal.SIGKILL:
            raise AssertionError((workdir / f"driver{starts}.log").read_text())
        if d.exitcode == 0:  # finished early: a fresh copy of the run, resumed from scratch
            with open_store(db, wait=120) as store, store.transaction():
                for t in ("persuasion", "susceptibility", "prior_topk", "run_unit", "run_unit_engine"):
                    store.execute(f"DELETE FROM {ident(t)}")
                store.execute("UPDATE run SET status = 'running', units_done = 0")
    stop.touch()
    for p in procs:
        p.join(120)
    minutes = (time.monotonic() - t0) / 60
    # ---- checks
    snap = snapshot(db)
    rows_checked = sum(len(v) for v in snap.values() if isinstance(v, list))
    doubled = duplicates(db)
    lost = 0 if snap == base["ref"] else 1
    answers = check_answers([str(workdir / f"r{i}.jsonl") for i in range(readers)], unit_reference(db))
    committed, writer_errors, most = [], [], 0
    for i in range(writers):
        for line in (workdir / f"w{i}.jsonl").read_text().splitlines():
            rec = json.loads(line)
            if "key" in rec:
                committed.append(rec["key"])
            else:
                most = max(most, rec["most_handles"])
                writer_errors += rec["errors"]
    with open_store(db, read_only=True) as store:
        stored = [r[0] for r in store.query("SELECT key FROM meta WHERE key LIKE 'soak-%'")]
        runs = store.scalar("SELECT count(*) FROM run")
        for t in store.table_names():  # every block read back (DuckDB checks each block's checksum)
            rows_checked += store.arrow(f"SELECT * FROM {ident(t)}").num_rows
    lost += len(set(committed) - set(stored))
    doubled += len(stored) - len(set(stored)) + (runs - 1)
    bad = {"ops": 0, "errors": [], "slowest_s": 0.0}
    if hostile_links:
        bad = json.loads((workdir / "hostile.jsonl").read_text())
    corrupt = sum("orrupt" in e for e in answers["error_samples"] + writer_errors) + answers["n_inconsistent"]
    return {
        "processes": len(procs) + starts,
        "readers": readers,
        "writers": writers,
        "driver_starts": starts,
        "kills": kills,
        "operations": answers["queries"] + len(committed) + len(snap["units"]),
        "reader_queries": answers["queries"],
        "reader_errors": answers["errors"],
        "reader_error_samples": answers["error_samples"],
        "writer_commits": len(committed),
        "writer_errors": writer_errors[:3],
        "most_handles_per_process": most,
        "minutes": round(minutes, 2),
        "rows_checked": rows_checked + len(stored),
        "lost": lost,
        "doubled": doubled,
        "corrupt": corrupt,
        "hostile_ops": bad["ops"],
        "hostile_errors": len(bad["errors"]),
        "hostile_error_samples": bad["errors"][:3],
        "hostile_slowest_s": bad["slowest_s"],
    }


def main() -> None:
    import argparse
    import tempfile

    from scale_helpers import scored_base

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--fault",
        action="append",
        help="the driver's CTXPRIOR_FAULT (repeatable: the minutes are shared between them), e.g. "
        "store.release@1+:sleep=0.2 (checkpointed, not closed) or tx.after_commit@1+:sleep=0.2",
    )
    a = ap.parse_args()
    faults = a.fault or [SLOW["CTXPRIOR_FAULT"]]
    total: dict = {}
    with tempfile.TemporaryDirectory() as d:
        base = scored_base(Path(d))
        for i, fault in enumerate(faults):
            work = Path(d) / f"soak{i}"
            work.mkdir()
            r = soak(base, work, a.minutes * 60 / len(faults), a.readers, a.writers, a.seed + i, fault)
            print(fault, json.dumps(r), flush=True)
            for k, v in r.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    total[k] = max(total.get(k, 0), v) if k.startswith("most") else total.get(k, 0) + v
    res = total
    print(json.dumps(res, indent=1))
    raise SystemExit(
        0 if res["lost"] == res["doubled"] == res["corrupt"] == res["hostile_errors"] == 0 else 1
    )


if __name__ == "__main__":
    main()
