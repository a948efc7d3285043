"""``wh.datasets``: load datasets (a data source of the registry, or a knowledge graph) and list them."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..ingest.kg_options import BUILD_OPTIONS
from .core import Noun
from .plugins import ingest_sources
from .typecheck import checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


@checked_methods
class Datasets(Noun):
    """``wh.datasets``: the datasets of the warehouse; ``wh.datasets.list()`` is a DataFrame of them."""

    name = "datasets"

    def list(self) -> pd.DataFrame:
        """One row per dataset: name, source, relations, real / fake facts."""
        from ..sqlfiles import read_sql

        with self._wh.connect() as store:
            return store.df(read_sql("ctxprior.ingest", "sql/info.sql"))

    def ingest(self, source: str, *args: Any, **params: Any) -> Any:
        """Load a dataset with the data source ``source`` (``"yago-qec"``, ``"dynamicqa"``, ``"demo"``:
        :func:`ingest_sources`); ``args`` and ``params`` are its parameters, as the command's
        arguments and options (``wh.datasets.ingest("yago-qec", "yago_qec.json", relations=["capital"])``).
        What needs no warehouse (download, validation) is done before it is opened; the dataset is
        written in one transaction. Returns what was loaded (for ``demo``, one dict per dataset).

        Command: ``ctxprior ingest SOURCE``.
        """
        src = ingest_sources().get(source)
        if src is None:
            raise UserError(f"unknown data source '{source}'; choose from {', '.join(ingest_sources())}")
        params = src.bind(args, params)
        params = src.prepare(**params) if src.prepare else params
        with self._wh.connect(write=True) as store:
            return src.load(store, **params)

    def ingest_demo(self, only: Sequence[str] | None = None) -> builtins.list[dict]:  # list: the method
        """Load the bundled demo datasets (demo, friend_enemy, gender); a no-op when present.
        The same as ``wh.datasets.ingest("demo", only=only)``."""
        return self.ingest("demo", only=only)

    def ingest_yago_qec(
        self,
        source: str | Path,
        name: str = "yago_qec",
        relations: Sequence[str] | None = None,
        sha256: str | None = None,
    ) -> dict:
        """Load the authors' ``yago_qec.json`` from a path, ``hf://datasets/OWNER/REPO[@REV]/FILE`` or an
        http(s) URL (downloaded into the Hugging Face cache; ``sha256`` verifies it). Validated
        completely before anything is written; the result says what was loaded and from where.
        The same as ``wh.datasets.ingest("yago-qec", source, ...)``."""
        return self.ingest("yago-qec", source, name=name, relations=relations, sha256=sha256)

    def ingest_dynamicqa(
        self, folder: str | Path | None = None, name: str = "dynamicqa", revision: str | None = None
    ) -> dict:
        """Load DynamicQA from ``folder`` (the release CSVs), or without it from the Hub
        (``copenlu/dynamicqa`` at a pinned ``revision``, cached). The same as
        ``wh.datasets.ingest("dynamicqa", folder, ...)``."""
        return self.ingest("dynamicqa", folder, name=name, revision=revision)

    @declared_keywords(BUILD_OPTIONS)
    def build(
        self,
        triples: Sequence[str | Path] | str | Path,
        relations: str | Path,
        name: str,
        *,
        labels: Sequence[str | Path] = (),
        progress: bool | None = None,
        **options: Any,
    ) -> dict:
        """Build dataset ``name`` from knowledge-graph triple files (N-Triples, one-line Turtle, TSV;
        plain or gzip) and a relations file (YAML); see [Build a dataset from a knowledge
        graph](datasets.md#build-a-dataset-from-a-knowledge-graph). The warehouse is not held while the
        triples are read. Returns a report; each of its ``files`` has ``lines``, the text naming its
        first malformed lines.

        Command: ``ctxprior build-dataset``.
        """
        from ..ingest.kg_build import BuildOptions, build_dataset, line_list

        opts = BuildOptions(**options)
        opts.check()  # the declared checks (ingest/kg_options.py), before anything is read or opened
        self._wh._need_write()
        files = [triples] if isinstance(triples, (str, Path)) else list(triples)
        rep = build_dataset(
            self._wh._open_store,
            [str(f) for f in files],
            str(relations),
            name,
            labels=[str(f) for f in labels],
            options=opts,
            progress=progress,
            db_path=self._wh.path,
        )
        for f in rep["files"]:
            f["lines"] = line_list(f)
        return rep

    def write_demo_corpus(
        self, path: str | Path, seed: int = 0, n_documents: int = 3000, overwrite: bool = False
    ) -> dict[str, int]:
        """Write the demo's small generated corpus (one ``.jsonl.zst`` file) to ``path``, from the
        demo dataset's facts (for a co-occurrence covariate); returns its counts. ``path`` is never
        the warehouse, nor an existing file unless ``overwrite``."""
        from ..ingest.demo import write_demo_corpus

        with self._wh.connect() as store:
            return write_demo_corpus(store, path, seed=seed, n_documents=n_documents, overwrite=overwrite)
