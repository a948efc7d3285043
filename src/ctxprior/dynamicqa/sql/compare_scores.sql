-- First-token KL (persuasion runs, estimator first-token), answer-set KL (estimator answer-set)
-- and CP (dynamic runs) on the same DynamicQA facts and contexts, one row per (fact, condition).
-- Parameters: 1 = sample id (from `ctxprior sample-dynamic` / the dynamic run's sample_id),
-- 2 = dynamic run id. Persuasion uses the open query form and the fact's own context.
SELECT v.partition, v.id, v.subject, v.relation, dc.condition,
       c.context,
       max(p.persuasion) FILTER (WHERE p.estimator = 'first-token') AS first_token_kl,
       max(p.persuasion) FILTER (WHERE p.estimator = 'answer-set')  AS answer_set_kl,
       any_value(ds.cp)                  AS cp,
       any_value(ds.semantic_entropy)    AS se_with_context,
       any_value(ds.persuaded)           AS persuaded
FROM dynamicqa_context dc
JOIN stg_context c USING (context_id)
JOIN stg_dynamicqa_fact v ON v.fact_id = dc.fact_id
LEFT JOIN stg_persuasion p ON p.context_id = dc.context_id AND p.fact_id = dc.fact_id
LEFT JOIN stg_dynamicqa_score ds ON ds.fact_id = dc.fact_id AND ds.condition = dc.condition AND ds.run_id = $2
WHERE dc.sample_id = $1 AND (p.query_type IS NULL OR p.query_type = 'open')
GROUP BY ALL
ORDER BY v.partition, v.id, dc.condition;
