"""Covariate tables: the catalog, corpus co-occurrence counts (per shard), KG degrees.

Every covariate has one `covariate` row and one view `cov_<name>` with the warehouse's readable
keys (see docs/readme/covariates.md for each kind's columns). Co-occurrence counts are stored per
(covariate, shard) so a rerun skips counted shards and the view sums shards exactly.
A user table added with `covariates add` is stored as its own table `covdata_<name>` (its
columns are the user's, so it cannot be declared here); the catalog row names it.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Integer,
    Table,
    Text,
    UniqueConstraint,
)

from .base import metadata

covariate = Table(
    "covariate",
    metadata,
    Column("covariate_id", Integer, primary_key=True, comment="id of the covariate"),
    Column("name", Text, nullable=False, unique=True, comment="covariate name; its view is cov_<name>"),
    Column("kind", Text, nullable=False, comment="cooccurrence | kg_degree | fact_degree | user"),
    Column(
        "dataset_id",
        Integer,
        ForeignKey("dataset.dataset_id"),
        comment="dataset it was computed for; NULL = all datasets",
    ),
    Column("view_name", Text, nullable=False, comment="cov_<name>"),
    Column(
        "key_columns",
        Text,
        nullable=False,
        comment="comma-separated readable keys of the view, e.g. dataset,relation,entity,answer",
    ),
    Column("value_columns", Text, nullable=False, comment="comma-separated value columns of the view"),
    Column("source_path", Text, comment="input file(s) or folder(s) as given"),
    Column(
        "source_sha256",
        Text,
        comment="sha256 of the input file; for several files, sha256 of their sorted sha256 list",
    ),
    Column("description", Text, comment="free text (--description) or a default"),
    Column("params_json", Text, nullable=False, comment="all options that define the values, as JSON"),
    Column("status", Text, nullable=False, comment="complete | partial (some corpus shards not counted yet)"),
    Column("n_rows", BigInteger, comment="rows in the source (user tables) or facts covered"),
    Column("n_matched", BigInteger, comment="source rows that matched warehouse keys / facts with a value"),
    Column("data_table", Text, comment="table holding the values (covdata_<name> for user tables)"),
    Column("ctxprior_version", Text, nullable=False, comment="ctxprior version that wrote the row"),
    Column("added_at", DateTime, nullable=False, comment="when the covariate was first added (UTC)"),
    Column("updated_at", DateTime, nullable=False, comment="last change (UTC)"),
    comment="Catalog of covariates (corpus co-occurrence, KG degree, user tables); one view cov_<name> each.",
)

cooccurrence_name = Table(
    "cooccurrence_name",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("name_id", Integer, primary_key=True, comment="index of the name within the covariate"),
    Column(
        "name",
        Text,
        nullable=False,
        comment="normalized name: words joined by one space (punctuation removed, maybe lower-cased)",
    ),
    Column("n_words", Integer, nullable=False, comment="words in the normalized name"),
    comment="Distinct normalized entity / answer names searched in the corpus.",
)

cooccurrence_pair = Table(
    "cooccurrence_pair",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("pair_id", Integer, primary_key=True, comment="index of the pair within the covariate"),
    Column("name_id_lo", Integer, nullable=False, comment="smaller name id of the unordered pair"),
    Column("name_id_hi", Integer, nullable=False, comment="larger (or equal) name id of the pair"),
    comment="Distinct unordered (entity name, answer name) pairs whose co-occurrence is counted.",
)

cooccurrence_fact = Table(
    "cooccurrence_fact",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("entity_name_id", Integer, comment="NULL when the entity name has no words after normalization"),
    Column("answer_name_id", Integer, comment="NULL when the fact has no answer or it has no words"),
    Column("pair_id", Integer, comment="NULL when either name is NULL"),
    comment="Which names and pair each fact of the counted dataset(s) maps to.",
)

cooccurrence_shard = Table(
    "cooccurrence_shard",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("shard_id", Integer, primary_key=True, comment="id of the counted shard"),
    Column("path", Text, nullable=False, comment="absolute path of the shard file"),
    Column("size_bytes", BigInteger, nullable=False, comment="file size when counted"),
    Column("mtime_ns", BigInteger, nullable=False, comment="file modification time when counted"),
    Column("sha256", Text, nullable=False, comment="sha256 of the file bytes"),
    Column("n_lines", BigInteger, nullable=False, comment="lines read"),
    Column(
        "n_documents",
        BigInteger,
        nullable=False,
        comment="documents counted (JSON lines with text, or paragraphs)",
    ),
    Column("n_words", BigInteger, nullable=False, comment="words after normalization"),
    Column("n_bad_json", BigInteger, nullable=False, comment="lines skipped: not JSON"),
    Column(
        "n_missing_text",
        BigInteger,
        nullable=False,
        comment="lines skipped: JSON without a string text field",
    ),
    Column("bad_examples", Text, comment="first few skipped lines, e.g. 'line 3: not JSON'"),
    Column("seconds", Double, comment="wall time spent counting the shard"),
    Column("worker", Text, comment="host:pid (or Ray node) that counted it"),
    Column("finished_at", DateTime, nullable=False, comment="when the shard's counts were stored (UTC)"),
    UniqueConstraint("covariate_id", "path"),
    comment="Corpus shards counted for a co-occurrence covariate (a rerun skips them).",
)

cooccurrence_pair_count = Table(
    "cooccurrence_pair_count",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("shard_id", Integer, primary_key=True, comment="shard (cooccurrence_shard) the count comes from"),
    Column("pair_id", Integer, primary_key=True, comment="pair (cooccurrence_pair)"),
    Column(
        "count",
        BigInteger,
        nullable=False,
        comment="co-occurrences within the window in this shard (non-zero only)",
    ),
    comment="Per-shard pair counts; the covariate's value is the sum over shards.",
)

cooccurrence_name_count = Table(
    "cooccurrence_name_count",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("shard_id", Integer, primary_key=True, comment="shard (cooccurrence_shard) the count comes from"),
    Column("name_id", Integer, primary_key=True, comment="name (cooccurrence_name)"),
    Column(
        "count", BigInteger, nullable=False, comment="occurrences of the name in this shard (non-zero only)"
    ),
    comment="Per-shard name frequencies.",
)

kg_degree = Table(
    "kg_degree",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("entity_uri", Text, primary_key=True, comment="entity URI as in the warehouse (entity.uri)"),
    Column(
        "relation_uri",
        Text,
        primary_key=True,
        comment="predicate URI (no reverse- prefix: the degree is direction-free)",
    ),
    Column(
        "degree",
        BigInteger,
        nullable=False,
        comment="delta(e,q) = |{a:(e,q,a)} U {a:(a,q,e)}|: distinct neighbours of e along q, either direction",
    ),
    comment="Relation-dependent KG degree of warehouse entities (only entities whose URI is in the warehouse).",
)

kg_entity_degree = Table(
    "kg_entity_degree",
    metadata,
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), primary_key=True),
    Column("entity_uri", Text, primary_key=True, comment="entity URI as in the warehouse (entity.uri)"),
    Column(
        "total_degree",
        BigInteger,
        nullable=False,
        comment="distinct triples with the entity as subject or object",
    ),
    Column("n_relations", BigInteger, nullable=False, comment="distinct predicates on those triples"),
    comment="Total KG degree of warehouse entities.",
)

closed_book_answer = Table(
    "closed_book_answer",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True, comment="run whose model answered"),
    Column(
        "query_form_id",
        Integer,
        ForeignKey("query_form.query_form_id"),
        primary_key=True,
        comment="open query form of the run, asked with no context",
    ),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("covariate_id", Integer, ForeignKey("covariate.covariate_id"), nullable=False),
    Column("text", Text, nullable=False, comment="the model's greedy answer to the bare query (closed book)"),
    Column(
        "correct",
        Boolean,
        nullable=False,
        comment="a gold answer occurs in the answer's first line as whole words after SQuAD normalization "
        "(case folded, no punctuation, no a/an/the); gold = the fact's answer and its aliases",
    ),
    comment="Closed-book greedy answers of a run's model, judged against the gold answer "
    "(`covariates known`; the known / unknown split of Ferrando et al. 2025 is view stg_known_entity).",
)

closed_book_sample = Table(
    "closed_book_sample",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True, comment="run whose model answered"),
    Column(
        "relation_id",
        Integer,
        ForeignKey("relation.relation_id"),
        primary_key=True,
        comment="the attribute's relation (an attribute: one entity's facts in one relation)",
    ),
    Column(
        "entity_id",
        Integer,
        ForeignKey("entity.entity_id"),
        primary_key=True,
        comment="the attribute's entity",
    ),
    Column("sample", Integer, primary_key=True, comment="0, 1, ... (--samples of them per attribute)"),
    Column(
        "query_form_id",
        Integer,
        ForeignKey("query_form.query_form_id"),
        nullable=False,
        comment="the open query form asked with no context: the relation's first one the run scored",
    ),
    Column(
        "covariate_id",
        Integer,
        ForeignKey("covariate.covariate_id"),
        nullable=False,
        comment="the `known` covariate whose params (rule, samples, temperature, seed, thresholds) made them",
    ),
    Column("text", Text, nullable=False, comment="the sampled answer (closed book, cut at the stop rule)"),
    Column(
        "correct",
        Boolean,
        nullable=False,
        comment="a gold answer occurs in the answer's first line as whole words after SQuAD normalization; "
        "gold = the answers of the entity's facts in the relation and their aliases",
    ),
    comment="Closed-book answers sampled from a run's model, one row per sample (`covariates known "
    "--rule ctxprior-samples`; labels: views stg_known_attribute, stg_known_entity).",
)

closed_book_attribute = Table(
    "closed_book_attribute",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True, comment="run whose model answered"),
    Column(
        "relation_id",
        Integer,
        ForeignKey("relation.relation_id"),
        primary_key=True,
        comment="the attribute's relation (an attribute: one entity's facts in one relation)",
    ),
    Column(
        "entity_id",
        Integer,
        ForeignKey("entity.entity_id"),
        primary_key=True,
        comment="the attribute's entity",
    ),
    Column(
        "query_form_id",
        Integer,
        ForeignKey("query_form.query_form_id"),
        nullable=False,
        comment="the open query form asked with no context: the relation's first one the run scored",
    ),
    Column(
        "covariate_id",
        Integer,
        ForeignKey("covariate.covariate_id"),
        nullable=False,
        comment="the `known` covariate whose params (rule, max_new_tokens, definition) made it",
    ),
    Column("text", Text, nullable=False, comment="the greedy completion (closed book, cut at the stop rule)"),
    Column(
        "check_kind",
        Text,
        nullable=False,
        comment="the released code's check it was judged with: name (thefuzz token_set_ratio > 90, "
        "check_name_correctness) or number (within 2, number_match; every gold answer a number)",
    ),
    Column(
        "label",
        Text,
        nullable=False,
        comment="correct (a gold answer passes the check), refusal (else, is_generation_refusal), error "
        "(else): get_label of Ferrando et al.'s code (javiferran/sae_entities)",
    ),
    comment="Closed-book greedy completions of a run's model, one per attribute, labelled as Ferrando "
    "et al.'s released code labels them (`covariates known --rule ferrando`, the default; entity "
    "labels: view stg_known_entity).",
)
