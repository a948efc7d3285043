-- analysis: known
-- order: 45
-- default: no
-- help: unknown vs known entities by the model's closed-book answers (Ferrando et al. 2025); runs by
-- help: default when the runs have them (`covariates known`)
-- compare: unknown > known
-- design: entity_mean
-- unit: chi per (entity, query form)
-- summary: entities the model does not know more susceptible than those it knows
-- report-title: Known vs unknown entities (the model's own answers)
-- report: Susceptibility of entities the run's model does not know (no attribute answered correctly)
-- report: vs entities it knows, by the rule `ctxprior covariates known` recorded (default as Ferrando
-- report: et al.'s released code: greedy answers, at least max(2, n - 1) of n attributes right and
-- report: none refused); the hypothesis is that unknown entities are more susceptible.
-- The model's own familiarity (Ferrando et al., ICLR 2025): one row per (run, query form, fact) of
-- a run that has closed-book answers (`ctxprior covariates known --run N`), χ grouped by the
-- entity's label in stg_known_entity (any rule; partial entities are left out, as the paper's
-- "other").
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT s.run_id, s.relation_id, s.relation, s.query_type,
       s.query_form_id, s.query_form, s.fact_id, s.entity_id, s.entity,
       k.familiarity AS grp,
       s.susceptibility AS value,
       1 AS n_rows,
       CASE WHEN isnan(s.susceptibility) THEN 1 ELSE 0 END AS n_nan,
       s.dataset, s.answer
FROM stg_susceptibility s
JOIN stg_known_entity k ON k.run_id = s.run_id AND k.entity_id = s.entity_id
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND NOT s.in_case_study
  AND k.familiarity IN ('known', 'unknown')
ORDER BY s.run_id, s.relation_id, s.query_form_id, s.fact_id;
