"""Covariates: corpus co-occurrence counts, KG degrees, and user tables keyed by warehouse keys.

Import rules: the package table in docs/architecture.md.

Each covariate has a row in the `covariate` catalog and a view ``cov_<name>`` with the warehouse's
readable keys (dataset, relation, entity, answer). Modules:
  text.py          word splitting of Du et al. 2024, App. F.2
  counting.py      exact window co-occurrence counting (Aho-Corasick + numpy)
  corpus.py        corpus shards: formats, streaming, bad lines
  cooccurrence.py  the `covariates cooccurrence` command: plan, executors (local / Ray), storage
  kg_degree.py     delta(e,q) and total degree with DuckDB over triple files
  user.py          `covariates add`: any CSV / Parquet keyed by names or URIs
  catalog.py       catalog rows, cov_<name> views, register_fact_degrees
  worker.py        counting one shard in a worker process / Ray task (light imports)
"""


def register_fact_degrees(store, dataset_id: int):
    """See ``catalog.register_fact_degrees`` (imported lazily: worker processes stay light)."""
    from .catalog import register_fact_degrees as _register

    return _register(store, dataset_id)


__all__ = ["register_fact_degrees"]
