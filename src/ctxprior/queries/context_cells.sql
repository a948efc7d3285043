-- Shared cells behind relevance.sql, assertive.sql and negation.sql, in one scan of persuasion:
-- per (run, query form, queried fact, context type, relevant?) the sum and count of ψ.
-- `ctxprior analyze` reads this once and derives the three analyses' units from it (mean ψ =
-- sum / count over the cells of a group); tests check the units equal those of the three
-- readable files. Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
WITH cells AS (
    SELECT p.run_id, p.query_form_id, p.fact_id, c.context_type,
           (c.entity_id IS NOT DISTINCT FROM f.entity_id) AS is_relevant,
           sum(p.persuasion) AS sum_psi,
           count(*) AS n_rows,
           count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
    FROM persuasion p
    JOIN fact f ON f.fact_id = p.fact_id
    JOIN context c ON c.context_id = p.context_id
    WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
    GROUP BY ALL
)
SELECT cl.run_id, f.relation_id, r.short_name AS relation, q.query_type,
       cl.query_form_id, q.name AS query_form, cl.fact_id, f.entity_id, e.name AS entity,
       cl.context_type, cl.is_relevant, cl.sum_psi, cl.n_rows, cl.n_nan
FROM cells cl
JOIN fact f ON f.fact_id = cl.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN query_form q ON q.query_form_id = cl.query_form_id
WHERE d.source_format NOT IN ('friend_enemy', 'gender')
ORDER BY cl.run_id, f.relation_id, cl.query_form_id, cl.fact_id;
