"""Runs after the fact: listing them (with a stopped run told apart from a running one),
the options a run was started with, and cancelling one."""

from __future__ import annotations

import json
import os
import socket
from typing import Callable

from ...errors import UserError
from ...schema.warehouse import Warehouse, utcnow


def _alive_here(host: str | None, pid: int | None) -> bool | None:
    if not pid or host != socket.gethostname():
        return None
    from ...schema.warehouse import _pid_alive

    return _pid_alive(int(pid))


def list_runs(wh, run_id: int | None = None) -> list[dict]:
    """Runs with status, units done/total, failed units, prompts/s and the first error."""
    rows = wh.query(
        """SELECT r.run_id, r.kind, r.model, r.sample_id, r.status, r.units_done, r.units_total,
                  r.prompts_done, r.started_at, r.ended_at, r.host, r.pid, r.error,
                  (SELECT count(*) FROM run_unit u WHERE u.run_id = r.run_id AND u.status = 'failed'),
                  (SELECT min(u.error) FROM run_unit u WHERE u.run_id = r.run_id AND u.status = 'failed'),
                  (SELECT max(u.finished_at) FROM run_unit u WHERE u.run_id = r.run_id)
           FROM run r WHERE ? IS NULL OR r.run_id = ? ORDER BY r.run_id""", [run_id, run_id])
    out = []
    now = None
    for (rid, kind, model, sample, status, done, total, prompts, start, end, host, pid, err, nfail,
         ferr, last) in rows:
        if now is None:
            now = utcnow()
        stop = end or (now if status == "running" else last) or now
        secs = max((stop - start).total_seconds(), 1e-9) if start else None
        alive = _alive_here(host, pid)
        shown = status
        if status == "running" and alive is False:
            shown = "stopped"  # its process is gone (killed / crashed): resume it
        out.append({"run_id": rid, "kind": kind, "model": model, "sample_id": sample, "status": shown,
                    "units_done": done or 0, "units_total": total or 0, "units_failed": int(nfail or 0),
                    "prompts": int(prompts or 0),
                    "prompts_per_s": (prompts or 0) / secs if secs else None,
                    "host": host, "pid": pid, "error": err or ferr})
    return out


def stored_device_dtype(wh: Warehouse, run_id: int) -> tuple[str, str]:
    """(device, dtype) a run was started with, so a resume loads the model the same way."""
    row = wh.query("SELECT config_json FROM run WHERE run_id = ?", [run_id])
    if not row:
        raise UserError(f"run {run_id}: no such run in {wh.path}; see `ctxprior runs`")
    cfg = json.loads(row[0][0] or "{}")
    return cfg.get("device", "auto"), (cfg.get("identity") or {}).get("dtype", "auto")


def cancel_run(path: str, run_id: int, timeout: float = 60.0, wait: float = 0.0,
               log: Callable[[str], None] | None = None) -> str:
    """Stop run ``run_id``: SIGTERM its process when it runs on this host (finished units are
    kept), wait for it to stop, mark it cancelled. Returns the run's status afterwards."""
    import signal
    import time

    from ...schema import open_warehouse

    log = log or (lambda m: None)
    with open_warehouse(path, read_only=True, wait=wait) as wh:
        info = list_runs(wh, run_id)
    if not info:
        raise UserError(f"run {run_id}: no such run in {path}; see `ctxprior runs`")
    r = info[0]
    if r["status"] in ("done", "cancelled"):
        return r["status"]
    alive = _alive_here(r["host"], r["pid"])
    if r["status"] == "running" and alive is None:
        raise UserError(f"run {run_id} runs on host {r['host']} (PID {r['pid']}); interrupt it there "
                        "(Ctrl-C), then cancel it here")
    if alive:
        os.kill(int(r["pid"]), signal.SIGTERM)
        log(f"sent SIGTERM to PID {r['pid']}; waiting for it to stop")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive_here(r["host"], r["pid"]):
            time.sleep(0.2)
        if _alive_here(r["host"], r["pid"]):
            raise UserError(f"run {run_id}: PID {r['pid']} did not stop within {timeout:g} s; "
                            "try again or kill it (finished units are kept)")
    with open_warehouse(path, wait=max(wait, 30.0)) as wh:
        with wh.transaction():
            wh.execute("UPDATE run SET status = 'cancelled', ended_at = coalesce(ended_at, ?) "
                       "WHERE run_id = ? AND status <> 'done'", [utcnow(), run_id])
        return wh.scalar("SELECT status FROM run WHERE run_id = ?", [run_id])
