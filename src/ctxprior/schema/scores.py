"""Score tables written by scoring runs (persuasion, susceptibility, top-k, generations).

Keys: a score row points to its run and to the (query form, fact[, context]) it scores. A fact is
an (entity, answer) pair of a relation; the prompt of a closed query form uses the fact's answer.
Rows are written per work unit, together with the unit's `run_unit` row, in one transaction, so a
resumed run skips finished units and never writes a row twice.
"""

from sqlalchemy import BigInteger, DateTime, Double, Integer, Text

from ..measures import RELIANCE_MEASURES
from .base import col, ref, refs, table

run_unit = table(
    "run_unit",
    ref("run", pk=True),
    col("unit_id", Integer, "stable index of the unit within the run", pk=True),
    *refs("relation", "query_form"),
    col("shard", Integer, "entity shard within (relation, query form)"),
    col("status", Text, "done | failed", null=False),
    col("n_prompts", BigInteger),
    col("attempts", Integer),
    col("worker", Text, "host:pid of the process that computed the unit"),
    col("error", Text),
    col("seconds", Double),
    col("finished_at", DateTime),
    comment="Work units of a run that finished (done) or failed; a resumed run redoes the rest.",
)

run_unit_engine = table(
    "run_unit_engine",
    ref("run", pk=True),
    col("unit_id", Integer, "the unit (run_unit.unit_id)", pk=True),
    col("device", Text, "device the unit ran on (cpu, cuda:0, ...)"),
    col("batch_size", Integer, "rows per forward pass when the unit finished (halved by each split)"),
    col("oom_splits", Integer, "batches split in two after a CUDA out-of-memory error"),
    col("forward_calls", Integer, "forward passes of the model for the unit"),
    col("tokens", BigInteger, "tokens that went through the model (prefixes once, then suffixes)"),
    col(
        "prefix_reuse",
        Text,
        "shared (the prefix KV cache is reused: exact for this family), off, "
        "or why the unit ran full prompts (docs/architectures.md)",
    ),
    col(
        "head",
        Text,
        "engine (the engine applied the output head to the last positions only) or model "
        "(the head could not be reproduced, so the model's own logits were used: slower)",
    ),
    comment="How the engine computed each unit (batch size, out-of-memory splits, forward passes); "
    "one row per attempt's final state, written with the unit's run_unit row.",
)

persuasion = table(
    "persuasion",
    *refs("run", "query_form", "fact", "context", null=False),
    col(
        "persuasion",
        Double,
        "psi(c, q(e)) = KL(p(A|c,q(e)) || p(A|q(e))) in nats, p(A|q(e)) the mixture over the sample's contexts",
        null=False,
    ),
    col("entropy", Double, "H(p(A|c,q(e))) in nats", null=False),
    comment="Per-context persuasion scores.",
)

reliance = table(
    "reliance",
    *refs("run", "query_form", "fact", "context", null=False),
    *(m.column() for m in RELIANCE_MEASURES),  # each measure declared once: measures.py
    comment="Per-context reliance measures against the no-context prompt, from the same distributions "
    "as persuasion, in the same pass (written with it); see docs/concepts.md#reliance-against-the-no-context-prompt.",
)


susceptibility = table(
    "susceptibility",
    *refs("run", "query_form", "fact", pk=True),
    col("susceptibility", Double, "chi(q(e)) = I(C; A | q(e)) = mean_c psi(c, q(e)) in nats", null=False),
    col("mixture_entropy", Double, "H(p(A|q(e))) of the context mixture, nats", null=False),
    col("mean_conditional_entropy", Double, "mean_c H(p(A|c,q(e))), nats", null=False),
    col("n_contexts", Integer, null=False),
    col(
        "prior_entropy",
        Double,
        "entropy of the no-context answer distribution p(A|q(e)) without any context, nats",
    ),
    col("prior_kl", Double, "KL(mixture || no-context distribution), nats"),
    comment="Per-(query form, fact) susceptibility scores.",
)

prior_topk = table(
    "prior_topk",
    *refs("run", "query_form", "fact", pk=True),
    col("rank", Integer, "1 = most probable", pk=True),
    col("token_id", Integer, null=False),
    col("token", Text, "decoded token (or answer string for answer-set runs)", null=False),
    col("prob", Double, null=False),
    comment="Top-k answers of the no-context prompt q(e).",
)

prompt_topk = table(
    "prompt_topk",
    *refs("run", "query_form", "fact", "context", null=False),
    col("rank", Integer, null=False),
    col("token_id", Integer, null=False),
    col("token", Text, null=False),
    col("prob", Double, null=False),
    comment="Optional (--store-topk K): top-k answers per (context, query) prompt.",
)

generation = table(
    "generation",
    *refs("run", "query_form", "fact", "context", null=False),
    col("text", Text, "greedy generation after the prompt", null=False),
    col(
        "label",
        Text,
        "ORIGINAL | CONTEXT | OTHER | UNDECIDED (both answers), by the run's --outcome-rule "
        "(reliance.outcome_source; prefix for --outcome-rule none --memorization)",
        null=False,
    ),
    comment="One greedy generation per prompt (every run unless --outcome-rule none), labelled against "
    "the fact's and the context's answers: reliance.outcome and v_memorization read these labels.",
)

susceptibility_layer = table(
    "susceptibility_layer",
    *refs("run", "query_form", "fact", pk=True),
    col(
        "layer",
        Integer,
        "0 = the embeddings, l = after block l; the last layer is the model's output",
        pk=True,
    ),
    col(
        "susceptibility",
        Double,
        "chi(q(e)) read through the logit lens at this layer, nats (the last layer equals susceptibility.susceptibility)",
        null=False,
    ),
    col("mixture_entropy", Double, "H of the lens's context mixture at this layer, nats", null=False),
    col("mean_conditional_entropy", Double, "mean_c H(lens p(A|c,q(e))) at this layer, nats", null=False),
    comment="Optional (--per-layer): susceptibility per layer, a logit-lens approximation (final norm and "
    "output head applied to the residual stream at the last position).",
)

persuasion_layer = table(
    "persuasion_layer",
    *refs("run", "query_form", "fact", "context", null=False),
    col("layer", Integer, "0 = the embeddings, l = after block l", null=False),
    col("persuasion", Double, "psi(c, q(e)) read through the logit lens at this layer, nats", null=False),
    comment="Optional (--per-layer psi): persuasion per context and layer (logit lens); "
    "layers x the persuasion table's rows.",
    info={"heavy": True},
)
