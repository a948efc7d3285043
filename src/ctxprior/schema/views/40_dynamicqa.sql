-- DynamicQA views: facts read back in the source's terms, and dynamic-run scores with names.

-- One row per DynamicQA fact (key: dataset, partition, id).
CREATE OR REPLACE VIEW v_dynamicqa_fact AS
SELECT dataset, partition, id, subject, relation, object, replace_name, num_edits, s_pop, o_pop,
       question, context, s_pop_new, o_pop_new, replace_quality, dir_info,
       subject_qid, relation_qid, object_qid, mask_count, mask_kind,
       fact_id, relation_id, entity_id, answer_id, counter_answer_id, dataset_id
FROM stg_dynamicqa_fact;

-- Per (run, fact, condition) scores of dynamic runs, with the fact's covariates. (The same rows
-- as stg_dynamicqa_score; written out here so the dataset card keeps its column meanings.)
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
