-- Per-layer susceptibility (logit lens, `score --per-layer`): one row per (run, query form, fact,
-- layer); layer 0 is the embeddings, n_layers - 1 the model's output (= v_susceptibility).
-- columns:
--   n_layers: layers of the run's lens: the embeddings and each block's output
CREATE OR REPLACE VIEW v_susceptibility_by_layer AS
SELECT v.run_id, v.model, v.dataset, v.relation, v.query_form, v.query_type, v.entity, v.entity_kind,
       v.answer,
       s.layer,
       max(s.layer) OVER (PARTITION BY s.run_id) + 1 AS n_layers,
       s.susceptibility,
       s.mixture_entropy,
       s.mean_conditional_entropy,
       v.query_form_id, v.fact_id, v.relation_id, v.entity_id, v.sample_id
FROM stg_susceptibility_layer s
JOIN v_susceptibility v USING (run_id, query_form_id, fact_id);  -- its labels: one join chain
