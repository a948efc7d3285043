"""`ctxprior analyze`, `ctxprior figures`, `ctxprior report`: the paper's results from scored runs."""

from __future__ import annotations

import click

from ..api import command_options
from .app import pass_app, quiet_log
from .options import declared_options


@click.command("analyze")
@declared_options(command_options("analyze"))
@click.option(
    "--quiet",
    is_flag=True,
    help="No status lines (warnings and notes still print) and no summary; the stored rows' line prints.",
)
@pass_app
def analyze_cmd(app, runs, only, quiet, **options):
    """Run the paper's statistical analyses on scored runs and store them in analysis_result.

    Group comparisons (permutation test of Student's t, Benjamini-Hochberg across relations,
    Cohen's d) per relation and query type, paired / per-entity alternatives beside them,
    MR bins, reliability across seeds and query forms, Spearman correlations and the
    friend-enemy and gender case studies; DynamicQA Tables 1-3 for dynamic runs. Analyses whose
    kind of run is missing are skipped with a message. Prints a short summary.
    """
    wh = app.api(write=True)
    log = {"log": quiet_log} if quiet else {}
    counts = wh.analyses.run(runs, only=only or "", **log, **options).attrs["counts"]
    stored = sum(v for v in counts.values() if v > 0)
    click.echo(
        f"stored {stored} analysis rows ({', '.join(f'{a} {n}' for a, n in counts.items() if n >= 0)})"
    )
    if not quiet:
        for line in wh.analyses.summary(runs, only=only or ""):
            click.echo(line)


@click.command("figures")
@declared_options(command_options("figures"))
@pass_app
def figures_cmd(app, runs, out, overwrite):
    """Write the paper's figures (Fig. 2-5, 8-11 analogues) as PNG + CSV from stored analyses."""
    written = app.api().analyses.figures(out, runs, overwrite=overwrite)
    for _name, png, note in written:
        click.echo(f"{png or '-':<40} {note}")


@click.command("report")
@declared_options(command_options("report"))
@pass_app
def report_cmd(app, runs, out, overwrite):
    """Write one self-contained HTML page with the figures, tables and a plain reading of each result."""
    path = app.api().analyses.report(out, runs, overwrite=overwrite)
    click.echo(f"wrote {path}")


COMMANDS = [analyze_cmd, figures_cmd, report_cmd]
