-- analysis: negation
-- order: 30
-- help: negation vs base contexts, two-sided (§4.3.3)
-- compare: negation != base
-- design: paired
-- unit: mean psi per (entity, query form, context type)
-- units-from: context_cells.sql
-- summary: negation differs from base (two-sided)
-- report-title: Negation (§4.3.3)
-- report: Negated contexts ("... is not ...") vs base contexts, two-sided: the paper finds differences
-- report: in both directions.
-- Negation vs base contexts (paper §4.3.3, Fig. 5, App. E.3).
-- One row per (run, query form, queried fact, context type): the mean persuasion ψ of the
-- negation contexts and of the base contexts for that query (all contexts of the sample, relevant or not).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT p.run_id, f.relation_id, r.short_name AS relation, q.query_type,
       p.query_form_id, q.name AS query_form, p.fact_id, f.entity_id, e.name AS entity,
       c.context_type AS grp,
       avg(p.persuasion) AS value,
       count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
FROM persuasion p
JOIN fact f ON f.fact_id = p.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN query_form q ON q.query_form_id = p.query_form_id
JOIN context c ON c.context_id = p.context_id
WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
  AND c.context_type IN ('negation', 'base')
  AND d.source_format NOT IN ('friend_enemy', 'gender')
GROUP BY ALL
ORDER BY p.run_id, f.relation_id, p.query_form_id, p.fact_id, grp;
