"""Score tables written by scoring runs (persuasion, susceptibility, top-k, generations).

Keys: a score row points to its run and to the (query form, fact[, context]) it scores. A fact is
an (entity, answer) pair of a relation; the prompt of a closed query form uses the fact's answer.
Rows are written per work unit, together with the unit's `run_unit` row, in one transaction, so a
resumed run skips finished units and never writes a row twice.
"""

from sqlalchemy import BigInteger, Boolean, Column, DateTime, Double, ForeignKey, Integer, Table, Text

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

_A = "(first-token: a token id; answer-set: an index into the query's candidate answers)"

reliance = Table(
    "reliance",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False),
    Column("query_form_id", Integer, ForeignKey("query_form.query_form_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column("context_id", BigInteger, ForeignKey("context.context_id"), nullable=False),
    Column(
        "shift",
        Double,
        nullable=False,
        comment="KL(p(A|c,q(e)) || p(A|q(e)) of the no-context prompt) in nats: the shift the context "
        "causes against the prompt without context (inseq's contrastive KL; DRUID); not psi, whose "
        "reference is the mixture over the contexts",
    ),
    Column(
        "jsd",
        Double,
        nullable=False,
        comment="Jensen-Shannon divergence between p(A|c,q(e)) and the no-context p(A|q(e)), nats, "
        "0..ln 2 (AdaCAD's degree of conflict)",
    ),
    Column(
        "confidence_gain",
        Double,
        comment="CK-PLUG's Confidence Gain H(p~(A|q(e))) - H(p~(A|c,q(e))) in nats, both restricted to "
        "the tokens plausible in either (p >= 1% of the top token's, or among the top 10) and "
        "renormalized (negative: the context makes the model less sure, a sign of conflict); NULL in "
        "rows written before schema v3",
    ),
    Column(
        "confidence_gain_vocab",
        Double,
        comment="H(no-context p(A|q(e))) - H(p(A|c,q(e))) in nats over the whole answer space "
        "(the confidence gain without CK-PLUG's filter; schema v2's confidence_gain)",
    ),
    Column("p_context_answer", Double, comment="p(the answer this context supports | c, q(e)); NULL: none"),
    Column("p_gold_answer", Double, comment="p(the fact's gold answer | c, q(e)); NULL: none"),
    Column(
        "p_prior_answer",
        Double,
        nullable=False,
        comment="p(the prior's answer | c, q(e)), the prior's answer = the argmax of the no-context p(A|q(e))",
    ),
    Column(
        "scaled_difference",
        Double,
        comment="DRUID's scaled probability difference of the context's answer, -1..1: "
        "(p_c - p_0)/(1 - p_0) when the context raises it, (p_c - p_0)/p_0 when it lowers it; NULL: none",
    ),
    Column(
        "scaled_difference_memory",
        Double,
        comment="the same scaled difference for the model's own no-context answer (the argmax of the "
        "no-context p(A|q(e))): CUB's CCU of an irrelevant context (v_reliance.ccu); NULL in rows "
        "written before schema v3",
    ),
    Column("answer_top", Integer, nullable=False, comment="argmax of p(A|c,q(e)) " + _A),
    Column("answer_prior", Integer, nullable=False, comment="argmax of the no-context p(A|q(e)) " + _A),
    Column("answer_context", Integer, comment="the answer this context supports " + _A + "; NULL: none"),
    Column("answer_gold", Integer, comment="the fact's gold answer " + _A + "; NULL: none"),
    Column(
        "outcome",
        Text,
        comment="ORIGINAL (the gold answer; wins when the context supports it too) | CONTEXT "
        "(the context's answer) | OTHER (Longpre et al. 2021; ConR / MemR count these), from the "
        "argmax answer or, where the estimator cannot tell the two apart, the full answers "
        "(outcome_source); NULL: undecided",
    ),
    Column(
        "outcome_source",
        Text,
        comment="what decided the outcome: argmax (the estimator's most probable answer) | "
        "full-answer (a collision: the gold and the context's answer compared by their full-answer "
        "sequence probabilities after the prompt)",
    ),
    Column(
        "collision",
        Boolean,
        comment="the gold answer and the context's answer differ but the estimator reads them as one "
        "answer (first-token: they share their first token, e.g. ' 1977' / ' 1967'); NULL: the "
        "context supports no answer, or the row was written before schema v3",
    ),
    Column(
        "keeps_prior",
        Boolean,
        nullable=False,
        comment="the argmax with context equals the argmax without (ClashEval: the model keeps its prior answer)",
    ),
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
    Column("label", Text, nullable=False, comment="ORIGINAL | CONTEXT | OTHER (memorization ratio)"),
    comment="Greedy generations per prompt (--memorization), labelled against the fact's and the context's answers.",
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
