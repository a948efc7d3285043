-- DynamicQA views: facts read back in the source's terms, and dynamic-run scores with names.

-- One row per DynamicQA fact (key: dataset, partition, id).
CREATE OR REPLACE VIEW v_dynamicqa_fact AS
SELECT dataset, partition, id, subject, relation, object, replace_name, num_edits, s_pop, o_pop,
       question, context, s_pop_new, o_pop_new, replace_quality, dir_info,
       subject_qid, relation_qid, object_qid, mask_count, mask_kind,
       fact_id, relation_id, entity_id, answer_id, counter_answer_id, dataset_id
FROM stg_dynamicqa_fact;

-- Per (run, fact, condition) scores of dynamic runs, with the fact's covariates.
-- columns:
--   n_samples: answers sampled for the condition's prompt
--   n_clusters: semantic clusters (answers of one meaning) among the sampled answers
--   greedy_answer: the greedy answer to the condition's prompt
CREATE OR REPLACE VIEW v_dynamicqa_score AS
SELECT run_id, model,
       dataset, partition, id, subject, relation, object, replace_name,
       condition, context_answer,
       n_samples, n_clusters, semantic_entropy, semantic_entropy_mc, cp,
       greedy_answer, greedy_matches_gold, greedy_matches_context, sample_accuracy,
       persuaded, stubborn,
       num_edits, s_pop, o_pop, question,
       fact_id
FROM stg_dynamicqa_score;
