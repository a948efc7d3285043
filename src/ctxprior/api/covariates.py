"""``wh.covariates``: tables keyed by entity / answer / relation, joinable as ``cov_<name>`` views."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..covariates.options import COOCCURRENCE_OPTIONS, KNOWN_OPTIONS
from .core import Noun
from .typecheck import checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd
    import pyarrow as pa


def _check(options: Sequence, name: str | None, values: dict) -> None:
    """The declared checks of a covariate command's options and its name, before the warehouse is opened."""
    from ..covariates.catalog import check_name
    from ..options import check_options

    check_options(options, values)
    if name is not None:
        check_name(name)


@checked_methods
class Covariates(Noun):
    """``wh.covariates``: tables keyed by entity / answer / relation, joinable as ``cov_<name>`` views."""

    name = "covariates"

    def list(self) -> pd.DataFrame:
        """The covariate catalog, one row per covariate (what ``ctxprior covariates list`` shows, plus
        ``description``); an empty frame when there are none.

        Command: ``ctxprior covariates list``.
        """
        import pandas as pd

        from ..covariates.catalog import list_covariates

        with self._wh.connect() as store:
            if "covariate" not in store.table_names():
                return pd.DataFrame()
            return list_covariates(store)

    def add(
        self,
        data: pd.DataFrame | pa.Table | str | Path,
        *,
        on: Sequence[str] | str,
        name: str,
        match: str = "name",
        replace: bool = False,
        description: str | None = None,
    ) -> dict:
        """Add your own table (a DataFrame, an Arrow table, or a CSV / Parquet path) as ``cov_<name>``.

        ``on``: its key columns among dataset, relation, entity, answer; ``match``: compare entity /
        answer values with the warehouse's names (``name``) or URIs (``uri``).

        Command: ``ctxprior covariates add``.
        """
        from ..covariates.options import ADD_OPTIONS
        from ..covariates.user import add_user_table
        from ..storage.sandbox import private_copies

        _check(ADD_OPTIONS, name, {"on": on, "match": match})
        keys = on if isinstance(on, str) else ",".join(on)
        files = [str(data)] if isinstance(data, (str, Path)) else []  # a CSV / Parquet DuckDB reads
        with private_copies(files) as copies:  # DuckDB reads the bytes hashed, not the name again
            reads = [c for c, _ in copies]
            with self._wh.connect(write=True, reads=reads) as store:
                return add_user_table(
                    store,
                    copies[0] if copies else data,
                    name,
                    keys,
                    match=match,
                    replace=replace,
                    description=description,
                    source=files[0] if files else None,
                )

    @declared_keywords(COOCCURRENCE_OPTIONS)
    def cooccurrence(
        self,
        corpus: Sequence[str | Path] | str | Path,
        *,
        name: str,
        progress: bool | None = None,
        **options: Any,
    ):
        """Count entity–answer co-occurrences in a corpus (App. F.2); see [Covariates](covariates.md).

        Command: ``ctxprior covariates cooccurrence``.
        """
        from ..covariates.cooccurrence import cooccurrence

        _check(COOCCURRENCE_OPTIONS, name, options)
        files = [corpus] if isinstance(corpus, (str, Path)) else list(corpus)
        with self._wh.connect(write=True) as store:
            return cooccurrence(store, [str(f) for f in files], name, progress=progress, **options)

    def kg_degree(
        self, triples: Sequence[str | Path] | str | Path, *, name: str, dataset: str | None = None, **options
    ) -> dict:
        """Relation-specific KG degree δ(e, q) and total degree from triple files (App. F.3).

        Command: ``ctxprior covariates kg-degree``.
        """
        from ..covariates.kg_degree import kg_degree
        from ..covariates.options import KG_DEGREE_OPTIONS
        from ..covariates.triples import triple_files
        from ..storage.sandbox import private_copies

        _check(KG_DEGREE_OPTIONS, name, options)
        given = [str(f) for f in ([triples] if isinstance(triples, (str, Path)) else list(triples))]
        with private_copies(triple_files(given)) as copies:  # DuckDB reads the bytes hashed
            files = [c for c, _ in copies]
            with self._wh.connect(write=True, reads=files) as store:
                return kg_degree(store, files, name, dataset=dataset, source=" ".join(given), **options)

    @declared_keywords(KNOWN_OPTIONS)
    def known(self, run: int, *, model: Any = None, progress: bool = True, **options: Any) -> dict:
        """The run's model's own familiarity with each entity (Ferrando et al. 2025, §3), from its
        closed-book answers to the run's open queries, as ``cov_<name>`` (default ``known_r<run>``)
        with ``known`` 1 / 0 / NULL (left out) per entity. ``rule="ferrando"`` (the default, as
        Ferrando et al.'s released code does it): one greedy completion per attribute (an entity's
        facts in one relation, asked with the relation's first open query form), labelled correct
        / refusal / error by the code's checks (``covariates/ferrando.py``); known with at least
        max(2, n - 1) of its n attributes correct and none refused, unknown with none correct.
        ``rule="ctxprior-samples"``: ``samples`` answers at ``temperature`` (seeded) per
        attribute, correct when at least ``min_correct`` match; known with at least
        ``min_attributes`` correct attributes, unknown with none. ``rule="greedy-majority"``: one
        greedy answer per open query form, known when at least half are correct, unknown when none
        is. ``model``: the run's model already loaded (:func:`load_model`) or its path; default:
        the run's. The other keywords are the options of ``ctxprior covariates known``, made from
        their one declaration (``KNOWN_OPTIONS`` in ``covariates/options.py``).

        Command: ``ctxprior covariates known``.
        """
        from ..covariates import known as kn
        from ..scoring.closed_book import closed_book_answers, sampled_answers
        from .inmemory import _as_model

        _check(KNOWN_OPTIONS, options["name"], {"run": run, **options})
        device, name, replace = options.pop("device"), options.pop("name"), options.pop("replace")
        with self._wh.connect() as store:
            p = kn.plan(store, run, name, replace, **options)
            if p.unchanged:
                return kn.summary(store, p, unchanged=True)
        lm = _as_model(model or p.model, None, device, p.dtype or "auto", p.quantization)
        if p.rule == "ctxprior-samples":
            drawn = sampled_answers(
                lm,
                p.prompts,
                p.config,
                n=options["samples"],
                temperature=options["temperature"],
                seed=options["seed"],
                max_new_tokens=p.params["max_new_tokens"],
                batch=p.params["batch"],
                progress=progress,
            )
            with self._wh.connect(write=True) as store:
                return kn.store_samples(store, p, drawn)
        texts = closed_book_answers(
            lm,
            p.prompts,
            p.config,
            max_new_tokens=p.params["max_new_tokens"],
            batch_size=options["batch_size"],
            progress=progress,
        )
        with self._wh.connect(write=True) as store:
            store_texts = kn.store_labels if p.rule == "ferrando" else kn.store_answers
            return store_texts(store, p, texts)
