"""`ctxprior runs` (list / resume / cancel scoring runs) and the `--executor` options of `score`."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

import click

from ..cli import pass_app
from ..errors import UserError

_META = "ctxprior.executor"


def _store(ctx: click.Context, param: click.Parameter, value):
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def executor_options(f):
    """--executor/--address/--workers/--gpus-per-worker/--shard-dir, kept in ctx.meta (not kwargs)."""
    for opt in reversed([
        click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     expose_value=False, callback=_store,
                     help="local: units one after the other in this process; ray: units on Ray "
                          "workers (a local Ray instance unless --address), the driver commits."),
        click.option("--address", default=None, metavar="ray://HOST:PORT|auto", expose_value=False,
                     callback=_store, help="Ray cluster to join (--executor ray). Default: start a local one."),
        click.option("--workers", type=int, default=None, expose_value=False, callback=_store,
                     help="Ray workers (actors, one model each). Default: one per CPU, or per "
                          "--gpus-per-worker GPUs of the cluster."),
        click.option("--gpus-per-worker", type=float, default=0, show_default=True, expose_value=False,
                     callback=_store, help="GPUs per Ray worker (0 = CPU workers)."),
        click.option("--shard-dir", default=None, metavar="DIR", expose_value=False, callback=_store,
                     help="Folder for the workers' Parquet shards (default <db>.shards); on several "
                          "nodes a folder every node sees under the same path."),
    ]):
        f = opt(f)
    return f


def executor_factory(db: str, device: str = "auto", dtype: str = "auto", log=None):
    """The score_sample executor_factory for the current command's --executor options (None = local)."""
    o = click.get_current_context().meta.get(_META, {})
    if o.get("executor", "local") != "ray":
        return None
    workers, gpus = o.get("workers"), o.get("gpus_per_worker") or 0
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    if gpus < 0:
        raise UserError(f"--gpus-per-worker {gpus}: must be >= 0")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UserError("--executor ray: Ray is not installed; pip install 'ray[default]'") from None
    from ..scoring.executors import ModelSpec
    from ..scoring.ray_executor import RayExecutor, default_shard_dir

    shard_dir = o.get("shard_dir") or default_shard_dir(db)

    def make(lm, config, batch_size):
        spec = ModelSpec(lm.model_id, device=device, dtype=dtype, quantization=lm.quantization)
        return RayExecutor(spec, config, batch_size, shard_dir=shard_dir, workers=workers,
                           gpus_per_worker=gpus, address=o.get("address"), log=log)

    return make


def _term_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def open_for_run(app):
    """The scoring driver's warehouse: a brief writer (see schema/warehouse.py). SIGTERM (sent by
    `ctxprior runs cancel`; SIGINT is ignored by jobs a shell started in the background) stops the
    run like Ctrl-C: finished units kept, the unit in flight rolled back, status cancelled."""
    import threading

    from ..schema import open_warehouse

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _term_as_interrupt)
    return open_warehouse(app.db, wait=app.wait, brief=True)


# ------------------------------------------------------------------ listing

def _alive_here(host: str | None, pid: int | None) -> bool | None:
    if not pid or host != socket.gethostname():
        return None
    from ..schema.warehouse import _pid_alive

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
            from ..schema.warehouse import utcnow

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


@click.group("runs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON lines.")
@click.pass_context
def runs_group(ctx, as_json) -> None:
    """List scoring runs (status, units done/total, prompts/s, errors); `runs resume R`,
    `runs cancel R`. A run whose process died shows as `stopped`."""
    if ctx.invoked_subcommand is not None:
        return
    import json

    app = ctx.obj
    with app.open(read_only=True) as wh:
        runs = list_runs(wh)
    if as_json:
        for r in runs:
            click.echo(json.dumps(r, default=str))
        return
    if not runs:
        click.echo("no runs yet (ctxprior score --sample S)")
        return
    click.echo(f"{'run':>4}  {'kind':<10} {'status':<9} {'units':>11} {'failed':>6} {'prompts':>9} "
               f"{'prompts/s':>9}  model / error")
    for r in runs:
        units = f"{r['units_done']}/{r['units_total']}"
        rate = f"{r['prompts_per_s']:.1f}" if r["prompts_per_s"] is not None else "-"
        tail = r["model"] + (f"  [{r['error'].splitlines()[0][:80]}]" if r["error"] else "")
        click.echo(f"{r['run_id']:>4}  {r['kind']:<10} {r['status']:<9} {units:>11} {r['units_failed']:>6} "
                   f"{r['prompts']:>9} {rate:>9}  {tail}")


@runs_group.command("resume")
@click.argument("run_id", type=int)
@executor_options
@click.option("--quiet", is_flag=True, help="No progress bar.")
@pass_app
def resume_cmd(app, run_id, quiet) -> None:
    """Continue run RUN_ID after a crash, kill or cancel (its stored model and options are used);
    ends with exactly the rows of an uninterrupted run. Prints the run id on the last line."""
    from ..scoring.runs import score_sample

    with open_for_run(app) as wh:
        row = wh.query("SELECT kind, status, config_json FROM run WHERE run_id = ?", [run_id])
        if not row:
            raise UserError(f"run {run_id}: no such run in {app.db}; see `ctxprior runs`")
        import json

        cfg = json.loads(row[0][2] or "{}")
        try:
            s = score_sample(wh, None, resume=run_id, device=cfg.get("device", "auto"),
                             executor_factory=executor_factory(
                                 app.db, cfg.get("device", "auto"),
                                 (cfg.get("identity") or {}).get("dtype", "auto")),
                             progress=not quiet)
        except KeyboardInterrupt:
            click.echo("interrupted: finished units are saved; `ctxprior runs resume` continues", err=True)
            sys.exit(130)
    rate = s.prompts / s.seconds if s.seconds > 0 else 0.0
    click.echo(f"run {s.run_id}: {s.status}; {s.units_done}/{s.units_total} units"
               f"{f' ({s.units_failed} failed)' if s.units_failed else ''}, {s.prompts} prompts in "
               f"{s.seconds:.1f} s ({rate:.1f} prompts/s)", err=True)
    click.echo(str(s.run_id))
    if s.status != "done":
        raise UserError(f"run {s.run_id} finished with status {s.status}: "
                        + ("; ".join(s.errors[:3]) or "see run_unit.error"))


@runs_group.command("cancel")
@click.argument("run_id", type=int)
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds to wait for a running run to stop after the interrupt.")
@pass_app
def cancel_cmd(app, run_id, timeout) -> None:
    """Stop run RUN_ID: interrupt its process (SIGTERM, when it runs on this host; finished units
    are kept) and mark it cancelled. `ctxprior runs resume RUN_ID` continues it later."""
    from ..schema import open_warehouse

    print_ = lambda m: click.echo(m, err=True)  # noqa: E731
    with open_warehouse(app.db, read_only=True, wait=app.wait) as wh:
        info = list_runs(wh, run_id)
    if not info:
        raise UserError(f"run {run_id}: no such run in {app.db}; see `ctxprior runs`")
    r = info[0]
    if r["status"] in ("done", "cancelled"):
        click.echo(f"run {run_id} is already {r['status']}")
        return
    alive = _alive_here(r["host"], r["pid"])
    if r["status"] == "running" and alive is None:
        raise UserError(f"run {run_id} runs on host {r['host']} (PID {r['pid']}); interrupt it there "
                        "(Ctrl-C), then cancel it here")
    if alive:
        os.kill(int(r["pid"]), signal.SIGTERM)
        print_(f"sent SIGTERM to PID {r['pid']}; waiting for it to stop")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive_here(r["host"], r["pid"]):
            time.sleep(0.2)
        if _alive_here(r["host"], r["pid"]):
            raise UserError(f"run {run_id}: PID {r['pid']} did not stop within {timeout:g} s; "
                            "try again or kill it (finished units are kept)")
    with open_warehouse(app.db, wait=max(app.wait, 30.0)) as wh:
        with wh.transaction():
            wh.execute("UPDATE run SET status = 'cancelled', ended_at = coalesce(ended_at, ?) "
                       "WHERE run_id = ? AND status <> 'done'", [_utcnow(), run_id])
        status = wh.scalar("SELECT status FROM run WHERE run_id = ?", [run_id])
    click.echo(f"run {run_id}: {status}")


def _utcnow():
    from ..schema.warehouse import utcnow

    return utcnow()


COMMANDS = [runs_group]
