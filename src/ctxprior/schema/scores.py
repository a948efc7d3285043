"""Score tables written by scoring runs (persuasion, susceptibility, top-k, generations).

Keys: a score row points to its run and to the (query form, fact[, context]) it scores. A fact is
an (entity, answer) pair of a relation; the prompt of a closed query form uses the fact's answer.
Rows are written per work unit, together with the unit's `run_unit` row, in one transaction, so a
resumed run skips finished units and never writes a row twice.
"""

from sqlalchemy import BigInteger, Column, DateTime, Double, ForeignKey, Integer, Table, Text

from ..measures import RELIANCE_MEASURES
from .base import metadata

run_unit = Table(
    "run_unit",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("unit_id", Integer, primary_key=True, comment="stable index of the unit within the run"),
    Column("relation_id", Integer, ForeignKey("relation.relation_id")),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id")),
    Column("shard", Integer, comment="entity shard within (relation, query form)"),
    Column("status", Text, nullable=False, comment="done | failed"),
    Column("n_prompts", BigInteger),
    Column("attempts", Integer),
    Column("worker", Text, comment="host:pid of the process that computed the unit"),
    Column("error", Text),
    Column("seconds", Double),
    Column("finished_at", DateTime),
    comment="Work units of a run that finished (done) or failed; a resumed run redoes the rest.",
)

run_unit_engine = Table(
    "run_unit_engine",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("unit_id", Integer, primary_key=True, comment="the unit (run_unit.unit_id)"),
    Column("device", Text, comment="device the unit ran on (cpu, cuda:0, ...)"),
    Column(
        "batch_size", Integer, comment="rows per forward pass when the unit finished (halved by each split)"
    ),
    Column("oom_splits", Integer, comment="batches split in two after a CUDA out-of-memory error"),
    Column("forward_calls", Integer, comment="forward passes of the model for the unit"),
    Column("tokens", BigInteger, comment="tokens that went through the model (prefixes once, then suffixes)"),
    Column(
        "prefix_reuse",
        Text,
        comment="shared (the prefix KV cache is reused: exact for this family), off, "
        "or why the unit ran full prompts (docs/architectures.md)",
    ),
    Column(
        "head",
        Text,
        comment="engine (the engine applied the output head to the last positions only) or model "
        "(the head could not be reproduced, so the model's own logits were used: slower)",
    ),
    comment="How the engine computed each unit (batch size, out-of-memory splits, forward passes); "
    "one row per attempt's final state, written with the unit's run_unit row.",
)

persuasion = Table(
    "persuasion",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    Column(
        "persuasion",
        Double,
        nullable=False,
        comment="psi(c, q(e)) = KL(p(A|c,q(e)) || p(A|q(e))) in nats, p(A|q(e)) the mixture over the sample's contexts",
    ),
    Column("entropy", Double, nullable=False, comment="H(p(A|c,q(e))) in nats"),
    comment="Per-context persuasion scores.",
)

reliance = Table(
    "reliance",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    *(m.column() for m in RELIANCE_MEASURES),  # each measure declared once: measures.py
    comment="Per-context reliance measures against the no-context prompt, from the same distributions "
    "as persuasion, in the same pass (written with it); see docs/concepts.md#reliance-against-the-no-context-prompt.",
)


susceptibility = Table(
    "susceptibility",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column(
        "susceptibility",
        Double,
        nullable=False,
        comment="chi(q(e)) = I(C; A | q(e)) = mean_c psi(c, q(e)) in nats",
    ),
    Column("mixture_entropy", Double, nullable=False, comment="H(p(A|q(e))) of the context mixture, nats"),
    Column("mean_conditional_entropy", Double, nullable=False, comment="mean_c H(p(A|c,q(e))), nats"),
    Column("n_contexts", Integer, nullable=False),
    Column(
        "prior_entropy",
        Double,
        comment="entropy of the no-context answer distribution p(A|q(e)) without any context, nats",
    ),
    Column("prior_kl", Double, comment="KL(mixture || no-context distribution), nats"),
    comment="Per-(query form, fact) susceptibility scores.",
)

prior_topk = Table(
    "prior_topk",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("rank", Integer, primary_key=True, comment="1 = most probable"),
    Column("token_id", Integer, nullable=False),
    Column("token", Text, nullable=False, comment="decoded token (or answer string for answer-set runs)"),
    Column("prob", Double, nullable=False),
    comment="Top-k answers of the no-context prompt q(e).",
)

prompt_topk = Table(
    "prompt_topk",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    Column("rank", Integer, nullable=False),
    Column("token_id", Integer, nullable=False),
    Column("token", Text, nullable=False),
    Column("prob", Double, nullable=False),
    comment="Optional (--store-topk K): top-k answers per (context, query) prompt.",
)

generation = Table(
    "generation",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    Column("text", Text, nullable=False, comment="greedy generation after the prompt"),
    Column(
        "label",
        Text,
        nullable=False,
        comment="ORIGINAL | CONTEXT | OTHER | UNDECIDED (both answers), by the run's --outcome-rule "
        "(reliance.outcome_source; prefix for --outcome-rule none --memorization)",
    ),
    comment="One greedy generation per prompt (every run unless --outcome-rule none), labelled against "
    "the fact's and the context's answers: reliance.outcome and v_memorization read these labels.",
)

susceptibility_layer = Table(
    "susceptibility_layer",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column(
        "layer",
        Integer,
        primary_key=True,
        comment="0 = the embeddings, l = after block l; the last layer is the model's output",
    ),
    Column(
        "susceptibility",
        Double,
        nullable=False,
        comment="chi(q(e)) read through the logit lens at this layer, nats (the last layer equals susceptibility.susceptibility)",
    ),
    Column(
        "mixture_entropy",
        Double,
        nullable=False,
        comment="H of the lens's context mixture at this layer, nats",
    ),
    Column(
        "mean_conditional_entropy",
        Double,
        nullable=False,
        comment="mean_c H(lens p(A|c,q(e))) at this layer, nats",
    ),
    comment="Optional (--per-layer): susceptibility per layer, a logit-lens approximation (final norm and "
    "output head applied to the residual stream at the last position).",
)

persuasion_layer = Table(
    "persuasion_layer",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    Column("layer", Integer, nullable=False, comment="0 = the embeddings, l = after block l"),
    Column(
        "persuasion",
        Double,
        nullable=False,
        comment="psi(c, q(e)) read through the logit lens at this layer, nats",
    ),
    comment="Optional (--per-layer psi): persuasion per context and layer (logit lens); "
    "layers x the persuasion table's rows.",
    info={"heavy": True},
)
