"""The options of ``ctxprior analyze``, ``figures`` and ``report`` (``wh.analyses.run``,
``figures``, ``report``), each declared once. Apart from ``driver`` so that the command line,
which makes its click options from them, starts without pandas and the statistics."""

from __future__ import annotations

from dataclasses import replace

from ..options import ID_MAX, Option, seed_option
from . import registry


def _only_help() -> str:
    return (
        f"Comma-separated analyses to run. Choices: {','.join(registry.names())}. "
        "Default: all but covariate (which runs when --covariate is given) and known (which runs "
        "when the runs have closed-book answers: `ctxprior covariates known`)."
    )


RUNS_OPTION = Option(
    "runs",
    "--run",
    "Run to analyze (repeatable): persuasion runs go to the persuasion analyses, dynamic runs to "
    "dynamicqa. Default: every finished persuasion run and every dynamic run with scores.",
    kind=int,
    maximum=ID_MAX,
    minimum=1,
    multiple=True,
    metavar="RUN_ID",
)

ONLY_OPTION = Option("only", "--only", _only_help, choices=registry.names, listed=True, metavar="A,B,...")

ANALYZE_OPTIONS = (
    RUNS_OPTION,
    ONLY_OPTION,
    Option(
        "permutations",
        "--permutations",
        "Permutations per test (k).",
        default=10_000,
        kind=int,
        maximum=10**7,
        minimum=1,
    ),
    Option(
        "alpha",
        "--alpha",
        "Significance level of the Benjamini-Hochberg procedure.",
        default=0.05,
        kind=float,
        minimum=0.0,
        maximum=1.0,
    ),
    seed_option(0, "Random seed of the permutations."),
    Option(
        "covariates",
        "--covariate",
        "Spearman rho of susceptibility against this column of a table/view keyed by entity "
        "(and dataset/relation/answer), e.g. cov_cooccurrence.log_count. Repeatable.",
        multiple=True,
        metavar="VIEW.COLUMN",
    ),
    Option(
        "seen_fakes",
        "--seen-fakes",
        "Exclude fake entities with a value > 0 here from real-vs-fake tests "
        "(default: the co-occurrence covariate, when one exists).",
        metavar="VIEW.COLUMN",
    ),
)
"""The options of ``ctxprior analyze`` / ``wh.analyses.run``."""

_OVERWRITE_HELP = "Replace figure files of the same names already in the folder."

FIGURES_OPTIONS = (
    replace(RUNS_OPTION, help="Run to plot (repeatable). Default: every run with stored analyses."),
    Option(
        "out",
        "--out",
        "Folder for the PNG figures and the CSV data behind each.",
        required=True,
        directory=True,
    ),
    Option("overwrite", "--overwrite", _OVERWRITE_HELP, default=False, kind=bool),
)
"""``ctxprior figures`` / ``wh.analyses.figures``."""

REPORT_OPTIONS = (
    replace(RUNS_OPTION, help="Run to report (repeatable). Default: every run with stored analyses."),
    Option(
        "out",
        "--out",
        "HTML file to write (self-contained: figures embedded).",
        default="report.html",
        file=True,
    ),
    Option("overwrite", "--overwrite", "Replace the --out file if it exists.", default=False, kind=bool),
)
"""``ctxprior report`` / ``wh.analyses.report``."""
