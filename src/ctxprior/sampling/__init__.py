"""Samples: which facts and contexts a run scores. ``draw.py`` draws the paper's design and ``all``
(METHOD.md §2, App. C) and stores a sample (``store_sample``, which DynamicQA's sampler shares);
``fixed.py`` is design ``fixed`` (every item of a fixed-context dataset with its own passages).

Layer 3, beside ``ingest`` (whose relations it resolves). Import rules: the package table in
docs/architecture.md.
"""
