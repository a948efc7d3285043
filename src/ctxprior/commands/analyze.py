"""`ctxprior analyze`, `ctxprior figures`, `ctxprior report`: the paper's results from scored runs."""

from __future__ import annotations

import click

from .app import pass_app


class _OnlyOption(click.Option):
    """--only: its help names the registry's analyses, looked up when shown (not at start-up), by
    ``--help`` and by the generated CLI reference alike."""

    @property
    def help(self) -> str:
        from ..api import analysis_names

        return (
            f"Comma-separated analyses to run. Choices: {','.join(analysis_names())}. "
            "Default: all but covariate (which runs when --covariate is given) and known (which runs "
            "when the runs have closed-book answers: `ctxprior covariates known`)."
        )

    @help.setter
    def help(self, value) -> None:  # click's __init__ sets it; the registry holds it
        pass


@click.command("analyze")
@click.option(
    "--run",
    "runs",
    type=int,
    multiple=True,
    metavar="RUN_ID",
    help="Run to analyze (repeatable): persuasion runs go to the persuasion analyses, dynamic runs to "
    "dynamicqa. Default: every finished persuasion run and every dynamic run with scores.",
)
@click.option("--only", cls=_OnlyOption, metavar="A,B,...", help="Comma-separated analyses to run.")
@click.option(
    "--permutations", "k", type=int, default=10_000, show_default=True, help="Permutations per test (k)."
)
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Significance level of the Benjamini-Hochberg procedure.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the permutations.")
@click.option(
    "--covariate",
    "covariates",
    multiple=True,
    metavar="VIEW.COLUMN",
    help="Spearman rho of susceptibility against this column of a table/view keyed by entity "
    "(and dataset/relation/answer), e.g. cov_cooccurrence.log_count. Repeatable.",
)
@click.option(
    "--seen-fakes",
    metavar="VIEW.COLUMN",
    help="Exclude fake entities with a value > 0 here from real-vs-fake tests "
    "(default: the co-occurrence covariate, when one exists).",
)
@click.option("--quiet", is_flag=True, help="Do not print the summary.")
@pass_app
def analyze_cmd(app, runs, only, k, alpha, seed, covariates, seen_fakes, quiet):
    """Run the paper's statistical analyses on scored runs and store them in analysis_result.

    Group comparisons (permutation test of Student's t, Benjamini-Hochberg across relations,
    Cohen's d) per relation and query type, paired / per-entity alternatives beside them,
    MR bins, reliability across seeds and query forms, Spearman correlations and the
    friend-enemy and gender case studies; DynamicQA Tables 1-3 for dynamic runs. Analyses whose
    kind of run is missing are skipped with a message. Prints a short summary.
    """
    wh = app.api(write=True)
    counts = wh.analyses.run(
        runs,
        only=only or "",
        permutations=k,
        alpha=alpha,
        seed=seed,
        covariates=covariates,
        seen_fakes=seen_fakes,
    ).attrs["counts"]
    stored = sum(v for v in counts.values() if v > 0)
    click.echo(
        f"stored {stored} analysis rows ({', '.join(f'{a} {n}' for a, n in counts.items() if n >= 0)})"
    )
    if not quiet:
        for line in wh.analyses.summary(runs, only=only or ""):
            click.echo(line)


@click.command("figures")
@click.option(
    "--run",
    "runs",
    type=int,
    multiple=True,
    metavar="RUN_ID",
    help="Run to plot (repeatable). Default: every run with stored analyses.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the PNG figures and the CSV data behind each.",
)
@click.option(
    "--overwrite", is_flag=True, help="Replace figure files of the same names already in the folder."
)
@pass_app
def figures_cmd(app, runs, out_dir, overwrite):
    """Write the paper's figures (Fig. 2-5, 8-11 analogues) as PNG + CSV from stored analyses."""
    written = app.api().analyses.figures(out_dir, runs, overwrite=overwrite)
    for _name, png, note in written:
        click.echo(f"{png or '-':<40} {note}")


@click.command("report")
@click.option(
    "--run",
    "runs",
    type=int,
    multiple=True,
    metavar="RUN_ID",
    help="Run to report (repeatable). Default: every run with stored analyses.",
)
@click.option(
    "--out",
    "out_path",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="HTML file to write (self-contained: figures embedded).",
)
@click.option("--overwrite", is_flag=True, help="Replace the --out file if it exists.")
@pass_app
def report_cmd(app, runs, out_path, overwrite):
    """Write one self-contained HTML page with the figures, tables and a plain reading of each result."""
    path = app.api().analyses.report(out_path, runs, overwrite=overwrite)
    click.echo(f"wrote {path}")


COMMANDS = [analyze_cmd, figures_cmd, report_cmd]
