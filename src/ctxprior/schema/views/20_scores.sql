-- Readable score views. Relevance comes from the context's stored entity id, never from
-- substring matching ("Paris" is inside "Paris Hilton").

-- columns:
--   context: the context text c, prepended to the query
--   is_relevant: true when the context mentions the queried entity (decided by the context's stored
--     entity id, not by substring search)
--   context_answer: answer the context states
CREATE OR REPLACE VIEW v_persuasion AS
SELECT run_id, model, dataset, relation, query_form, query_type, entity, entity_kind, answer,
       context, context_type, is_relevant, context_answer, persuasion, entropy,
       query_form_id, fact_id, context_id, relation_id, entity_id, sample_id
FROM stg_persuasion;

CREATE OR REPLACE VIEW v_susceptibility AS
SELECT run_id, model, dataset, relation, query_form, query_type, entity, entity_kind, entity_class,
       answer, susceptibility, n_contexts, mixture_entropy, mean_conditional_entropy, prior_entropy,
       query_form_id, fact_id, relation_id, entity_id, sample_id
FROM stg_susceptibility;

-- Entity-independent persuasion kappa(c, q) = sum_e p(q(e)|c) psi(c, q(e)) (App. B), uniform
-- weights over the sample's queried facts: a mean over facts.
-- columns:
--   kappa: entity-independent persuasion kappa(c, q) = mean over the sample's queried facts of
--     psi(c, q(e)) (Du et al. 2024, App. B), nats
--   n_facts: number of (fact) scores averaged into kappa
--   context: the context text c
CREATE OR REPLACE VIEW v_kappa AS
SELECT run_id, relation_id, query_form_id, context_id,
       any_value(relation)     AS relation,
       any_value(query_form)   AS query_form,
       any_value(query_type)   AS query_type,
       any_value(context_type) AS context_type,
       any_value(context)      AS context,
       avg(persuasion)         AS kappa,
       count(*)                AS n_facts
FROM stg_persuasion_kappa
GROUP BY run_id, relation_id, query_form_id, context_id;

-- gamma(q) = sum_c p(c) kappa(c, q) = I(A; C | q(E)): a mean over contexts of kappa.
-- columns:
--   gamma: gamma(q) = mean over contexts of kappa(c, q) = I(A; C | q(E)) (Du et al. 2024, App. B),
--     nats
--   n_contexts: number of contexts averaged into gamma
CREATE OR REPLACE VIEW v_gamma AS
SELECT run_id, relation_id, query_form_id,
       any_value(relation) AS relation, any_value(query_form) AS query_form,
       any_value(query_type) AS query_type,
       avg(kappa) AS gamma, count(*) AS n_contexts
FROM v_kappa
GROUP BY run_id, relation_id, query_form_id;

-- Memorization ratio per (run, query form, fact) over knowledge conflicts (Du et al. 2024, App. D:
-- "the answer in the context disagrees with the original answer"): contexts whose stated answer
-- differs (case-insensitively, by name) from the fact's answer. n_original / (n_original +
-- n_context), NULL (undefined) when no such generation is ORIGINAL or CONTEXT. n_agreeing: the
-- generations after contexts that state the true answer (or no answer), left out of the ratio;
-- memorization_ratio_all: the ratio over every context (the earlier ctxprior rule, and the authors'
-- code, which labels every sampled context).
-- columns:
--   n_original: greedy generations labelled ORIGINAL (give the fact's true answer by the run's
--     rule; 'yes' for closed queries)
--   n_context: greedy generations labelled CONTEXT (give the answer the context states; 'no' for
--     closed queries)
--   n_other: greedy generations labelled OTHER
--   memorization_ratio: n_original / (n_original + n_context) over knowledge conflicts (contexts
--     stating another answer than the fact's); NULL when the denominator is 0 (Longpre et al. 2021;
--     Du et al. 2024, App. D)
--   n_agreeing: greedy generations after contexts that state the fact's own answer (or none), left
--     out of memorization_ratio
--   memorization_ratio_all: the same ratio over every context, conflicting or not (the authors'
--     code)
CREATE OR REPLACE VIEW v_memorization AS
WITH g AS (
    SELECT run_id, query_form_id, fact_id, label, conflict FROM stg_generation
)
SELECT run_id, query_form_id, fact_id,
       count(*) FILTER (WHERE conflict AND label = 'ORIGINAL') AS n_original,
       count(*) FILTER (WHERE conflict AND label = 'CONTEXT')  AS n_context,
       count(*) FILTER (WHERE conflict AND label = 'OTHER')    AS n_other,
       CASE WHEN count(*) FILTER (WHERE conflict AND label IN ('ORIGINAL', 'CONTEXT')) = 0 THEN NULL
            ELSE (count(*) FILTER (WHERE conflict AND label = 'ORIGINAL'))::DOUBLE
                 / count(*) FILTER (WHERE conflict AND label IN ('ORIGINAL', 'CONTEXT')) END AS memorization_ratio,
       count(*) FILTER (WHERE NOT conflict) AS n_agreeing,
       CASE WHEN count(*) FILTER (WHERE label IN ('ORIGINAL', 'CONTEXT')) = 0 THEN NULL
            ELSE (count(*) FILTER (WHERE label = 'ORIGINAL'))::DOUBLE
                 / count(*) FILTER (WHERE label IN ('ORIGINAL', 'CONTEXT')) END AS memorization_ratio_all
FROM g
GROUP BY run_id, query_form_id, fact_id;
