"""Covariate tables: the catalog, corpus co-occurrence counts (per shard), KG degrees.

Every covariate has one `covariate` row and one view `cov_<name>` with the warehouse's readable
keys (see docs/readme/covariates.md for each kind's columns). Co-occurrence counts are stored per
(covariate, shard) so a rerun skips counted shards and the view sums shards exactly.
A user table added with `covariates add` is stored as its own table `covdata_<name>` (its
columns are the user's, so it cannot be declared here); the catalog row names it.
"""

from sqlalchemy import BigInteger, Boolean, DateTime, Double, Integer, Text, UniqueConstraint

from .base import col, ref, refs, table

covariate = table(
    "covariate",
    col("covariate_id", Integer, "id of the covariate", pk=True),
    col("name", Text, "covariate name; its view is cov_<name>", null=False, unique=True),
    col("kind", Text, "cooccurrence | kg_degree | fact_degree | user", null=False),
    ref("dataset", "dataset it was computed for; NULL = all datasets"),
    col("view_name", Text, "cov_<name>", null=False),
    col(
        "key_columns",
        Text,
        "comma-separated readable keys of the view, e.g. dataset,relation,entity,answer",
        null=False,
    ),
    col("value_columns", Text, "comma-separated value columns of the view", null=False),
    col("source_path", Text, "input file(s) or folder(s) as given"),
    col(
        "source_sha256",
        Text,
        "sha256 of the input file; for several files, sha256 of their sorted sha256 list",
    ),
    col("description", Text, "free text (--description) or a default"),
    col("params_json", Text, "all options that define the values, as JSON", null=False),
    col("status", Text, "complete | partial (some corpus shards not counted yet)", null=False),
    col("n_rows", BigInteger, "rows in the source (user tables) or facts covered"),
    col("n_matched", BigInteger, "source rows that matched warehouse keys / facts with a value"),
    col("data_table", Text, "table holding the values (covdata_<name> for user tables)"),
    col("ctxprior_version", Text, "ctxprior version that wrote the row", null=False),
    col("added_at", DateTime, "when the covariate was first added (UTC)", null=False),
    col("updated_at", DateTime, "last change (UTC)", null=False),
    comment="Catalog of covariates (corpus co-occurrence, KG degree, user tables); one view cov_<name> each.",
)

cooccurrence_name = table(
    "cooccurrence_name",
    ref("covariate", pk=True),
    col("name_id", Integer, "index of the name within the covariate", pk=True),
    col(
        "name",
        Text,
        "normalized name: words joined by one space (punctuation removed, maybe lower-cased)",
        null=False,
    ),
    col("n_words", Integer, "words in the normalized name", null=False),
    comment="Distinct normalized entity / answer names searched in the corpus.",
)

cooccurrence_pair = table(
    "cooccurrence_pair",
    ref("covariate", pk=True),
    col("pair_id", Integer, "index of the pair within the covariate", pk=True),
    col("name_id_lo", Integer, "smaller name id of the unordered pair", null=False),
    col("name_id_hi", Integer, "larger (or equal) name id of the pair", null=False),
    comment="Distinct unordered (entity name, answer name) pairs whose co-occurrence is counted.",
)

cooccurrence_fact = table(
    "cooccurrence_fact",
    *refs("covariate", "fact", pk=True),
    col("entity_name_id", Integer, "NULL when the entity name has no words after normalization"),
    col("answer_name_id", Integer, "NULL when the fact has no answer or it has no words"),
    col("pair_id", Integer, "NULL when either name is NULL"),
    comment="Which names and pair each fact of the counted dataset(s) maps to.",
)

cooccurrence_shard = table(
    "cooccurrence_shard",
    ref("covariate", pk=True),
    col("shard_id", Integer, "id of the counted shard", pk=True),
    col("path", Text, "absolute path of the shard file", null=False),
    col("size_bytes", BigInteger, "file size when counted", null=False),
    col("mtime_ns", BigInteger, "file modification time when counted", null=False),
    col("sha256", Text, "sha256 of the file bytes", null=False),
    col("n_lines", BigInteger, "lines read", null=False),
    col("n_documents", BigInteger, "documents counted (JSON lines with text, or paragraphs)", null=False),
    col("n_words", BigInteger, "words after normalization", null=False),
    col("n_bad_json", BigInteger, "lines skipped: not JSON", null=False),
    col("n_missing_text", BigInteger, "lines skipped: JSON without a string text field", null=False),
    col("bad_examples", Text, "first few skipped lines, e.g. 'line 3: not JSON'"),
    col("seconds", Double, "wall time spent counting the shard"),
    col("worker", Text, "host:pid (or Ray node) that counted it"),
    col("finished_at", DateTime, "when the shard's counts were stored (UTC)", null=False),
    UniqueConstraint("covariate_id", "path"),
    comment="Corpus shards counted for a co-occurrence covariate (a rerun skips them).",
)

cooccurrence_pair_count = table(
    "cooccurrence_pair_count",
    ref("covariate", pk=True),
    col("shard_id", Integer, "shard (cooccurrence_shard) the count comes from", pk=True),
    col("pair_id", Integer, "pair (cooccurrence_pair)", pk=True),
    col("count", BigInteger, "co-occurrences within the window in this shard (non-zero only)", null=False),
    comment="Per-shard pair counts; the covariate's value is the sum over shards.",
)

cooccurrence_name_count = table(
    "cooccurrence_name_count",
    ref("covariate", pk=True),
    col("shard_id", Integer, "shard (cooccurrence_shard) the count comes from", pk=True),
    col("name_id", Integer, "name (cooccurrence_name)", pk=True),
    col("count", BigInteger, "occurrences of the name in this shard (non-zero only)", null=False),
    comment="Per-shard name frequencies.",
)

kg_degree = table(
    "kg_degree",
    ref("covariate", pk=True),
    col("entity_uri", Text, "entity URI as in the warehouse (entity.uri)", pk=True),
    col("relation_uri", Text, "predicate URI (no reverse- prefix: the degree is direction-free)", pk=True),
    col(
        "degree",
        BigInteger,
        "delta(e,q) = |{a:(e,q,a)} U {a:(a,q,e)}|: distinct neighbours of e along q, either direction",
        null=False,
    ),
    comment="Relation-dependent KG degree of warehouse entities (only entities whose URI is in the warehouse).",
)

kg_entity_degree = table(
    "kg_entity_degree",
    ref("covariate", pk=True),
    col("entity_uri", Text, "entity URI as in the warehouse (entity.uri)", pk=True),
    col("total_degree", BigInteger, "distinct triples with the entity as subject or object", null=False),
    col("n_relations", BigInteger, "distinct predicates on those triples", null=False),
    comment="Total KG degree of warehouse entities.",
)

closed_book_answer = table(
    "closed_book_answer",
    ref("run", "run whose model answered", pk=True),
    ref("query_form", "open query form of the run, asked with no context", pk=True),
    ref("fact", pk=True),
    ref("covariate", null=False),
    col("text", Text, "the model's greedy answer to the bare query (closed book)", null=False),
    col(
        "correct",
        Boolean,
        "a gold answer occurs in the answer's first line as whole words after SQuAD normalization "
        "(case folded, no punctuation, no a/an/the); gold = the fact's answer and its aliases",
        null=False,
    ),
    comment="Closed-book greedy answers of a run's model, judged against the gold answer "
    "(`covariates known`; the known / unknown split of Ferrando et al. 2025 is view stg_known_entity).",
)

closed_book_sample = table(
    "closed_book_sample",
    ref("run", "run whose model answered", pk=True),
    ref("relation", "the attribute's relation (an attribute: one entity's facts in one relation)", pk=True),
    ref("entity", "the attribute's entity", pk=True),
    col("sample", Integer, "0, 1, ... (--samples of them per attribute)", pk=True),
    ref(
        "query_form",
        "the open query form asked with no context: the relation's first one the run scored",
        null=False,
    ),
    ref(
        "covariate",
        "the `known` covariate whose params (rule, samples, temperature, seed, thresholds) made them",
        null=False,
    ),
    col("text", Text, "the sampled answer (closed book, cut at the stop rule)", null=False),
    col(
        "correct",
        Boolean,
        "a gold answer occurs in the answer's first line as whole words after SQuAD normalization; "
        "gold = the answers of the entity's facts in the relation and their aliases",
        null=False,
    ),
    comment="Closed-book answers sampled from a run's model, one row per sample (`covariates known "
    "--rule ctxprior-samples`; labels: views stg_known_attribute, stg_known_entity).",
)

closed_book_attribute = table(
    "closed_book_attribute",
    ref("run", "run whose model answered", pk=True),
    ref("relation", "the attribute's relation (an attribute: one entity's facts in one relation)", pk=True),
    ref("entity", "the attribute's entity", pk=True),
    ref(
        "query_form",
        "the open query form asked with no context: the relation's first one the run scored",
        null=False,
    ),
    ref(
        "covariate",
        "the `known` covariate whose params (rule, max_new_tokens, definition) made it",
        null=False,
    ),
    col("text", Text, "the greedy completion (closed book, cut at the stop rule)", null=False),
    col(
        "check_kind",
        Text,
        "the released code's check it was judged with: name (thefuzz token_set_ratio > 90, "
        "check_name_correctness) or number (within 2, number_match; every gold answer a number)",
        null=False,
    ),
    col(
        "label",
        Text,
        "correct (a gold answer passes the check), refusal (else, is_generation_refusal), error "
        "(else): get_label of Ferrando et al.'s code (javiferran/sae_entities)",
        null=False,
    ),
    comment="Closed-book greedy completions of a run's model, one per attribute, labelled as Ferrando "
    "et al.'s released code labels them (`covariates known --rule ferrando`, the default; entity "
    "labels: view stg_known_entity).",
)
