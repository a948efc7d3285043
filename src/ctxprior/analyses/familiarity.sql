-- analysis: familiarity
-- order: 40
-- help: fake vs real entities: is chi higher for unfamiliar entities (§4.4.1, Fig. 8)
-- compare: fake > real
-- design: entity_mean
-- unit: chi per (entity, query form)
-- transform: exclude-seen-fakes
-- summary: fake entities more susceptible than real
-- report-title: Familiar vs unfamiliar entities (§4.4.1)
-- report: Susceptibility of fake (unfamiliar) vs real (familiar) entities; the hypothesis is that fake
-- report: entities are more susceptible.
-- figure: fig8_real_fake
-- Real (familiar) vs fake (unfamiliar) entities (paper §4.4.1, Fig. 5 ●, Fig. 8, App. F.1).
-- One row per (run, query form, fact): the susceptibility χ, grouped by the entity's kind.
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT s.run_id, s.relation_id, s.relation, s.query_type,
       s.query_form_id, s.query_form, s.fact_id, s.entity_id, s.entity,
       s.entity_kind AS grp,
       s.susceptibility AS value,
       1 AS n_rows,
       CASE WHEN isnan(s.susceptibility) THEN 1 ELSE 0 END AS n_nan,
       s.dataset, s.answer
FROM stg_susceptibility s
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND NOT s.in_case_study
ORDER BY s.run_id, s.relation_id, s.query_form_id, s.fact_id;
