"""``wh.covariates``: tables keyed by entity / answer / relation, joinable as ``cov_<name>`` views."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .core import Noun
from .typecheck import checked_methods


@checked_methods
class Covariates(Noun):
    """``wh.covariates``: tables keyed by entity / answer / relation, joinable as ``cov_<name>`` views."""

    name = "covariates"

    def list(self) -> pd.DataFrame:
        """The covariate catalog, one row per covariate (what ``ctxprior covariates list`` shows, plus
        ``description``); an empty frame when there are none.

        Command: ``ctxprior covariates list``.
        """
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
        from ..covariates.user import add_user_table

        keys = on if isinstance(on, str) else ",".join(on)
        with self._wh.connect(write=True) as store:
            return add_user_table(
                store,
                data if not isinstance(data, Path) else str(data),
                name,
                keys,
                match=match,
                replace=replace,
                description=description,
            )

    def cooccurrence(
        self,
        corpus: Sequence[str | Path] | str | Path,
        *,
        name: str,
        window: int = 50,
        dataset: str | None = None,
        **options,
    ):
        """Count entity–answer co-occurrences in a corpus (App. F.2); see [Covariates](covariates.md).

        Command: ``ctxprior covariates cooccurrence``.
        """
        from ..covariates.cooccurrence import cooccurrence

        files = [corpus] if isinstance(corpus, (str, Path)) else list(corpus)
        with self._wh.connect(write=True) as store:
            return cooccurrence(
                store, [str(f) for f in files], name, window=window, dataset=dataset, **options
            )

    def kg_degree(
        self, triples: Sequence[str | Path] | str | Path, *, name: str, dataset: str | None = None, **options
    ) -> dict:
        """Relation-specific KG degree δ(e, q) and total degree from triple files (App. F.3).

        Command: ``ctxprior covariates kg-degree``.
        """
        from ..covariates.kg_degree import kg_degree

        files = [triples] if isinstance(triples, (str, Path)) else list(triples)
        with self._wh.connect(write=True) as store:
            return kg_degree(store, [str(f) for f in files], name, dataset=dataset, **options)
