-- Body of the view cov_<name> of a `known` covariate (known.store_answers): one row per fact the
-- run answered closed-book, with the entity's familiarity over all its answers in the run
-- (stg_known_entity) and the fact's own share of correct answers. {run_id}: an integer literal
-- (a view takes no parameter).
SELECT v.dataset, v.relation, v.entity, v.entity_kind, v.answer,
       CASE k.familiarity WHEN 'known' THEN 1 WHEN 'unknown' THEN 0 END AS known,
       k.familiarity,
       k.accuracy AS entity_accuracy,
       k.n_answers AS entity_answers,
       k.n_correct AS entity_correct,
       fa.accuracy AS fact_accuracy,
       {run_id} AS run_id, v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM (SELECT fact_id, avg(correct::DOUBLE) AS accuracy
      FROM closed_book_answer WHERE run_id = {run_id} GROUP BY fact_id) fa
JOIN v_entity v ON v.fact_id = fa.fact_id
JOIN stg_known_entity k ON k.run_id = {run_id} AND k.entity_id = v.entity_id
