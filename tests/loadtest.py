"""Concurrent readers during a scoring run (issue 8): the load test shared by
``tests/test_concurrency.py`` and ``benchmarks/load.py``.

Each reader is a process that runs the real ``ctxprior sql`` command (in-process, one click call
per query, so every query opens the warehouse read-only, reads, closes) in a loop, and records
what it saw. ``check_answers`` then proves every answer is a committed state: the units a reader
saw as done are exactly the ones whose rows it counted, with the reference values.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path

QUERY = """
SELECT (SELECT units_done FROM run WHERE run_id = {run}) AS units_done,
       (SELECT string_agg(unit_id::VARCHAR, ',' ORDER BY unit_id) FROM run_unit
         WHERE run_id = {run} AND status = 'done') AS units,
       count(*) AS n, coalesce(sum(persuasion), 0) AS s,
       count(DISTINCT context_type) AS types, coalesce(avg(persuasion), 0) AS mean
FROM v_persuasion WHERE run_id = {run}
"""


def reader(
    db: str, out_path: str, stop_file: str, max_seconds: float, run_id: int = 1, wait: float = 0.0
) -> None:
    """Loop `ctxprior sql QUERY --format json` until ``stop_file`` exists; JSON lines to out_path."""
    from ctxprior.cli import cli
    from ctxprior.errors import UserError

    q = QUERY.format(run=run_id)
    deadline = time.monotonic() + max_seconds
    with open(out_path, "w") as out:
        while time.monotonic() < deadline and not os.path.exists(stop_file):
            buf = io.StringIO()
            t0 = time.perf_counter()
            try:
                with contextlib.redirect_stdout(buf):
                    cli.main(
                        args=["--db", db, "--wait", str(wait), "sql", q, "--format", "json"],
                        prog_name="ctxprior",
                        standalone_mode=False,
                    )
                rows = json.loads(buf.getvalue())
                rec = {"ok": True, "row": rows[0] if rows else None}
            except UserError as e:
                rec = {"ok": False, "error": str(e)}
            except Exception as e:
                rec = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            rec["seconds"] = time.perf_counter() - t0
            out.write(json.dumps(rec) + "\n")
            out.flush()


def unit_reference(db: str, run_id: int = 1) -> dict[int, tuple[int, float]]:
    """{unit_id: (persuasion rows, sum of persuasion)} of a finished run, via its unit plan."""
    from ctxprior.scoring.runs.plan import plan_units
    from ctxprior.scoring.units import ScoreConfig
    from ctxprior.storage import open_store

    with open_store(db, read_only=True, wait=60) as store:
        sample, cfg = store.query("SELECT sample_id, config_json FROM run WHERE run_id = ?", [run_id])[0]
        config = ScoreConfig.from_json_dict(json.loads(cfg)["identity"]["score"])
        per = {
            (qf, f): (n, s)
            for qf, f, n, s in store.query(
                "SELECT query_form_id, fact_id, count(*), sum(persuasion) FROM persuasion WHERE run_id = ? "
                "GROUP BY ALL",
                [run_id],
            )
        }
        units = plan_units(store, sample, config)
    out = {}
    for u in units:
        parts = [per.get((u.query_form_id, f), (0, 0.0)) for f in u.fact_ids]
        out[u.unit_id] = (sum(p[0] for p in parts), sum(p[1] for p in parts))
    return out


def check_answers(paths: list[str], reference: dict[int, tuple[int, float]]) -> dict:
    """Every answer = the reference restricted to the units the answer saw as done."""
    n_ok = n_err = 0
    states = set()
    errors, bad, lat = [], [], []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            rec = json.loads(line)
            if not rec["ok"]:
                n_err += 1
                errors.append(rec["error"])
                continue
            n_ok += 1
            lat.append(rec["seconds"])
            row = rec["row"]
            units = [int(u) for u in row["units"].split(",")] if row["units"] else []
            want_n = sum(reference[u][0] for u in units)
            want_s = sum(reference[u][1] for u in units)
            if not (
                row["units_done"] in (None, len(units))
                and row["n"] == want_n
                and abs(row["s"] - want_s) <= 1e-9 * max(1.0, abs(want_s))
            ):
                bad.append({"row": row, "want_n": want_n, "want_s": want_s})
            states.add(len(units))
    lat.sort()

    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")

    return {
        "queries": n_ok,
        "errors": n_err,
        "error_samples": errors[:3],
        "inconsistent": bad[:3],
        "n_inconsistent": len(bad),
        "states_seen": sorted(states),
        "p50": pct(0.5),
        "p95": pct(0.95),
    }


def wait_for_run(db: str, run_id: int = 1, timeout: float = 300.0, proc=None) -> bool:
    """Block until run ``run_id`` exists (the writer finished starting up, scoring begins)."""
    from ctxprior.errors import UserError
    from ctxprior.storage import open_store

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and (proc.poll() if hasattr(proc, "poll") else (not proc.is_alive())):
            return False
        try:
            with open_store(db, read_only=True, wait=5) as store:
                if store.scalar("SELECT count(*) FROM run WHERE run_id = ?", [run_id]):
                    return True
        except UserError:
            pass
        time.sleep(0.2)
    return False
