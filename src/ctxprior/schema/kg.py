"""Provenance of datasets built from a knowledge graph (`ctxprior build-dataset`).

`dataset` has one source path and one sha256; a built dataset has many inputs (triple files,
label files, the relations file), so each input gets a `dataset_source` row, and the build's
options, the relations file's text and the counts go into `dataset_build`. Additive tables.
"""

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, Table, Text

from .base import metadata

dataset_source = Table(
    "dataset_source",
    metadata,
    Column(
        "dataset_id",
        Integer,
        ForeignKey("dataset.dataset_id"),
        primary_key=True,
        comment="the dataset built from this input",
    ),
    Column(
        "ordinal",
        Integer,
        primary_key=True,
        comment="order of the input (triples, then labels, then relations)",
    ),
    Column("role", Text, nullable=False, comment="triples | labels | relations"),
    Column("path", Text, nullable=False, comment="absolute path of the input at build time"),
    Column("format", Text, nullable=False, comment="nt | ttl | tsv (triple files) or yaml (relations file)"),
    Column("size_bytes", BigInteger, nullable=False, comment="file size in bytes"),
    Column("sha256", Text, nullable=False, comment="sha256 of the file's bytes (as stored, e.g. gzip)"),
    Column("n_lines", BigInteger, comment="non-blank, non-comment lines read (triple and label files)"),
    Column("n_malformed", BigInteger, comment="lines that are not triples (skipped)"),
    comment="Every input file of a dataset built with `build-dataset`, with its sha256.",
)

dataset_build = Table(
    "dataset_build",
    metadata,
    Column(
        "dataset_id", Integer, ForeignKey("dataset.dataset_id"), primary_key=True, comment="the built dataset"
    ),
    Column("relations_path", Text, nullable=False, comment="absolute path of the relations file"),
    Column("relations_sha256", Text, nullable=False, comment="sha256 of the relations file"),
    Column("relations_yaml", Text, nullable=False, comment="full text of the relations file"),
    Column(
        "params_json",
        Text,
        nullable=False,
        comment="build options as JSON: lang, entities_per_relation, seed, label predicates, ...",
    ),
    Column(
        "stats_json",
        Text,
        nullable=False,
        comment="counts as JSON: lines, triples, malformed lines, candidates and entities per relation, seconds",
    ),
    comment="How a dataset was built from a knowledge graph (`ctxprior build-dataset`).",
)
