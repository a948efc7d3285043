"""Which declared options (``ctxprior.options.Option``) each command and its API method take:
the command makes its click arguments and options from them, the method checks its keyword
arguments with them, so both refuse a bad value with the same one-line message before anything
is written."""

from __future__ import annotations

from importlib import import_module

COMMANDS: dict[str, tuple[str, str, str]] = {
    # command: (module, name of its declared options, the API method: noun.method)
    "score": ("ctxprior.scoring.options", "SCORE_OPTIONS", "runs.score"),
    "sample": ("ctxprior.sampling.draw", "SAMPLE_OPTIONS", "samples.draw"),
    "analyze": ("ctxprior.analyses.options", "ANALYZE_OPTIONS", "analyses.run"),
    "export parquet": ("ctxprior.publish.options", "EXPORT_OPTIONS", "parquet.export"),
    "import parquet": ("ctxprior.publish.options", "IMPORT_OPTIONS", "parquet.load"),
    "publish": ("ctxprior.publish.options", "PUBLISH_OPTIONS", "hub.publish"),
    "pull": ("ctxprior.publish.options", "PULL_OPTIONS", "hub.pull"),
    "sample-dynamic": ("ctxprior.dynamicqa.options", "SAMPLE_DYNAMIC_OPTIONS", "dynamic.sample"),
    "score-dynamic": ("ctxprior.dynamicqa.options", "SCORE_DYNAMIC_OPTIONS", "dynamic.score"),
    "analyze-dynamic": ("ctxprior.dynamicqa.options", "ANALYZE_DYNAMIC_OPTIONS", "dynamic.analyze"),
    "fakes generate": ("ctxprior.fakes.options", "GENERATE_OPTIONS", "fakes.generate"),
    "fakes add": ("ctxprior.fakes.options", "ADD_OPTIONS", "fakes.add"),
    "fakes list": ("ctxprior.fakes.options", "LIST_OPTIONS", "fakes.list"),
    "covariates cooccurrence": (
        "ctxprior.covariates.options",
        "COOCCURRENCE_OPTIONS",
        "covariates.cooccurrence",
    ),
    "covariates kg-degree": ("ctxprior.covariates.options", "KG_DEGREE_OPTIONS", "covariates.kg_degree"),
    "covariates known": ("ctxprior.covariates.options", "KNOWN_OPTIONS", "covariates.known"),
    "covariates add": ("ctxprior.covariates.options", "ADD_OPTIONS", "covariates.add"),
    "build-dataset": ("ctxprior.ingest.kg_options", "BUILD_OPTIONS", "datasets.build"),
    "runs resume": ("ctxprior.scoring.options", "RESUME_OPTIONS", "runs.resume"),
    "runs cancel": ("ctxprior.scoring.options", "CANCEL_OPTIONS", "runs.cancel"),
    "runs prompts": ("ctxprior.scoring.options", "PROMPTS_OPTIONS", "runs.prompts"),
    "quick": ("ctxprior.scoring.options", "QUICK_OPTIONS", "quick"),
    "figures": ("ctxprior.analyses.options", "FIGURES_OPTIONS", "analyses.figures"),
    "report": ("ctxprior.analyses.options", "REPORT_OPTIONS", "analyses.report"),
    "demo": ("ctxprior.pipeline", "DEMO_OPTIONS", "demo"),
}


def command_options(command: str) -> tuple:
    """The declared options of ``ctxprior <command>`` and of its API method (:data:`COMMANDS`)."""
    module, name, _method = COMMANDS[command]
    return getattr(import_module(module), name)


def print_options() -> tuple:
    """How ``ctxprior sql`` and ``ctxprior fakes list`` print rows (``--format``, ``--max-rows``):
    declared once in ``sqlshell.PRINT_OPTIONS``, checked by :meth:`Rows.format` as by the CLI."""
    from ..sqlshell import PRINT_OPTIONS

    return PRINT_OPTIONS
