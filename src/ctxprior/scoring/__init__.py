"""Scoring: ψ and χ from a model's next-token distributions, and the runs that store them.

- the math: ``metrics`` (ψ, χ and the entropies as pure functions; the formulas are in its
  docstring), ``estimators`` (first-token and answer-set), ``engine`` (the batched forward pass
  with a shared context prefix), ``models`` (loading: aliases, GGUF, dtype, quantization);
- ``units``: one work unit (a relation x query form x entity shard) computed into Arrow rows;
  ``texts``: its inputs and prompt strings (no torch);
- ``runs/``: how a run is scheduled, committed and resumed (``score_sample``, ``list_runs``, ...);
- ``executors/``: where units are computed (``local``, ``ray_cluster``);
- ``quick``: scores for a few prompts without a warehouse.

DynamicQA's sampled generations and semantic entropy live in ``ctxprior.dynamicqa``.
Import rules: the package table in docs/architecture.md.
"""
