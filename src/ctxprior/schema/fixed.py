"""Fixed-context datasets (``ctxprior ingest table --shape contexts`` and its presets): what the
core tables lack.

Core mapping (as DynamicQA's disputable partition): each item gets its own relation (name
``item:<key>``), its question as that relation's query forms, one fact (entity = the item's entity,
or its question when the table names none; answer = the gold answer) and its passages as fixed
context templates (``context_type`` = the mapped type). The persuasion scorer pairs each sampled
fact with every context of its relation, so an item is scored against exactly its own passages:
ψ is the KL to the mixture over the item's contexts and χ the MI over them.
"""

from sqlalchemy import Integer, Text

from .base import col, ref, refs, table

fixed_item = table(
    "fixed_item",
    ref("fact", "the item's fact", pk=True),
    *refs("dataset", "relation", null=False),
    col(
        "item_key",
        Text,
        "the item's key in the source (its id column, else its 1-based row number); unique per dataset",
        null=False,
    ),
    col("source_row", Integer, "1-based data row of the item in the source", null=False),
    col("question", Text, "the question as in the source", null=False),
    col(
        "gold_answer_id",
        Integer,
        "the item's gold answer (also fact.answer_id)",
        null=False,
        fk="answer.answer_id",
    ),
    comment="One row per item of a fixed-context dataset (ctxprior ingest table --shape contexts).",
)

fixed_context = table(
    "fixed_context",
    ref("context_template", "the passage as a fixed context template of the item's relation", pk=True),
    ref("fact", "the item", null=False),
    ref("dataset", null=False),
    col("ordinal", Integer, "order of the passage within its item", null=False),
    col("label", Text, "the passage's label as in the source (or its column)", null=False),
    col(
        "context_type",
        Text,
        "the type the mapping gives the label, e.g. gold | conflicting | irrelevant",
        null=False,
    ),
    ref("answer", "the answer the passage supports (NULL when the source gives none, e.g. irrelevant)"),
    col("source_row", Integer, "1-based data row the passage came from", null=False),
    col("text", Text, "the passage as in the source", null=False),
    comment="One row per context passage of a fixed-context item, with its label and supported answer.",
)
