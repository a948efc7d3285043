"""The Python API: open a warehouse, run the pipeline's steps, get pandas DataFrames back.

This is the layer researchers import (``import ctxprior``) and the one the ``ctxprior`` command
line calls: every command parses its options, calls one function or method here, and prints.

>>> import ctxprior
>>> wh = ctxprior.open("demo.duckdb")                       # read-only unless write=True
>>> chi = wh.sql("SELECT entity, query_form, susceptibility FROM v_susceptibility")
>>> list(chi.columns)
['entity', 'query_form', 'susceptibility']

A :class:`Warehouse` hands out one part per noun, each in its own module here: ``wh.datasets``
(ingest, build, list), ``wh.samples``, ``wh.fakes``, ``wh.runs`` (score, resume, cancel, list),
``wh.dynamic`` (DynamicQA), ``wh.covariates``, ``wh.analyses`` (analyses, summary, figures,
report), ``wh.parquet`` and ``wh.hub`` (export, import, publish, pull).

>>> wh.runs.list().loc[0, "status"]
'done'

A :class:`Warehouse` holds no connection between calls: each call opens the DuckDB file, works
and closes it, so a notebook never keeps a ``ctxprior score`` running in a terminal from writing.
For long read sessions, ``duckdb.connect(path, read_only=True)`` sees every view too
(see [the warehouse](warehouse.md#working-with-duckdb-directly)).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# name -> the module that defines it; each is imported on first use, so the command line imports
# only what its command calls (``ctxprior sql`` neither torch nor pandas nor the other nouns)
_WHERE = {
    "check_input": "..inputs",
    "read_input_text": "..inputs",
    "Analyses": ".analyses",
    "Rows": ".core",
    "Run": ".core",
    "Covariates": ".covariates",
    "Datasets": ".datasets",
    "Dynamic": ".dynamic",
    "Fakes": ".fakes",
    "Hub": ".hub",
    "load_model": ".inmemory",
    "quick": ".inmemory",
    "command_options": ".options",
    "print_options": ".options",
    "Parquet": ".parquet",
    "analysis_names": ".plugins",
    "estimators": ".plugins",
    "ingest_sources": ".plugins",
    "Runs": ".runs",
    "score_options": ".runs",
    "Samples": ".samples",
    "Warehouse": ".warehouse",
    "migrate": ".warehouse",
    "open": ".warehouse",
}

if TYPE_CHECKING:
    from ..inputs import check_input, read_input_text
    from .analyses import Analyses
    from .core import Rows, Run
    from .covariates import Covariates
    from .datasets import Datasets
    from .dynamic import Dynamic
    from .fakes import Fakes
    from .hub import Hub
    from .inmemory import load_model, quick
    from .options import command_options, print_options
    from .parquet import Parquet
    from .plugins import analysis_names, estimators, ingest_sources
    from .runs import Runs, score_options
    from .samples import Samples
    from .warehouse import Warehouse, migrate, open

__all__ = [
    "Analyses",
    "Covariates",
    "Datasets",
    "Dynamic",
    "Fakes",
    "Hub",
    "Parquet",
    "Rows",
    "Run",
    "Runs",
    "Samples",
    "Warehouse",
    "analysis_names",
    "check_input",
    "command_options",
    "estimators",
    "ingest_sources",
    "load_model",
    "migrate",
    "open",
    "print_options",
    "quick",
    "read_input_text",
    "score_options",
]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
