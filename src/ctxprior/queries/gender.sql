-- Gender case study (paper §5, Fig. 11, App. G.2): for each name (entity_class feminine |
-- masculine), query form and context collection (context_type feminine_stereotype,
-- masculine_stereotype, feminine_swapped, masculine_swapped), the mean persuasion ψ over the
-- collection's contexts. When a run's sample holds a single collection this is exactly the
-- susceptibility χ of that collection; when a sample mixes collections, ψ is measured against
-- the mixture over all of them (the `unit` column of analysis_result says which).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT p.run_id, f.relation_id, r.short_name AS relation, c.context_type, q.query_type,
       p.query_form_id, q.name AS query_form, p.fact_id, f.entity_id, e.name AS entity,
       e.entity_class AS grp,
       avg(p.persuasion) AS value,
       count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan,
       (SELECT count(DISTINCT c2.context_type) FROM context c2 WHERE c2.sample_id = any_value(c.sample_id)) AS n_collections
FROM persuasion p
JOIN fact f ON f.fact_id = p.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN query_form q ON q.query_form_id = p.query_form_id
JOIN context c ON c.context_id = p.context_id
WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
  AND e.entity_class IN ('feminine', 'masculine')
  AND c.context_type IN ('feminine_stereotype', 'masculine_stereotype', 'feminine_swapped', 'masculine_swapped')
GROUP BY p.run_id, f.relation_id, r.short_name, c.context_type, q.query_type, p.query_form_id, q.name,
         p.fact_id, f.entity_id, e.name, e.entity_class
ORDER BY p.run_id, c.context_type, p.query_form_id, p.fact_id;
