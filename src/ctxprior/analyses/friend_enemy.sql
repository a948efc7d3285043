-- analysis: friend-enemy
-- order: 110
-- help: friend vs enemy entity pairs, per query form (§5, Fig. 10)
-- compare: friend > enemy
-- design: entity_mean
-- unit: chi per (entity pair, query form)
-- stratum: query_form
-- family: run_id, test
-- summary: friend pairs more susceptible than enemy pairs
-- report-title: Friend–enemy pairs (§5, Fig. 10)
-- report: Susceptibility of friend pairs vs enemy pairs, per query form.
-- figure: fig10_friend_enemy
-- Friend-enemy case study (paper §5, Fig. 10, App. G.1): susceptibility χ of each entity pair
-- (entity = first, answer = second of the pair) for each query form, grouped by fact.label.
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT s.run_id, s.relation_id, s.relation, s.query_type,
       s.query_form_id, s.query_form, s.fact_id, s.entity_id,
       s.entity || ' & ' || coalesce(s.answer, '?') AS entity,
       s.label AS grp, s.category,
       s.susceptibility AS value,
       1 AS n_rows,
       CASE WHEN isnan(s.susceptibility) THEN 1 ELSE 0 END AS n_nan
FROM stg_susceptibility s
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND s.label IN ('friend', 'enemy')
ORDER BY s.run_id, s.query_form_id, s.label, s.fact_id;
