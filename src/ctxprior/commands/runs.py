"""`ctxprior runs` (list / resume / cancel scoring runs)."""

from __future__ import annotations

import sys

import click

from ..api import command_options
from .app import pass_app, quiet_keywords
from .options import declared_options


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

    runs = ctx.obj.api().runs.records()
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
        rate = f"{r['prompts_per_s']:.1f}" if r["prompts_per_s"] is not None else "-"
        tail = r["model"] + (f"  [{r['error'].splitlines()[0][:80]}]" if r["error"] else "")
        click.echo(
            f"{r['run_id']:>4}  {r['kind']:<10} {r['status']:<9} {units:>11} {r['units_failed']:>6} "
            f"{r['prompts']:>9} {rate:>9}  {tail}"
        )


@runs_group.command("resume", short_help="Continue run RUN_ID after a crash, kill or cancel.")
@declared_options(command_options("runs resume"))
@click.option(
    "--quiet",
    is_flag=True,
    help="No progress bar and no status lines (warnings still print); the run's line and id print.",
)
@pass_app
def resume_cmd(app, run, quiet, **executor) -> None:
    """Continue run RUN_ID (persuasion or dynamic) after a crash, kill or cancel (its stored model
    and options are used); ends with exactly the rows of an uninterrupted run. Prints the run id on
    the last line."""
    try:
        done = app.api(write=True).runs.resume(run, **quiet_keywords(quiet), **executor)
    except KeyboardInterrupt:
        interrupted("`ctxprior runs resume` continues")
    echo_run(done, "rerun to retry the failed units")


@runs_group.command("cancel")
@declared_options(command_options("runs cancel"))
@pass_app
def cancel_cmd(app, run, timeout) -> None:
    """Stop run RUN_ID (persuasion or dynamic): interrupt its process (SIGTERM, when it runs on this
    host; finished units are kept) and mark it cancelled. `ctxprior runs resume RUN_ID` continues it
    later."""
    before, status = app.api(write=True).runs.cancel(
        run, timeout=timeout, log=lambda m: click.echo(m, err=True)
    )
    if before in ("done", "cancelled"):
        click.echo(f"run {run} is already {before}")
        return
    click.echo(f"run {run}: {status}")


@runs_group.command("prompts")
@declared_options(command_options("runs prompts"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per prompt.")
@pass_app
def prompts_cmd(app, run, limit, as_json) -> None:
    """The exact strings run RUN_ID's model read, one per prompt: the run's unit, query form, fact
    and context ids (they join the score rows), the context's type ('none' for the prompt without
    context) and the prompt, rebuilt by the code that built the model's inputs."""
    import json

    import pandas as pd

    df = app.api().runs.prompts(run, limit=limit)
    for r in df.to_dict("records"):
        r["context_id"] = None if pd.isna(r["context_id"]) else int(r["context_id"])
        if as_json:
            click.echo(json.dumps(r, ensure_ascii=False, default=int))
        else:
            click.echo(_prompt_header(r))
            click.echo(r["prompt"])


def _prompt_header(r: dict) -> str:
    """``--- unit 0 form 1 fact 1 context 2 (gold)``; the prompt without context says so in words."""
    ids = f"unit {r['unit_id']} form {r['query_form_id']} fact {r['fact_id']}"
    if r["context_id"] is None:
        return f"--- {ids}, no context"
    return f"--- {ids} context {r['context_id']} ({r['context_type']})"


COMMANDS = [runs_group]
