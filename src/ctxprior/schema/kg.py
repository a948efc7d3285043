"""Provenance of datasets built from a knowledge graph (`ctxprior build-dataset`).

`dataset` has one source path and one sha256; a built dataset has many inputs (triple files,
label files, the relations file), so each input gets a `dataset_source` row, and the build's
options, the relations file's text and the counts go into `dataset_build`. Additive tables.
"""

from sqlalchemy import BigInteger, Integer, Text

from .base import col, ref, table

dataset_source = table(
    "dataset_source",
    ref("dataset", "the dataset built from this input", pk=True),
    col("ordinal", Integer, "order of the input (triples, then labels, then relations)", pk=True),
    col("role", Text, "triples | labels | relations", null=False),
    col("path", Text, "absolute path of the input at build time", null=False),
    col("format", Text, "nt | ttl | tsv (triple files) or yaml (relations file)", null=False),
    col("size_bytes", BigInteger, "file size in bytes", null=False),
    col("sha256", Text, "sha256 of the file's bytes (as stored, e.g. gzip)", null=False),
    col("n_lines", BigInteger, "non-blank, non-comment lines read (triple and label files)"),
    col("n_malformed", BigInteger, "lines that are not triples (skipped)"),
    comment="Every input file of a dataset built with `build-dataset`, with its sha256.",
)

dataset_build = table(
    "dataset_build",
    ref("dataset", "the built dataset", pk=True),
    col("relations_path", Text, "absolute path of the relations file", null=False),
    col("relations_sha256", Text, "sha256 of the relations file", null=False),
    col("relations_yaml", Text, "full text of the relations file", null=False),
    col(
        "params_json",
        Text,
        "build options as JSON: lang, entities_per_relation, seed, label predicates, ...",
        null=False,
    ),
    col(
        "stats_json",
        Text,
        "counts as JSON: lines, triples, malformed lines, candidates and entities per relation, seconds",
        null=False,
    ),
    comment="How a dataset was built from a knowledge graph (`ctxprior build-dataset`).",
)
