"""DynamicQA tables (Marjanović et al. 2024): what the core tables lack, and the dynamic runs.

Core rows (dataset, relation, entity, answer, fact, query_form, context_template) hold the
shared part of a DynamicQA fact. Mapping (see docs/readme/dynamicqa.md):
- static / temporal: one relation per PopQA property (name = Wikidata PID, short_name = label),
  shared by both partitions; the question is templated per relation (query form open_0).
- disputable: questions are free-form, so each disputable fact gets its own relation
  (name ``disputable:<id>``) with its own query forms.
- subject -> entity (kind 'real', uri = Wikidata QID or NULL), obj -> answer, replace_name ->
  answer (the counter-memory answer, ``dynamicqa_fact.counter_answer_id``).

Dynamic runs (``ctxprior score-dynamic``) write ``dynamicqa_generation`` (one row per sampled or
greedy answer), ``dynamicqa_token_dist`` (sparse top-k of each sample's mean token distribution),
``dynamicqa_score`` (per run, fact, condition) and ``dynamicqa_fact_done`` (the resume marker),
all for one fact in one transaction.
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

dynamicqa_fact = Table(
    "dynamicqa_fact",
    metadata,
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("partition", Text, nullable=False, comment="static | temporal | disputable"),
    Column(
        "source_id",
        BigInteger,
        nullable=False,
        comment="`id` column of the CSV (PopQA id for static/temporal); unique per partition",
    ),
    Column("source_row", Integer, nullable=False, comment="0-based data row in the CSV file"),
    Column(
        "source_index",
        BigInteger,
        comment="the stray unnamed first CSV column (a pandas index; not unique in the disputable file)",
    ),
    Column("relation_label", Text, comment="PopQA property label, e.g. occupation (NULL for disputable)"),
    Column("relation_qid", Text, comment="Wikidata property id, e.g. P106 (NULL for disputable)"),
    Column("subject_qid", Text, comment="Wikidata QID of the subject (NULL for disputable)"),
    Column("object_qid", Text, comment="Wikidata QID of the object (NULL for disputable)"),
    Column(
        "counter_answer_id",
        Integer,
        ForeignKey("answer.answer_id"),
        nullable=False,
        comment="replace_name: the counter-memory substitute object (disputable: the competing value)",
    ),
    Column(
        "num_edits",
        Double,
        nullable=False,
        comment="temporality (static/temporal) or disputability (disputable) proxy",
    ),
    Column("s_pop", Double, comment="subject popularity (PopQA monthly page views)"),
    Column("o_pop", Double, comment="object popularity (NULL for disputable)"),
    Column("s_pop_new", Double, comment="re-fetched subject popularity; blank in the CSV -> NULL"),
    Column("o_pop_new", Double, comment="popularity of the replacement object; blank in the CSV -> NULL"),
    Column(
        "replace_quality", Double, comment="similarity of obj and replace_name from the substitution step"
    ),
    Column("dir_info", Text, comment="disputable crawl path ./result/<title>-<n>/<revision>; blank -> NULL"),
    Column("question", Text, nullable=False, comment="the question as in the CSV"),
    Column(
        "context",
        Text,
        nullable=False,
        comment="the context as in the CSV (static/temporal: answer masked as [ENTITY])",
    ),
    Column(
        "context_template",
        Text,
        nullable=False,
        comment="context with each answer mention replaced by {answer} (braces in the text doubled); disputable: prefixed 'This article is about <subj>. '",
    ),
    Column(
        "mask_count",
        Integer,
        nullable=False,
        comment="number of answer mentions replaced ([ENTITY] masks, or obj occurrences)",
    ),
    Column(
        "mask_kind",
        Text,
        nullable=False,
        comment="entity_token | word_boundary | substring (how the answer was located)",
    ),
    UniqueConstraint("dataset_id", "partition", "source_id"),
    comment="DynamicQA columns the core fact table lacks; one row per fact, keyed on (partition, id).",
)

dynamicqa_alias = Table(
    "dynamicqa_alias",
    metadata,
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column(
        "ordinal", Integer, primary_key=True, comment="position in possible_answers (disputable: 0 = obj)"
    ),
    Column("alias", Text, nullable=False),
    comment="Gold answer aliases (possible_answers; disputable: obj only), one row per alias.",
)

dynamicqa_context = Table(
    "dynamicqa_context",
    metadata,
    Column("context_id", BigInteger, ForeignKey("context.context_id"), primary_key=True),
    Column("sample_id", Integer, ForeignKey("sample.sample_id"), nullable=False),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), nullable=False),
    Column(
        "condition",
        Text,
        nullable=False,
        comment="original (filled with obj) | counter (filled with replace_name)",
    ),
    UniqueConstraint("sample_id", "fact_id", "condition"),
    comment="Which DynamicQA fact and condition each context of a DynamicQA sample belongs to.",
)

dynamicqa_calibration = Table(
    "dynamicqa_calibration",
    metadata,
    Column("calibration_id", Integer, primary_key=True),
    Column("dataset_id", Integer, ForeignKey("dataset.dataset_id"), nullable=False),
    Column("encoder", Text, nullable=False, comment="embedding model alias/path"),
    Column("encoder_revision", Text),
    Column("method", Text, nullable=False, comment="how pairs were built and the threshold chosen"),
    Column("n_pos", Integer, nullable=False, comment="positive pairs: two aliases of the same gold object"),
    Column("n_neg", Integer, nullable=False, comment="negative pairs: obj vs replace_name of the same fact"),
    Column(
        "threshold",
        Double,
        nullable=False,
        comment="cosine threshold maximizing balanced accuracy (fit half)",
    ),
    Column("balanced_accuracy_fit", Double, nullable=False),
    Column("balanced_accuracy_heldout", Double, nullable=False),
    Column("tpr_heldout", Double, nullable=False),
    Column("tnr_heldout", Double, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("created_at", DateTime, nullable=False),
    comment="Cosine-similarity thresholds for embedding equivalence, calibrated on real DynamicQA pairs.",
)

dynamicqa_generation = Table(
    "dynamicqa_generation",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("condition", Text, primary_key=True, comment="none (question alone) | original | counter"),
    Column("sample_index", Integer, primary_key=True, comment="0..N-1 sampled; -1 = the greedy answer"),
    Column(
        "text",
        Text,
        nullable=False,
        comment="answer text (generation cut at the first newline / end of turn), stripped",
    ),
    Column("raw_text", Text, nullable=False, comment="the full decoded generation"),
    Column(
        "logprob_sum",
        Double,
        nullable=False,
        comment="sum of log p(token) at temperature 1 over the answer tokens, nats",
    ),
    Column(
        "n_tokens",
        Integer,
        nullable=False,
        comment="answer tokens (those summed in logprob_sum); the token distribution averages the steps of run config cp_tokens",
    ),
    Column("cluster", Integer, comment="semantic cluster within (fact, condition); NULL for the greedy row"),
    Column(
        "dist_topk_mass",
        Double,
        comment="probability mass of the stored top-k entries of the mean token distribution",
    ),
    Column(
        "matches_gold",
        Boolean,
        nullable=False,
        comment="a gold alias (obj's possible_answers) occurs in the answer (normalized)",
    ),
    Column(
        "matches_counter", Boolean, nullable=False, comment="replace_name occurs in the answer (normalized)"
    ),
    comment="Answers sampled (or greedy) for each fact and condition in a dynamic run.",
)

dynamicqa_token_dist = Table(
    "dynamicqa_token_dist",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("condition", Text, primary_key=True),
    Column("sample_index", Integer, primary_key=True),
    Column("rank", Integer, primary_key=True, comment="1 = most probable"),
    Column("token_id", Integer, nullable=False),
    Column(
        "prob",
        Double,
        nullable=False,
        comment="mean of softmax(logits) (temperature 1) over the sample's generated steps, end of sequence included (run config cp_tokens = generated) or its answer tokens (answer); remainder = 1 - dist_topk_mass",
    ),
    comment="Sparse top-k of each sample's mean token distribution (the CP input), k = run config dist_topk.",
)

dynamicqa_score = Table(
    "dynamicqa_score",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("condition", Text, primary_key=True, comment="none | original | counter"),
    Column("n_samples", Integer, nullable=False),
    Column("n_clusters", Integer, nullable=False),
    Column(
        "semantic_entropy",
        Double,
        nullable=False,
        comment="likelihood-weighted SE: -sum_k p(k) log p(k), p(k) = normalized sum of exp(logprob_sum) in cluster k (Kuhn et al.), nats",
    ),
    Column(
        "semantic_entropy_mc",
        Double,
        nullable=False,
        comment="Monte-Carlo SE (Kuhn et al. eq. 2): -(1/K) sum_k log sum_{s in k} p(s), p(s) unnormalized: exp(logprob_sum) (run config se_form = sum) or exp(logprob_sum / n_tokens) (authors, the released code's); nats, without the released code's likelihood shift of 5 (see dynamicqa_summary.se_mc_*)",
    ),
    Column(
        "cp",
        Double,
        comment="Coherent Persuasion: mean over (context cluster a, no-context cluster b) of KL(P_a || P_b), nats; NULL for condition none",
    ),
    Column(
        "context_answer",
        Text,
        comment="answer the context states: obj (original) or replace_name (counter); NULL for none",
    ),
    Column("greedy_answer", Text, nullable=False),
    Column(
        "greedy_matches_gold",
        Boolean,
        nullable=False,
        comment="greedy answer states obj (run config labels: rouge = ROUGE-L F1 > 0.3 with obj, alias = contains a gold alias)",
    ),
    Column(
        "greedy_matches_context",
        Boolean,
        comment="greedy answer states the context's answer (accuracy with context; run config labels: rouge = ROUGE-L F1 > 0.3 with it, alias = contains an alias); NULL for none",
    ),
    Column(
        "sample_accuracy",
        Double,
        nullable=False,
        comment="share of sampled answers matching the gold aliases",
    ),
    Column(
        "persuaded",
        Boolean,
        comment="greedy answer with context matches the context's answer and the no-context greedy answer does not (matching per run config labels)",
    ),
    Column(
        "stubborn",
        Boolean,
        comment="greedy answer with context does not match the context's answer and matches the no-context greedy answer (labels rouge: ROUGE-L F1 > 0.3; alias: the equivalence test)",
    ),
    comment="Per (run, fact, condition) semantic entropy, CP, accuracy and persuaded / stubborn labels.",
)

dynamicqa_fact_done = Table(
    "dynamicqa_fact_done",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("fact_id", Integer, ForeignKey("fact.fact_id"), primary_key=True),
    Column("seconds", Double),
    Column("finished_at", DateTime, nullable=False),
    comment="Facts a dynamic run has finished (written with the fact's rows); a resumed run skips them.",
)

dynamicqa_summary = Table(
    "dynamicqa_summary",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column("partition", Text, primary_key=True),
    Column("model", Text, nullable=False),
    Column("n_facts", Integer, nullable=False),
    Column("n_instances", Integer, nullable=False, comment="(fact, context condition) pairs: 2 per fact"),
    Column("pct_persuaded", Double, comment="Table 1 analogue"),
    Column("pct_stubborn", Double),
    Column(
        "accuracy_with_context",
        Double,
        comment="Table 2: greedy answer states the context's answer (run config labels)",
    ),
    Column(
        "accuracy_without_context",
        Double,
        comment="greedy no-context answer states obj (run config labels); NULL for disputable (as in the paper)",
    ),
    Column("se_with_context", Double, comment="mean likelihood-weighted SE over context conditions"),
    Column("se_without_context", Double),
    Column(
        "se_mc_with_context",
        Double,
        comment="mean(semantic_entropy_mc) + 5, the likelihood shift the released code (after Kuhn et al.) subtracts from each cluster log-likelihood; the paper's Table 2 quantity for runs with se_form = authors",
    ),
    Column("se_mc_without_context", Double, comment="the same without context (Table 2 scale: + 5)"),
    Column("cp", Double, comment="mean CP over (fact, context condition)"),
    Column("created_at", DateTime, nullable=False),
    comment="DynamicQA Tables 1-2 analogues per run (model) and partition.",
)

dynamicqa_regression = Table(
    "dynamicqa_regression",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), primary_key=True),
    Column(
        "predictor",
        Text,
        primary_key=True,
        comment="Intercept | num_edits | s_pop | o_pop | se_without_context | se_with_context",
    ),
    Column("model", Text, nullable=False),
    Column(
        "coef",
        Double,
        nullable=False,
        comment="OLS coefficient on z-scored predictors (dependent: CP, unscaled)",
    ),
    Column("std_err", Double, nullable=False),
    Column("t_value", Double, nullable=False),
    Column("p_value", Double, nullable=False),
    Column("n_obs", Integer, nullable=False),
    Column("r_squared", Double, nullable=False),
    Column("created_at", DateTime, nullable=False),
    comment="Table 3 analogue: OLS of CP on z-scored num_edits, s_pop, o_pop, SE without/with context (statsmodels).",
)
