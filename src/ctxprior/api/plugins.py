"""The plug-ins the API finds: the analyses, the data sources and the estimators (each registry
lives beside its plug-ins; these functions read them)."""

from __future__ import annotations

from typing import Any

_PACKAGE = __package__.rpartition(".")[0]  # ctxprior: the package whose modules declare plug-ins


def analysis_names() -> tuple[str, ...]:
    """Every analysis ``wh.analyses.run(only=...)`` accepts, in run order (the registry of
    ``ctxprior.analyses``: each analysis declared in its own file)."""
    from ..analyses.registry import names

    return names()


def ingest_sources() -> dict[str, Any]:
    """Every data source ``wh.datasets.ingest`` (and ``ctxprior ingest``) knows, by name: the
    registry ``ctxprior.ingest.registry``, one declaration per source beside its loader, found in
    ``ingest/``, each library package's ``ingest.py`` and other packages' entry points."""
    from .. import plugins
    from ..ingest.registry import sources

    return sources(plugins.children(_PACKAGE, "ingest", skip=("ingest", "commands")))


def estimators() -> dict[str, str]:
    """Every ``estimator`` ``wh.runs.score`` accepts, with its one-line description (the
    registry of ``ctxprior.scoring.estimators``: one entry per estimator)."""
    from ..scoring.estimators import score_estimators

    return {name: e.help for name, e in score_estimators().items()}
