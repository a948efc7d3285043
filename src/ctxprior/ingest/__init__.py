"""Ingest: datasets in, samples out. One module per source format (``yago_qec``, ``demo``,
``kg_build`` from KG dumps; DynamicQA's reader is in ``ctxprior.dynamicqa``), each validating
fully before one transaction through ``builder.DatasetBuilder``; ``registry`` holds the sources
``ctxprior ingest`` offers (each declared beside its loader); ``sources`` resolves paths, ``hf://``
and URLs; ``sampling`` draws the paper's sample design.

Import rules: the package table in docs/architecture.md.
"""
