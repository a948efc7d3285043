"""DynamicQA commands: `sample-dynamic`, `score-dynamic`, `analyze-dynamic` (`ingest dynamicqa` is in
commands/ingest.py)."""

from __future__ import annotations

import click

from ..api import command_options
from .app import pass_app
from .options import declared_options
from .runs import interrupted


@click.command("sample-dynamic")
@declared_options(command_options("sample-dynamic"))
@pass_app
def sample_dynamic_cmd(app, dataset: str, partitions: tuple[str, ...], limit: int | None) -> None:
    """Store a sample for `ctxprior score --sample S`: the chosen facts with their original and
    counter-memory snippets as contexts. Reuses an identical existing sample. Prints the id last."""
    s = app.api(write=True).dynamic.sample(dataset, partitions, limit)
    click.echo(
        f"sample {s['sample_id']}: dataset '{dataset}', {s['facts']} facts, {s['contexts']} contexts "
        "(original + counter per fact)"
    )
    click.echo(str(s["sample_id"]))


@click.command(
    "score-dynamic", short_help="Sample answers to each fact's question without and with its two contexts."
)
@declared_options(command_options("score-dynamic"))
@pass_app
def score_dynamic_cmd(app, **options) -> None:
    """Sample answers to each fact's question alone, with its original context and with its
    counter-memory context; store texts, log-probs, semantic clusters, semantic entropy, CP,
    accuracy and persuaded/stubborn labels. Prints the run id alone on the last line."""
    try:
        run = app.api(write=True).dynamic.score(**options, log=lambda m: click.echo(m, err=True))
    except KeyboardInterrupt:
        interrupted("rerun the command (or `ctxprior runs resume RUN`) to continue")
    click.echo(
        f"run {run.id}: {run.status}, {run.units_done}/{run.units_total} facts; "
        f"mean CP {run.mean_cp or 0:.3f} nats, "
        f"mean SE with context {run.mean_se_with_context or 0:.3f} nats"
    )
    click.echo(str(run.id))


@click.command("analyze-dynamic")
@declared_options(command_options("analyze-dynamic"))
@pass_app
def analyze_dynamic_cmd(app, runs: tuple[int, ...]) -> None:
    """DynamicQA Tables 1-3 analogues per run (model): % persuaded / stubborn, accuracy with and
    without context, mean semantic entropy and CP per partition, and the OLS of CP on z-scored
    num_edits, s_pop, o_pop and SE without / with context. Stored in dynamicqa_summary and
    dynamicqa_regression, and printed."""
    click.echo(app.api(write=True).dynamic.analyze(list(runs) or None))


COMMANDS = [sample_dynamic_cmd, score_dynamic_cmd, analyze_dynamic_cmd]
