-- Susceptibility by layer (logit lens, `score --per-layer`), real against fake entities.
-- One row per (run, query type, entity kind, layer): the mean and quartiles of χ over the
-- run's (entity, query form) pairs; n_layers - 1 is the model's output (= the final χ).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT l.run_id, any_value(l.model) AS model, l.query_type, l.entity_kind AS grp, l.layer,
       any_value(l.n_layers) AS n_layers,
       count(*) AS n,
       avg(l.susceptibility) AS mean,
       quantile_cont(l.susceptibility, 0.25) AS q25,
       median(l.susceptibility) AS median,
       quantile_cont(l.susceptibility, 0.75) AS q75
FROM v_susceptibility_by_layer l
WHERE l.run_id IN (SELECT run_id FROM analysis_runs)
GROUP BY l.run_id, l.query_type, l.entity_kind, l.layer
ORDER BY l.run_id, l.query_type, grp, l.layer;
