"""Core warehouse tables: datasets, relations, entities, answers, facts, templates, samples, runs.

Ids are assigned by ctxprior (not by sequences) so that they are stable: the same input file
ingested into an empty warehouse always gets the same ids.
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

meta = Table(
    "meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
    comment="Warehouse metadata: schema_version, created_by, created_at.",
)

dataset = Table(
    "dataset",
    metadata,
    Column("dataset_id", Integer, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column(
        "source_format",
        Text,
        nullable=False,
        comment="the format its loader read, set by the data source that ingested it (`ctxprior ingest "
        "--help` lists the sources); friend_enemy and gender mark the case-study collections",
    ),
    Column("source_path", Text),
    Column("source_sha256", Text),
    Column("description", Text),
    Column(
        "separator",
        Text,
        server_default="",
        comment="what joins a context to the query in every prompt: context + separator + query "
        "(set at ingest; '' where the source's contexts end in their own newline, as yago-qec's; "
        "'' for datasets ingested before schema v3, as they were scored)",
    ),
    Column("ctxprior_version", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
)

relation = Table(
    "relation",
    metadata,
    Column("relation_id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column(
        "name",
        Text,
        nullable=False,
        comment="relation id as in the source, e.g. http://schema.org/about or reverse-...",
    ),
    Column("short_name", Text, nullable=False, comment="readable name, e.g. about, reverse-founder"),
    Column("is_reverse", Boolean, nullable=False),
    Column("position", Integer, nullable=False, comment="order in the source file"),
    UniqueConstraint("dataset_id", "name"),
)

relation_class = Table(
    "relation_class",
    metadata,
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), primary_key=True),
    Column("role", Text, primary_key=True, comment="entity | answer"),
    Column("class_name", Text, primary_key=True),
    Column("fraction", Double, nullable=False),
    comment="Class fractions of a relation's entities / answers (yago_qec entity_types, answer_types).",
)

entity = Table(
    "entity",
    metadata,
    Column("entity_id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("kind", Text, nullable=False, comment="real | fake"),
    Column("uri", Text),
    Column("entity_class", Text),
    UniqueConstraint("dataset_id", "name", "kind", "uri"),
)

answer = Table(
    "answer",
    metadata,
    Column("answer_id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("uri", Text),
    UniqueConstraint("dataset_id", "name", "uri"),
)

fact = Table(
    "fact",
    metadata,
    Column("fact_id", Integer, primary_key=True),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column(
        "position",
        Integer,
        nullable=False,
        comment="index in the source lists; a fake shares it with the real entity whose answer it borrows",
    ),
    Column("entity_id", Integer, ForeignKey("entity.entity_id"), nullable=False),
    Column(
        "answer_id",
        Integer,
        ForeignKey("answer.answer_id"),
        comment="NULL when the dataset has no answer (gender case study)",
    ),
    Column(
        "entity_kind", Text, nullable=False, comment="real | fake (copied from entity for fast filtering)"
    ),
    Column("label", Text, comment="optional label, e.g. friend | enemy"),
    Column("category", Text, comment="optional category, e.g. movie | history"),
    Column("uri_degree", BigInteger, comment="yago_qec entity_uri_to_degree"),
    Column("namesake_degree", BigInteger, comment="yago_qec entity_namesake_to_degree"),
    Column("namesake_num_uris", BigInteger, comment="yago_qec entity_namesake_to_num_uris"),
    Column("predicate_degree", BigInteger, comment="yago_qec entity_uri_to_predicate_degree"),
    UniqueConstraint("relation_id", "entity_kind", "position"),
)

query_form = Table(
    "query_form",
    metadata,
    Column("query_form_id", Integer, primary_key=True),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column("query_type", Text, nullable=False, comment="open | closed"),
    Column("ordinal", Integer, nullable=False),
    Column("name", Text, nullable=False, comment="open_0, open_1, closed_0, ..."),
    Column("template", Text, nullable=False, comment="placeholders {entity} and (closed) {answer}"),
    UniqueConstraint("relation_id", "query_type", "ordinal"),
)

context_template = Table(
    "context_template",
    metadata,
    Column("context_template_id", Integer, primary_key=True),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column("context_type", Text, nullable=False, comment="base | assertive | negation | ..."),
    Column("ordinal", Integer, nullable=False),
    Column("template", Text, nullable=False),
    UniqueConstraint("relation_id", "context_type", "ordinal"),
)

sample = Table(
    "sample",
    metadata,
    Column("sample_id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column(
        "design",
        Text,
        nullable=False,
        comment="how the sample was drawn: a design declared in ctxprior.sampling.draw.DESIGNS "
        "(`ctxprior sample --help` lists them)",
    ),
    Column("seed", BigInteger, nullable=False),
    Column("n_entities", Integer, comment="entities per relation"),
    Column("n_contexts", Integer, comment="contexts per relation"),
    Column("context_types", Text, nullable=False, comment="comma-separated, as requested"),
    Column("params_json", Text, nullable=False, comment="all sampling parameters as JSON"),
    Column("ctxprior_version", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
)

sample_fact = Table(
    "sample_fact",
    metadata,
    Column("sample_id", Integer, ForeignKey("sample.sample_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column(
        "ordinal", Integer, nullable=False, comment="order of the entity within its relation in this sample"
    ),
    comment="The queried (entity, answer) facts of a sample.",
)

context = Table(
    "context",
    metadata,
    Column("context_id", BigInteger, primary_key=True),
    Column("sample_id", Integer, ForeignKey("sample.sample_id"), nullable=False),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column("ordinal", Integer, nullable=False, comment="position in the relation's context list"),
    Column(
        "context_template_id", Integer, ForeignKey("context_template.context_template_id"), nullable=False
    ),
    Column("context_type", Text, nullable=False),
    Column(
        "entity_id",
        Integer,
        ForeignKey("entity.entity_id"),
        comment="entity the context mentions (NULL for fixed texts)",
    ),
    Column("answer_id", Integer, ForeignKey("answer.answer_id"), comment="answer the context states"),
    Column("text", Text, nullable=False),
    UniqueConstraint("sample_id", "relation_id", "ordinal"),
)

run = Table(
    "run",
    metadata,
    Column("run_id", Integer, primary_key=True),
    Column("kind", Text, nullable=False, comment="persuasion | dynamic"),
    Column("sample_id", Integer, ForeignKey("sample.sample_id")),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id")),
    Column("model", Text, nullable=False, comment="model id / alias / path as given"),
    Column("model_revision", Text, comment="hub commit, or sha256 of the weights file"),
    Column("dtype", Text),
    Column("quantization", Text, comment="none | 8bit | 4bit"),
    Column("device", Text),
    Column(
        "estimator",
        Text,
        nullable=False,
        comment="how the answer distribution was read: an estimator registered in "
        "ctxprior.scoring.estimators (the card says what each run's estimator is)",
    ),
    Column("batch_size", Integer),
    Column("seed", BigInteger),
    Column("config_json", Text, nullable=False, comment="every option of the run as JSON"),
    Column("ctxprior_version", Text, nullable=False),
    Column("host", Text),
    Column("pid", Integer),
    Column("status", Text, nullable=False, comment="running | done | failed | cancelled"),
    Column("error", Text),
    Column("units_total", Integer),
    Column("units_done", Integer),
    Column("prompts_done", BigInteger),
    Column("started_at", DateTime, nullable=False),
    Column("ended_at", DateTime),
)
