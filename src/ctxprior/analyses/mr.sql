-- Memorization ratio vs susceptibility (paper §4.2.3, Fig. 3, App. D).
-- One row per (run, query form, fact) with a defined MR (NULL MR = no ORIGINAL/CONTEXT answers).
-- bin: 5 equal bins of MR over [0, 1] (MR = 1 goes into the last bin).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT s.run_id, s.relation_id, s.relation, s.query_type, s.query_form,
       s.entity, s.entity_kind, s.fact_id,
       m.memorization_ratio, s.susceptibility,
       least(floor(m.memorization_ratio * 5), 4)::INTEGER AS bin
FROM stg_susceptibility_cell s
JOIN v_memorization m ON m.run_id = s.run_id AND m.query_form_id = s.query_form_id AND m.fact_id = s.fact_id
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND m.memorization_ratio IS NOT NULL
ORDER BY s.run_id, s.query_type, bin;
