-- The closed-book questions of a run (`covariates known`): every (open query form, fact) the run
-- scored, with the query template, the entity, and the gold answers (the fact's answer and, for
-- DynamicQA facts, its aliases; NULLs dropped, sorted). $run_id: the run.
SELECT s.query_form_id, s.fact_id, q.template, s.entity, s.answer,
       list_sort(list_distinct([s.answer] || coalesce(
           (SELECT list(al.alias) FROM dynamicqa_alias al WHERE al.fact_id = s.fact_id),
           []::VARCHAR[]))) AS golds
FROM stg_susceptibility s
JOIN query_form q ON q.query_form_id = s.query_form_id
WHERE s.run_id = $run_id AND s.query_type = 'open'
ORDER BY s.query_form_id, s.fact_id;
