-- Per-layer susceptibility (logit lens, `score --per-layer`): one row per (run, query form, fact,
-- layer); layer 0 is the embeddings, n_layers - 1 the model's output (= v_susceptibility).
CREATE OR REPLACE VIEW v_susceptibility_by_layer AS
SELECT s.run_id,
       rn.model,
       d.name          AS dataset,
       r.short_name    AS relation,
       q.name          AS query_form,
       q.query_type,
       e.name          AS entity,
       f.entity_kind,
       a.name          AS answer,
       s.layer,
       max(s.layer) OVER (PARTITION BY s.run_id) + 1 AS n_layers,
       s.susceptibility,
       s.mixture_entropy,
       s.mean_conditional_entropy,
       s.query_form_id, s.fact_id, f.relation_id, f.entity_id, rn.sample_id
FROM susceptibility_layer s
JOIN run rn USING (run_id)
JOIN query_form q USING (query_form_id)
JOIN fact f USING (fact_id)
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id;
