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
SELECT s.run_id, f.relation_id, r.short_name AS relation, q.query_type,
       s.query_form_id, q.name AS query_form, s.fact_id, f.entity_id,
       e.name || ' & ' || coalesce(a.name, '?') AS entity,
       f.label AS grp, f.category,
       s.susceptibility AS value,
       1 AS n_rows,
       CASE WHEN isnan(s.susceptibility) THEN 1 ELSE 0 END AS n_nan
FROM susceptibility s
JOIN fact f ON f.fact_id = s.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id
JOIN query_form q ON q.query_form_id = s.query_form_id
WHERE s.run_id IN (SELECT run_id FROM analysis_runs)
  AND f.label IN ('friend', 'enemy')
ORDER BY s.run_id, s.query_form_id, f.label, s.fact_id;
