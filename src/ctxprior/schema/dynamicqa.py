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

from sqlalchemy import BigInteger, Boolean, DateTime, Double, Integer, Text, UniqueConstraint

from .base import col, ref, refs, table

dynamicqa_fact = table(
    "dynamicqa_fact",
    ref("fact", pk=True),
    ref("dataset", null=False),
    col("partition", Text, "static | temporal | disputable", null=False),
    col(
        "source_id",
        BigInteger,
        "`id` column of the CSV (PopQA id for static/temporal); unique per partition",
        null=False,
    ),
    col("source_row", Integer, "0-based data row in the CSV file", null=False),
    col(
        "source_index",
        BigInteger,
        "the stray unnamed first CSV column (a pandas index; not unique in the disputable file)",
    ),
    col("relation_label", Text, "PopQA property label, e.g. occupation (NULL for disputable)"),
    col("relation_qid", Text, "Wikidata property id, e.g. P106 (NULL for disputable)"),
    col("subject_qid", Text, "Wikidata QID of the subject (NULL for disputable)"),
    col("object_qid", Text, "Wikidata QID of the object (NULL for disputable)"),
    col(
        "counter_answer_id",
        Integer,
        "replace_name: the counter-memory substitute object (disputable: the competing value)",
        null=False,
        fk="answer.answer_id",
    ),
    col("num_edits", Double, "temporality (static/temporal) or disputability (disputable) proxy", null=False),
    col("s_pop", Double, "subject popularity (PopQA monthly page views)"),
    col("o_pop", Double, "object popularity (NULL for disputable)"),
    col("s_pop_new", Double, "re-fetched subject popularity; blank in the CSV -> NULL"),
    col("o_pop_new", Double, "popularity of the replacement object; blank in the CSV -> NULL"),
    col("replace_quality", Double, "similarity of obj and replace_name from the substitution step"),
    col("dir_info", Text, "disputable crawl path ./result/<title>-<n>/<revision>; blank -> NULL"),
    col("question", Text, "the question as in the CSV", null=False),
    col(
        "context", Text, "the context as in the CSV (static/temporal: answer masked as [ENTITY])", null=False
    ),
    col(
        "context_template",
        Text,
        "context with each answer mention replaced by {answer} (braces in the text doubled); disputable: prefixed 'This article is about <subj>. '",
        null=False,
    ),
    col(
        "mask_count",
        Integer,
        "number of answer mentions replaced ([ENTITY] masks, or obj occurrences)",
        null=False,
    ),
    col(
        "mask_kind", Text, "entity_token | word_boundary | substring (how the answer was located)", null=False
    ),
    UniqueConstraint("dataset_id", "partition", "source_id"),
    comment="DynamicQA columns the core fact table lacks; one row per fact, keyed on (partition, id).",
)

dynamicqa_alias = table(
    "dynamicqa_alias",
    ref("fact", pk=True),
    col("ordinal", Integer, "position in possible_answers (disputable: 0 = obj)", pk=True),
    col("alias", Text, null=False),
    comment="Gold answer aliases (possible_answers; disputable: obj only), one row per alias.",
)

dynamicqa_context = table(
    "dynamicqa_context",
    ref("context", pk=True),
    *refs("sample", "fact", null=False),
    col("condition", Text, "original (filled with obj) | counter (filled with replace_name)", null=False),
    UniqueConstraint("sample_id", "fact_id", "condition"),
    comment="Which DynamicQA fact and condition each context of a DynamicQA sample belongs to.",
)

dynamicqa_calibration = table(
    "dynamicqa_calibration",
    col("calibration_id", Integer, pk=True),
    ref("dataset", null=False),
    col("encoder", Text, "embedding model alias/path", null=False),
    col("encoder_revision", Text),
    col("method", Text, "how pairs were built and the threshold chosen", null=False),
    col("n_pos", Integer, "positive pairs: two aliases of the same gold object", null=False),
    col("n_neg", Integer, "negative pairs: obj vs replace_name of the same fact", null=False),
    col("threshold", Double, "cosine threshold maximizing balanced accuracy (fit half)", null=False),
    col("balanced_accuracy_fit", Double, null=False),
    col("balanced_accuracy_heldout", Double, null=False),
    col("tpr_heldout", Double, null=False),
    col("tnr_heldout", Double, null=False),
    col("seed", BigInteger, null=False),
    col("created_at", DateTime, null=False),
    comment="Cosine-similarity thresholds for embedding equivalence, calibrated on real DynamicQA pairs.",
)

dynamicqa_generation = table(
    "dynamicqa_generation",
    *refs("run", "fact", pk=True),
    col("condition", Text, "none (question alone) | original | counter", pk=True),
    col("sample_index", Integer, "0..N-1 sampled; -1 = the greedy answer", pk=True),
    col(
        "text", Text, "answer text (generation cut at the first newline / end of turn), stripped", null=False
    ),
    col("raw_text", Text, "the full decoded generation", null=False),
    col(
        "logprob_sum", Double, "sum of log p(token) at temperature 1 over the answer tokens, nats", null=False
    ),
    col(
        "n_tokens",
        Integer,
        "answer tokens (those summed in logprob_sum); the token distribution averages the steps of run config cp_tokens",
        null=False,
    ),
    col("cluster", Integer, "semantic cluster within (fact, condition); NULL for the greedy row"),
    col(
        "dist_topk_mass",
        Double,
        "probability mass of the stored top-k entries of the mean token distribution",
    ),
    col(
        "matches_gold",
        Boolean,
        "a gold alias (obj's possible_answers) occurs in the answer (normalized)",
        null=False,
    ),
    col("matches_counter", Boolean, "replace_name occurs in the answer (normalized)", null=False),
    comment="Answers sampled (or greedy) for each fact and condition in a dynamic run.",
)

dynamicqa_token_dist = table(
    "dynamicqa_token_dist",
    *refs("run", "fact", pk=True),
    col("condition", Text, pk=True),
    col("sample_index", Integer, pk=True),
    col("rank", Integer, "1 = most probable", pk=True),
    col("token_id", Integer, null=False),
    col(
        "prob",
        Double,
        "mean of softmax(logits) (temperature 1) over the sample's generated steps, end of sequence included (run config cp_tokens = generated) or its answer tokens (answer); remainder = 1 - dist_topk_mass",
        null=False,
    ),
    comment="Sparse top-k of each sample's mean token distribution (the CP input), k = run config dist_topk.",
)

dynamicqa_score = table(
    "dynamicqa_score",
    *refs("run", "fact", pk=True),
    col("condition", Text, "none | original | counter", pk=True),
    col("n_samples", Integer, null=False),
    col("n_clusters", Integer, null=False),
    col(
        "semantic_entropy",
        Double,
        "likelihood-weighted SE: -sum_k p(k) log p(k), p(k) = normalized sum of exp(logprob_sum) in cluster k (Kuhn et al.), nats",
        null=False,
    ),
    col(
        "semantic_entropy_mc",
        Double,
        "Monte-Carlo SE (Kuhn et al. eq. 2): -(1/K) sum_k log sum_{s in k} p(s), p(s) unnormalized: exp(logprob_sum) (run config se_form = sum) or exp(logprob_sum / n_tokens) (authors, the released code's); nats, without the released code's likelihood shift of 5 (see dynamicqa_summary.se_mc_*)",
        null=False,
    ),
    col(
        "cp",
        Double,
        "Coherent Persuasion: mean over (context cluster a, no-context cluster b) of KL(P_a || P_b), nats; NULL for condition none",
    ),
    col(
        "context_answer",
        Text,
        "answer the context states: obj (original) or replace_name (counter); NULL for none",
    ),
    col("greedy_answer", Text, null=False),
    col(
        "greedy_matches_gold",
        Boolean,
        "greedy answer states obj (run config labels: rouge = ROUGE-L F1 > 0.3 with obj, alias = contains a gold alias)",
        null=False,
    ),
    col(
        "greedy_matches_context",
        Boolean,
        "greedy answer states the context's answer (accuracy with context; run config labels: rouge = ROUGE-L F1 > 0.3 with it, alias = contains an alias); NULL for none",
    ),
    col("sample_accuracy", Double, "share of sampled answers matching the gold aliases", null=False),
    col(
        "persuaded",
        Boolean,
        "greedy answer with context matches the context's answer and the no-context greedy answer does not (matching per run config labels)",
    ),
    col(
        "stubborn",
        Boolean,
        "greedy answer with context does not match the context's answer and matches the no-context greedy answer (labels rouge: ROUGE-L F1 > 0.3; alias: the equivalence test)",
    ),
    comment="Per (run, fact, condition) semantic entropy, CP, accuracy and persuaded / stubborn labels.",
)

dynamicqa_fact_done = table(
    "dynamicqa_fact_done",
    *refs("run", "fact", pk=True),
    col("seconds", Double),
    col("finished_at", DateTime, null=False),
    comment="Facts a dynamic run has finished (written with the fact's rows); a resumed run skips them.",
)

dynamicqa_summary = table(
    "dynamicqa_summary",
    ref("run", pk=True),
    col("partition", Text, pk=True),
    col("model", Text, null=False),
    col("n_facts", Integer, null=False),
    col("n_instances", Integer, "(fact, context condition) pairs: 2 per fact", null=False),
    col("pct_persuaded", Double, "Table 1 analogue"),
    col("pct_stubborn", Double),
    col(
        "accuracy_with_context",
        Double,
        "Table 2: greedy answer states the context's answer (run config labels)",
    ),
    col(
        "accuracy_without_context",
        Double,
        "greedy no-context answer states obj (run config labels); NULL for disputable (as in the paper)",
    ),
    col("se_with_context", Double, "mean likelihood-weighted SE over context conditions"),
    col("se_without_context", Double),
    col(
        "se_mc_with_context",
        Double,
        "mean(semantic_entropy_mc) + 5, the likelihood shift the released code (after Kuhn et al.) subtracts from each cluster log-likelihood; the paper's Table 2 quantity for runs with se_form = authors",
    ),
    col("se_mc_without_context", Double, "the same without context (Table 2 scale: + 5)"),
    col("cp", Double, "mean CP over (fact, context condition)"),
    col("created_at", DateTime, null=False),
    comment="DynamicQA Tables 1-2 analogues per run (model) and partition.",
)

dynamicqa_regression = table(
    "dynamicqa_regression",
    ref("run", pk=True),
    col(
        "predictor",
        Text,
        "Intercept | num_edits | s_pop | o_pop | se_without_context | se_with_context",
        pk=True,
    ),
    col("model", Text, null=False),
    col("coef", Double, "OLS coefficient on z-scored predictors (dependent: CP, unscaled)", null=False),
    col("std_err", Double, null=False),
    col("t_value", Double, null=False),
    col("p_value", Double, null=False),
    col("n_obs", Integer, null=False),
    col("r_squared", Double, null=False),
    col("created_at", DateTime, null=False),
    comment="Table 3 analogue: OLS of CP on z-scored num_edits, s_pop, o_pop, SE without/with context (statsmodels).",
)
