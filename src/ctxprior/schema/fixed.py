"""Fixed-context datasets (``ctxprior ingest table --shape contexts`` and its presets): what the
core tables lack.

Core mapping (as DynamicQA's disputable partition): each item gets its own relation (name
``item:<key>``), its question as that relation's query forms, one fact (entity = the item's entity,
or its question when the table names none; answer = the gold answer) and its passages as fixed
context templates (``context_type`` = the mapped type). The persuasion scorer pairs each sampled
fact with every context of its relation, so an item is scored against exactly its own passages:
ψ is the KL to the mixture over the item's contexts and χ the MI over them.
"""

from sqlalchemy import Column, ForeignKey, Integer, Table, Text

from .base import metadata

fixed_item = Table(
    "fixed_item",
    metadata,
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True, comment="the item's fact"),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), nullable=False),
    Column(
        "item_key",
        Text,
        nullable=False,
        comment="the item's key in the source (its id column, else its 1-based row number); unique per dataset",
    ),
    Column("source_row", Integer, nullable=False, comment="1-based data row of the item in the source"),
    Column("question", Text, nullable=False, comment="the question as in the source"),
    Column(
        "gold_answer_id",
        Integer,
        ForeignKey("answer.answer_id"),
        nullable=False,
        comment="the item's gold answer (also fact.answer_id)",
    ),
    comment="One row per item of a fixed-context dataset (ctxprior ingest table --shape contexts).",
)

fixed_context = Table(
    "fixed_context",
    metadata,
    Column(
        "context_template_id",
        Integer,
        ForeignKey("context_template.context_template_id"),
        primary_key=True,
        comment="the passage as a fixed context template of the item's relation",
    ),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False, comment="the item"),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("ordinal", Integer, nullable=False, comment="order of the passage within its item"),
    Column("label", Text, nullable=False, comment="the passage's label as in the source (or its column)"),
    Column(
        "context_type",
        Text,
        nullable=False,
        comment="the type the mapping gives the label, e.g. gold | conflicting | irrelevant",
    ),
    Column(
        "answer_id",
        Integer,
        ForeignKey("answer.answer_id"),
        comment="the answer the passage supports (NULL when the source gives none, e.g. irrelevant)",
    ),
    Column("source_row", Integer, nullable=False, comment="1-based data row the passage came from"),
    Column("text", Text, nullable=False, comment="the passage as in the source"),
    comment="One row per context passage of a fixed-context item, with its label and supported answer.",
)
