"""`ctxprior runs` (list / resume / cancel scoring runs) and the `--executor` options of `score`."""

from __future__ import annotations

import sys

import click

from .app import pass_app

EXECUTOR_OPTIONS = ("executor", "address", "workers", "gpus_per_worker", "shard_dir")


def executor_options(f):
    """--executor/--address/--workers/--gpus-per-worker/--shard-dir (keyword arguments of Warehouse.score)."""
    for opt in reversed(
        [
            click.option(
                "--executor",
                type=click.Choice(["local", "ray"]),
                default="local",
                show_default=True,
                help="local: units one after the other in this process; ray: units on Ray "
                "workers (a local Ray instance unless --address), the driver commits.",
            ),
            click.option(
                "--address",
                default=None,
                metavar="ray://HOST:PORT|auto",
                help="Ray cluster to join (--executor ray). Default: start a local one.",
            ),
            click.option(
                "--workers",
                type=int,
                default=None,
                help="Ray workers (actors, one model each). Default: one per GPU of the "
                "cluster (per --gpus-per-worker GPUs), or one per CPU on a cluster without GPUs.",
            ),
            click.option(
                "--gpus-per-worker",
                type=float,
                default=None,
                help="GPUs per Ray worker (0 = CPU workers). Default: 1 when the cluster has "
                "GPUs, else 0. The driver never loads the model itself.",
            ),
            click.option(
                "--shard-dir",
                default=None,
                metavar="DIR",
                help="Folder for the workers' Parquet shards (default <db>.shards); on several "
                "nodes a folder every node sees under the same path.",
            ),
        ]
    ):
        f = opt(f)
    return f


def echo_run(run, interrupted_hint: str) -> None:
    """The one-line run summary, then the run id alone on stdout's last line (both results, so on
    stdout); a run that did not finish ends in a UserError (exit code 2)."""
    from ..errors import UserError

    failed = f" ({run.units_failed} failed)" if run.units_failed else ""
    click.echo(
        f"run {run.id}: {run.status}; {run.units_done}/{run.units_total} units{failed}, {run.prompts} "
        f"prompts in {run.seconds:.1f} s ({run.prompts_per_second:.1f} prompts/s)"
    )
    click.echo(str(run.id))
    if run.status != "done":
        raise UserError(
            f"run {run.id} finished with status {run.status}: "
            + ("; ".join(run.errors[:3]) or "see run_unit.error")
            + f"; {interrupted_hint}"
        )


def interrupted(hint: str):
    click.echo(f"interrupted: finished units are saved; {hint}", err=True)
    sys.exit(130)


@click.group("runs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON lines.")
@click.pass_context
def runs_group(ctx, as_json) -> None:
    """List runs of every kind, persuasion (`score`) and dynamic (`score-dynamic`): status, units
    done/total, prompts/s, errors; `runs resume R`, `runs cancel R` take any run. A run whose
    process died shows as `stopped`."""
    if ctx.invoked_subcommand is not None:
        return
    import json

    import pandas as pd

    runs = ctx.obj.api().runs().to_dict("records")
    if as_json:
        for r in runs:
            click.echo(json.dumps(r, default=str))
        return
    if not runs:
        click.echo("no runs yet (ctxprior score --sample S)")
        return
    click.echo(
        f"{'run':>4}  {'kind':<10} {'status':<9} {'units':>11} {'failed':>6} {'prompts':>9} "
        f"{'prompts/s':>9}  model / error"
    )
    for r in runs:
        units = f"{r['units_done']}/{r['units_total']}"
        rate = f"{r['prompts_per_s']:.1f}" if pd.notna(r["prompts_per_s"]) else "-"
        tail = r["model"] + (f"  [{r['error'].splitlines()[0][:80]}]" if r["error"] else "")
        click.echo(
            f"{r['run_id']:>4}  {r['kind']:<10} {r['status']:<9} {units:>11} {r['units_failed']:>6} "
            f"{r['prompts']:>9} {rate:>9}  {tail}"
        )


@runs_group.command("resume")
@click.argument("run_id", type=int)
@executor_options
@click.option("--quiet", is_flag=True, help="No progress bar.")
@pass_app
def resume_cmd(app, run_id, quiet, **executor) -> None:
    """Continue run RUN_ID (persuasion or dynamic) after a crash, kill or cancel (its stored model
    and options are used); ends with exactly the rows of an uninterrupted run. Prints the run id on
    the last line."""
    try:
        run = app.api(write=True).resume(run_id, progress=not quiet, **executor)
    except KeyboardInterrupt:
        interrupted("`ctxprior runs resume` continues")
    echo_run(run, "rerun to retry the failed units")


@runs_group.command("cancel")
@click.argument("run_id", type=int)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds to wait for a running run to stop after the interrupt.",
)
@pass_app
def cancel_cmd(app, run_id, timeout) -> None:
    """Stop run RUN_ID (persuasion or dynamic): interrupt its process (SIGTERM, when it runs on this
    host; finished units are kept) and mark it cancelled. `ctxprior runs resume RUN_ID` continues it
    later."""
    before, status = app.api(write=True).cancel_run(
        run_id, timeout=timeout, log=lambda m: click.echo(m, err=True)
    )
    if before in ("done", "cancelled"):
        click.echo(f"run {run_id} is already {before}")
        return
    click.echo(f"run {run_id}: {status}")


COMMANDS = [runs_group]
