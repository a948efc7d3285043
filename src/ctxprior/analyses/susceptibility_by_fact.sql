-- Susceptibility per (run, query type, fact), averaged over the query forms of that type
-- (paper App. F.2: |Q_e|^-1 Σ_q χ(q(e))), with the keys a covariate view `cov_<name>` joins on
-- (dataset, relation, entity, answer). Used by the Spearman analyses (frequency, degree,
-- --covariate) and Fig. 9. Runs: `analysis_runs`.
SELECT s.run_id, s.dataset, s.relation, s.relation_uri, s.query_type,
       s.fact_id, s.relation_id, s.entity_id, s.entity, s.entity_kind, s.answer,
       s.predicate_degree, s.uri_degree,
       avg(s.susceptibility) AS susceptibility, count(*) AS n_query_forms
FROM stg_susceptibility_cell s
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND NOT s.in_case_study
GROUP BY ALL
ORDER BY s.run_id, s.relation_id, s.fact_id, s.query_type;
