-- analysis: relevance
-- order: 10
-- help: relevant vs irrelevant contexts: is psi higher when the context mentions the entity (§4.3.1)
-- compare: relevant > irrelevant
-- design: paired
-- unit: mean psi per (entity, query form) over relevant / irrelevant contexts
-- units-from: context_cells.sql
-- summary: relevant contexts more persuasive
-- report-title: Relevance (§4.3.1)
-- report: Contexts that mention the queried entity (relevant) vs contexts that do not; the hypothesis
-- report: is that relevant contexts are more persuasive.
-- Relevant vs irrelevant contexts (paper §4.3.1, Fig. 5 ▼, App. E.1).
-- One row per (run, query form, queried fact, group): the mean persuasion ψ over the contexts
-- that mention the queried entity (relevant) and over those that do not (irrelevant).
-- Relevance comes from the context's stored entity id, never from substring matching.
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT p.run_id, p.relation_id, p.relation, p.query_type,
       p.query_form_id, p.query_form, p.fact_id, p.entity_id, p.entity,
       CASE WHEN p.context_entity_id IS NOT DISTINCT FROM p.entity_id THEN 'relevant' ELSE 'irrelevant' END AS grp,
       avg(p.persuasion) AS value,
       count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
FROM stg_persuasion_cell p
WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
  AND NOT p.in_case_study
GROUP BY ALL
ORDER BY p.run_id, p.relation_id, p.query_form_id, p.fact_id, grp;
