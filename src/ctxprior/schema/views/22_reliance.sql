-- The field's reliance measures beside ψ (docs/concepts.md#reliance-against-the-no-context-prompt):
-- one row per (run, query form, fact, context) that has both, with the labels of stg_persuasion.
-- ψ's reference is the mixture over the item's contexts; shift, jsd and confidence_gain compare
-- with the prompt without any context. conflict: the context's answer differs from the fact's
-- (case-insensitively, by name; false when either is missing), as in stg_generation.
-- ccu: CUB's continuous context utilisation (Hagström et al. 2025, App. C, eq. 1): the scaled
-- difference of the context's answer for a relevant context, of the model's own no-context
-- answer for an irrelevant one. outcome: the label of the prompt's greedy generation by the rule
-- outcome_source names (generation_label: the same generation's label in table generation);
-- choice: ctxprior's forced choice between the answers (choice_source: argmax | full-answer).
-- shift, jsd, confidence_gain(_vocab), scaled_difference(_memory) and ccu are the sources' (over the
-- vocabulary at the first answer token, whatever the estimator; schema v4); the *_answer_set
-- columns are ctxprior's variants over the candidate answers (NULL under first-token).
-- columns:
--   context: the context text c, prepended to the query
--   context_answer: answer the context states
--   is_relevant: true when the context mentions the queried entity (by the context's stored entity
--     id) and its dataset does not type it irrelevant
--   ccu: CUB's continuous context utilisation: scaled_difference for a relevant context,
--     scaled_difference_memory for an irrelevant one (Hagstrom et al. 2025, App. C)
--   ccu_answer_set: ctxprior's variant of ccu over the query's candidate answers
--     (scaled_difference_answer_set or scaled_difference_memory_answer_set); NULL under first-token
--   generation_label: the label of the prompt's greedy generation in table generation (ORIGINAL /
--     CONTEXT / OTHER / UNDECIDED), where the run stored generations
--   conflict: the context's answer differs from the fact's (case-insensitively, by name; false when
--     either is missing)
CREATE OR REPLACE VIEW v_reliance AS
SELECT p.run_id, p.model, p.estimator, p.dataset, p.relation, p.query_form, p.query_type,
       p.entity, p.entity_kind, p.answer,
       p.context, p.context_type, p.context_answer, p.is_relevant,
       coalesce(lower(trim(p.context_answer)) <> lower(trim(p.answer)), false) AS conflict,
       p.persuasion,
       r.shift, r.jsd, r.confidence_gain, r.confidence_gain_vocab,
       r.p_context_answer, r.p_gold_answer, r.p_prior_answer, r.scaled_difference,
       r.scaled_difference_memory,
       CASE WHEN p.is_relevant THEN r.scaled_difference ELSE r.scaled_difference_memory END AS ccu,
       r.shift_answer_set, r.jsd_answer_set, r.confidence_gain_answer_set,
       r.scaled_difference_answer_set, r.scaled_difference_memory_answer_set,
       CASE WHEN p.is_relevant THEN r.scaled_difference_answer_set
            ELSE r.scaled_difference_memory_answer_set END AS ccu_answer_set,
       r.outcome, r.outcome_source, r.choice, r.choice_source, r.collision, r.keeps_prior,
       g.label AS generation_label,
       r.answer_top, r.answer_prior, r.answer_context, r.answer_gold,
       p.entropy,
       p.query_form_id, p.fact_id, p.context_id, p.relation_id, p.entity_id, p.sample_id
FROM stg_persuasion p
JOIN stg_reliance r ON r.run_id = p.run_id AND r.query_form_id = p.query_form_id
               AND r.fact_id = p.fact_id AND r.context_id = p.context_id
LEFT JOIN stg_generation g ON g.run_id = p.run_id AND g.query_form_id = p.query_form_id
               AND g.fact_id = p.fact_id AND g.context_id = p.context_id;

-- Outcome rates as the papers report them, per run and context type (the dataset's label: gold,
-- conflicting, irrelevant, ...), per relation and query form (scope 'relation') and over all
-- relations of a query type (scope 'all relations'; relation and query_form NULL) -- a
-- fixed-context dataset makes each item its own relation, so read its rates there.
-- Outcomes are the labels of each prompt's greedy generation; outcome_rule names the rule (recall:
-- CK-PLUG's get_score, the default; exact: Longpre et al.'s exact match; prefix), or, for rows
-- written before schema v4, 'argmax' / 'full-answer': those rows' outcome is the forced choice.
-- Over the knowledge conflicts (conflict): conr = share CONTEXT (ConR), memr = share ORIGINAL
-- (MemR / ParR), other_rate = share OTHER, memorization_ratio = ORIGINAL / (ORIGINAL + CONTEXT)
-- (Longpre et al. 2021; NULL when undefined), each over the decided rows. Over every context of
-- the group: accuracy = share ORIGINAL; bcu = CUB's binary context utilisation (a relevant context:
-- the outcome is the context's answer; an irrelevant one: the model keeps its no-context answer),
-- mean_ccu its continuous one. n_undecided: the generation gave both answers (outcome NULL under a
-- rule); n_unlabelled: no generation (--outcome-rule none). choice_conr / choice_memr /
-- choice_accuracy: the same shares of ctxprior's forced choice (choice; n_full_answer of them
-- decided from the full answers where the estimator read the gold and the context's answer as
-- one, n_collision). context_preference = ClashEval's: of the contexts whose answer differs from
-- the model's own no-context answer, the share whose argmax is the context's answer; it and
-- keeps_prior compare the estimator's answers (on a collided row, the shared first token).
-- columns:
--   scope: relation: per relation and query form; all relations: over every relation of the query
--     type (relation and query_form NULL)
--   n: contexts x facts in the group
--   n_conflict: of them, knowledge conflicts (the context's answer differs from the fact's)
--   n_collision: of them, pairs whose gold and context answer the estimator reads as one (a shared
--     first token)
--   n_full_answer: of them, forced choices decided from the two full answers (collisions with the
--     shared answer on top)
--   outcome_rule: the rule(s) that labelled the group's generations: recall (CK-PLUG's get_score,
--     the default), exact (Longpre et al.'s exact match), prefix; argmax / full-answer: rows
--     written before schema v4, whose outcome is the forced choice
--   n_undecided: of them, rows whose generation gives both answers (outcome NULL), left out of
--     every rate
--   n_unlabelled: of them, rows without a generation (--outcome-rule none), left out of every rate
--   conr: ConR: share of conflicts whose greedy generation gives the context's answer (outcome
--     CONTEXT)
--   memr: MemR: share of conflicts whose greedy generation gives the fact's answer (outcome
--     ORIGINAL)
--   other_rate: share of conflicts whose greedy generation gives neither (outcome OTHER)
--   memorization_ratio: ORIGINAL / (ORIGINAL + CONTEXT) over conflicts (Longpre et al. 2021); NULL
--     when undefined
--   accuracy: share of every context whose greedy generation gives the fact's answer
--   choice_conr: ctxprior's forced choice: share of conflicts whose choice is the context's answer
--     (argmax, or full answers on a collision)
--   choice_memr: ctxprior's forced choice: share of conflicts whose choice is the fact's answer
--   choice_accuracy: ctxprior's forced choice: share of every context whose choice is the fact's
--     answer
--   context_preference: ClashEval: of the contexts whose answer differs from the model's own
--     no-context answer, the share whose with-context argmax is the context's answer
--   mean_persuasion: mean psi over the group, nats
--   bcu: CUB's binary context utilisation: a relevant context's share answered with the answer it
--     promotes, an irrelevant one's share keeping the no-context answer
--   mean_ccu: mean CUB CCU over the group
--   mean_ccu_answer_set: mean of ctxprior's candidate-set ccu_answer_set over the group (not CUB's)
CREATE OR REPLACE VIEW v_reliance_rates AS
SELECT run_id, any_value(model) AS model, dataset,
       CASE WHEN grouping(relation) = 1 THEN 'all relations' ELSE 'relation' END AS scope,
       relation, query_form, query_type, context_type,
       count(*) AS n,
       count(*) FILTER (WHERE conflict) AS n_conflict,
       count(*) FILTER (WHERE collision) AS n_collision,
       count(*) FILTER (WHERE choice_source = 'full-answer') AS n_full_answer,
       string_agg(DISTINCT outcome_source, ',' ORDER BY outcome_source) AS outcome_rule,
       count(*) FILTER (WHERE outcome IS NULL AND outcome_source IS NOT NULL) AS n_undecided,
       count(*) FILTER (WHERE outcome_source IS NULL) AS n_unlabelled,
       avg((outcome = 'CONTEXT')::DOUBLE) FILTER (WHERE conflict)  AS conr,
       avg((outcome = 'ORIGINAL')::DOUBLE) FILTER (WHERE conflict) AS memr,
       avg((outcome = 'OTHER')::DOUBLE) FILTER (WHERE conflict)    AS other_rate,
       CASE WHEN count(*) FILTER (WHERE conflict AND outcome <> 'OTHER') = 0 THEN NULL
            ELSE (count(*) FILTER (WHERE conflict AND outcome = 'ORIGINAL'))::DOUBLE
                 / count(*) FILTER (WHERE conflict AND outcome <> 'OTHER') END AS memorization_ratio,
       avg((outcome = 'ORIGINAL')::DOUBLE) AS accuracy,
       avg((choice = 'CONTEXT')::DOUBLE) FILTER (WHERE conflict)  AS choice_conr,
       avg((choice = 'ORIGINAL')::DOUBLE) FILTER (WHERE conflict) AS choice_memr,
       avg((choice = 'ORIGINAL')::DOUBLE) AS choice_accuracy,
       avg((answer_top = answer_context)::DOUBLE)
           FILTER (WHERE answer_context IS DISTINCT FROM answer_prior AND answer_context IS NOT NULL)
           AS context_preference,
       avg(CASE WHEN NOT is_relevant THEN keeps_prior::DOUBLE
                WHEN answer_context IS NULL OR outcome IS NULL THEN NULL
                ELSE (outcome = 'CONTEXT' OR (NOT conflict AND outcome = 'ORIGINAL'))::DOUBLE END) AS bcu,
       avg(persuasion) AS mean_persuasion,
       avg(shift) AS mean_shift,
       avg(jsd) AS mean_jsd,
       avg(confidence_gain) AS mean_confidence_gain,
       avg(confidence_gain_vocab) AS mean_confidence_gain_vocab,
       avg(scaled_difference) AS mean_scaled_difference,
       avg(ccu) AS mean_ccu,
       avg(shift_answer_set) AS mean_shift_answer_set,
       avg(confidence_gain_answer_set) AS mean_confidence_gain_answer_set,
       avg(scaled_difference_answer_set) AS mean_scaled_difference_answer_set,
       avg(ccu_answer_set) AS mean_ccu_answer_set
FROM v_reliance
GROUP BY GROUPING SETS ((run_id, dataset, relation, query_form, query_type, context_type),
                        (run_id, dataset, query_type, context_type));
