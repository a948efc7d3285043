"""DynamicQA (Marjanović et al. 2024): everything ctxprior does with it, in one place.

- ``ingest``: the three CSVs (GitHub release or ``copenlu/dynamicqa`` on the Hub) -> the shared
  dataset tables plus ``dynamicqa_fact`` / ``dynamicqa_alias`` (``ctxprior ingest dynamicqa``);
- ``sample``: original and counter-memory snippets as a sample, so ``ctxprior score`` gives
  first-token / answer-set KL on the same facts (``ctxprior sample-dynamic``);
- ``config`` (the run's options), ``calibrate`` (the embedding threshold), ``answers`` (sampled
  and greedy answers on ``scoring.generate``), ``facts`` (per fact and condition: clusters,
  semantic entropy, Coherent Persuasion, accuracy, persuaded / stubborn) and ``run`` (``ctxprior
  score-dynamic``: ``run_dynamic`` -> ``run_facts``); a run's unit is a fact, its row's life cycle (start, resume, cancel, close, SIGTERM) the one persuasion runs
  use (``storage.runs``), so ``ctxprior runs resume / cancel`` take dynamic runs too;
- ``semantic``: the equivalence tests (MiniLM embeddings, NLI), clusters, SE and CP formulas;
- ``analyses`` + ``sql/``: Tables 1-3 analogues (``ctxprior analyze-dynamic``).
Tables: ``schema/dynamicqa.py``; commands: ``commands/dynamicqa.py``; guide: docs/dynamicqa.md.

Import rules: the package table in docs/architecture.md.
"""
