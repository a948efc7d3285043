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
SELECT p.run_id, p.relation_id, p.relation, p.query_type,
       p.query_form_id, p.query_form, p.fact_id, p.entity_id, p.entity,
       p.context_type AS grp,
       avg(p.persuasion) AS value,
       count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
FROM stg_persuasion_cell p
WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
  AND p.context_type IN ('negation', 'base')
  AND NOT p.in_case_study
GROUP BY ALL
ORDER BY p.run_id, p.relation_id, p.query_form_id, p.fact_id, grp;
