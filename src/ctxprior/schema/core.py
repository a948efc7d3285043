"""Core warehouse tables: datasets, relations, entities, answers, facts, templates, samples, runs.

Ids are assigned by ctxprior (not by sequences) so that they are stable: the same input file
ingested into an empty warehouse always gets the same ids.
"""

from sqlalchemy import BigInteger, Boolean, DateTime, Double, Integer, Text, UniqueConstraint

from .base import col, ref, refs, table

meta = table(
    "meta",
    col("key", Text, pk=True),
    col("value", Text, null=False),
    comment="Warehouse metadata: schema_version, created_by, created_at.",
)

dataset = table(
    "dataset",
    col("dataset_id", Integer, pk=True),
    col("name", Text, null=False, unique=True),
    col(
        "source_format",
        Text,
        "the format its loader read, set by the data source that ingested it (`ctxprior ingest "
        "--help` lists the sources); friend_enemy and gender mark the case-study collections",
        null=False,
    ),
    col("source_path", Text),
    col("source_sha256", Text),
    col("description", Text),
    col(
        "separator",
        Text,
        "what joins a context to the query in every prompt: context + separator + query "
        "(set at ingest; '' where the source's contexts end in their own newline, as yago-qec's; "
        "'' for datasets ingested before schema v3, as they were scored)",
        server_default="",
    ),
    col("ctxprior_version", Text, null=False),
    col("created_at", DateTime, null=False),
)

relation = table(
    "relation",
    col("relation_id", Integer, pk=True),
    ref("dataset", null=False),
    col(
        "name", Text, "relation id as in the source, e.g. http://schema.org/about or reverse-...", null=False
    ),
    col("short_name", Text, "readable name, e.g. about, reverse-founder", null=False),
    col("is_reverse", Boolean, null=False),
    col("position", Integer, "order in the source file", null=False),
    UniqueConstraint("dataset_id", "name"),
)

relation_class = table(
    "relation_class",
    ref("relation", pk=True),
    col("role", Text, "entity | answer", pk=True),
    col("class_name", Text, pk=True),
    col("fraction", Double, null=False),
    comment="Class fractions of a relation's entities / answers (yago_qec entity_types, answer_types).",
)

entity = table(
    "entity",
    col("entity_id", Integer, pk=True),
    ref("dataset", null=False),
    col("name", Text, null=False),
    col("kind", Text, "real | fake", null=False),
    col("uri", Text),
    col("entity_class", Text),
    UniqueConstraint("dataset_id", "name", "kind", "uri"),
)

answer = table(
    "answer",
    col("answer_id", Integer, pk=True),
    ref("dataset", null=False),
    col("name", Text, null=False),
    col("uri", Text),
    UniqueConstraint("dataset_id", "name", "uri"),
)

fact = table(
    "fact",
    col("fact_id", Integer, pk=True),
    ref("relation", null=False),
    col(
        "position",
        Integer,
        "index in the source lists; a fake shares it with the real entity whose answer it borrows",
        null=False,
    ),
    ref("entity", null=False),
    ref("answer", "NULL when the dataset has no answer (gender case study)"),
    col("entity_kind", Text, "real | fake (copied from entity for fast filtering)", null=False),
    col("label", Text, "optional label, e.g. friend | enemy"),
    col("category", Text, "optional category, e.g. movie | history"),
    col("uri_degree", BigInteger, "yago_qec entity_uri_to_degree"),
    col("namesake_degree", BigInteger, "yago_qec entity_namesake_to_degree"),
    col("namesake_num_uris", BigInteger, "yago_qec entity_namesake_to_num_uris"),
    col("predicate_degree", BigInteger, "yago_qec entity_uri_to_predicate_degree"),
    UniqueConstraint("relation_id", "entity_kind", "position"),
)

query_form = table(
    "query_form",
    col("query_form_id", Integer, pk=True),
    ref("relation", null=False),
    col("query_type", Text, "open | closed", null=False),
    col("ordinal", Integer, null=False),
    col("name", Text, "open_0, open_1, closed_0, ...", null=False),
    col("template", Text, "placeholders {entity} and (closed) {answer}", null=False),
    UniqueConstraint("relation_id", "query_type", "ordinal"),
)

context_template = table(
    "context_template",
    col("context_template_id", Integer, pk=True),
    ref("relation", null=False),
    col("context_type", Text, "base | assertive | negation | ...", null=False),
    col("ordinal", Integer, null=False),
    col("template", Text, null=False),
    UniqueConstraint("relation_id", "context_type", "ordinal"),
)

sample = table(
    "sample",
    col("sample_id", Integer, pk=True),
    ref("dataset", null=False),
    col(
        "design",
        Text,
        "how the sample was drawn: a design declared in ctxprior.sampling.draw.DESIGNS "
        "(`ctxprior sample --help` lists them)",
        null=False,
    ),
    col("seed", BigInteger, null=False),
    col("n_entities", Integer, "entities per relation"),
    col("n_contexts", Integer, "contexts per relation"),
    col("context_types", Text, "comma-separated, as requested", null=False),
    col("params_json", Text, "all sampling parameters as JSON", null=False),
    col("ctxprior_version", Text, null=False),
    col("created_at", DateTime, null=False),
)

sample_fact = table(
    "sample_fact",
    *refs("sample", "fact", pk=True),
    ref("relation", null=False),
    col("ordinal", Integer, "order of the entity within its relation in this sample", null=False),
    comment="The queried (entity, answer) facts of a sample.",
)

context = table(
    "context",
    col("context_id", BigInteger, pk=True),
    *refs("sample", "relation", null=False),
    col("ordinal", Integer, "position in the relation's context list", null=False),
    ref("context_template", null=False),
    col("context_type", Text, null=False),
    ref("entity", "entity the context mentions (NULL for fixed texts)"),
    ref("answer", "answer the context states"),
    col("text", Text, null=False),
    UniqueConstraint("sample_id", "relation_id", "ordinal"),
)

run = table(
    "run",
    col("run_id", Integer, pk=True),
    col("kind", Text, "persuasion | dynamic", null=False),
    *refs("sample", "dataset"),
    col("model", Text, "model id / alias / path as given", null=False),
    col("model_revision", Text, "hub commit, or sha256 of the weights file"),
    col("dtype", Text),
    col("quantization", Text, "none | 8bit | 4bit"),
    col("device", Text),
    col(
        "estimator",
        Text,
        "how the answer distribution was read: an estimator registered in "
        "ctxprior.scoring.estimators (the card says what each run's estimator is)",
        null=False,
    ),
    col("batch_size", Integer),
    col("seed", BigInteger),
    col("config_json", Text, "every option of the run as JSON", null=False),
    col("ctxprior_version", Text, null=False),
    col("host", Text),
    col("pid", Integer),
    col("status", Text, "running | done | failed | cancelled", null=False),
    col("error", Text),
    col("units_total", Integer),
    col("units_done", Integer),
    col("prompts_done", BigInteger),
    col("started_at", DateTime, null=False),
    col("ended_at", DateTime),
)
