-- DynamicQA views: facts read back in the source's terms, and dynamic-run scores with names.

-- One row per DynamicQA fact (key: dataset, partition, id).
CREATE OR REPLACE VIEW v_dynamicqa_fact AS
SELECT d.name                AS dataset,
       df.partition,
       df.source_id          AS id,
       e.name                AS subject,
       coalesce(df.relation_label, r.short_name) AS relation,
       a.name                AS object,
       ca.name               AS replace_name,
       df.num_edits,
       df.s_pop,
       df.o_pop,
       df.question,
       df.context,
       df.s_pop_new, df.o_pop_new, df.replace_quality, df.dir_info,
       df.subject_qid, df.relation_qid, df.object_qid, df.mask_count, df.mask_kind,
       df.fact_id, f.relation_id, f.entity_id, f.answer_id, df.counter_answer_id, d.dataset_id
FROM dynamicqa_fact df
JOIN fact f USING (fact_id)
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = df.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN answer a ON a.answer_id = f.answer_id
JOIN answer ca ON ca.answer_id = df.counter_answer_id;

-- Per (run, fact, condition) scores of dynamic runs, with the fact's covariates.
CREATE OR REPLACE VIEW v_dynamicqa_score AS
SELECT s.run_id,
       rn.model,
       v.dataset, v.partition, v.id, v.subject, v.relation, v.object, v.replace_name,
       s.condition, s.context_answer,
       s.n_samples, s.n_clusters, s.semantic_entropy, s.semantic_entropy_mc, s.cp,
       s.greedy_answer, s.greedy_matches_gold, s.greedy_matches_context, s.sample_accuracy,
       s.persuaded, s.stubborn,
       v.num_edits, v.s_pop, v.o_pop, v.question,
       s.fact_id
FROM dynamicqa_score s
JOIN run rn USING (run_id)
JOIN v_dynamicqa_fact v USING (fact_id);
