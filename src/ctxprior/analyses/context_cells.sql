-- Shared cells behind relevance.sql, assertive.sql and negation.sql, in one scan of persuasion:
-- per (run, query form, queried fact, context type, relevant?) the sum and count of ψ.
-- `ctxprior analyze` reads this once and derives the three analyses' units from it (mean ψ =
-- sum / count over the cells of a group); tests check the units equal those of the three
-- readable files. Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
WITH cells AS (
    SELECT p.run_id, p.query_form_id, p.fact_id, p.context_type,
           (p.context_entity_id IS NOT DISTINCT FROM p.entity_id) AS is_relevant,
           sum(p.persuasion) AS sum_psi,
           count(*) AS n_rows,
           count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
    FROM stg_persuasion_context p
    WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
    GROUP BY ALL
)
SELECT cl.run_id, f.relation_id, f.relation, q.query_type,
       cl.query_form_id, q.query_form, cl.fact_id, f.entity_id, f.entity,
       cl.context_type, cl.is_relevant, cl.sum_psi, cl.n_rows, cl.n_nan
FROM cells cl
JOIN stg_fact f ON f.fact_id = cl.fact_id
JOIN stg_query_form q ON q.query_form_id = cl.query_form_id
WHERE NOT f.in_case_study
ORDER BY cl.run_id, f.relation_id, cl.query_form_id, cl.fact_id;
