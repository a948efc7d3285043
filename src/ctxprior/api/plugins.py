"""The plug-ins the API finds: the analyses, the data sources and the estimators (each registry
lives beside its plug-ins; these functions read them)."""

from __future__ import annotations

from typing import Any

_PACKAGE = __package__.rpartition(".")[0]  # ctxprior: the package whose modules declare plug-ins


def analysis_names() -> tuple[str, ...]:
    """Every analysis ``Warehouse.analyze(only=...)`` accepts, in run order (the registry of
    ``ctxprior.queries``: each analysis declared in its own file)."""
    from ..queries.registry import names

    return names()


def ingest_sources() -> dict[str, Any]:
    """Every data source :meth:`Warehouse.ingest` (and ``ctxprior ingest``) knows, by name: the
    registry ``ctxprior.ingest.registry.SOURCES``, one declaration per source beside its loader.
    The declaring modules are found, not listed: every module of ``ingest/`` and each library
    package's ``ingest.py``."""
    import importlib
    from importlib import resources

    from ..ingest.registry import SOURCES

    global _SOURCES_FOUND
    if not _SOURCES_FOUND:
        root = resources.files(_PACKAGE)
        names = [
            f"ingest.{f.name[:-3]}"
            for f in (root / "ingest").iterdir()
            if f.name.endswith(".py") and not f.name.startswith("_")
        ]
        names += [
            f"{d.name}.ingest"
            for d in root.iterdir()
            if d.name not in ("ingest", "commands") and (d / "ingest.py").is_file()
        ]
        for name in sorted(names):
            importlib.import_module(f"{_PACKAGE}.{name}")
        _SOURCES_FOUND = True
    return dict(sorted(SOURCES.items()))


_SOURCES_FOUND = False


def estimators() -> dict[str, str]:
    """Every ``estimator`` :meth:`Warehouse.score` accepts, with its one-line description (the
    registry ``ctxprior.scoring.estimators.ESTIMATORS``: one entry per estimator)."""
    from ..scoring.estimators import ESTIMATORS

    return {name: e.help for name, e in ESTIMATORS.items()}
