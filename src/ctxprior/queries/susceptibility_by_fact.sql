-- Susceptibility per (run, query type, fact), averaged over the query forms of that type
-- (paper App. F.2: |Q_e|^-1 Σ_q χ(q(e))), with the keys a covariate view `cov_<name>` joins on
-- (dataset, relation, entity, answer). Used by the Spearman analyses (frequency, degree,
-- --covariate) and Fig. 9. Runs: `analysis_runs`.
SELECT s.run_id, d.name AS dataset, r.short_name AS relation, r.name AS relation_uri, q.query_type,
       s.fact_id, f.relation_id, f.entity_id, e.name AS entity, f.entity_kind, a.name AS answer,
       f.predicate_degree, f.uri_degree,
       avg(s.susceptibility) AS susceptibility, count(*) AS n_query_forms
FROM susceptibility s
JOIN fact f ON f.fact_id = s.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id
JOIN query_form q ON q.query_form_id = s.query_form_id
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND d.source_format NOT IN ('friend_enemy', 'gender')
GROUP BY ALL
ORDER BY s.run_id, f.relation_id, s.fact_id, q.query_type;
