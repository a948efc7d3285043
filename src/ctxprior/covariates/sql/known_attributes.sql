-- The attributes `covariates known --rule ferrando` asks about (Ferrando et al. 2025): one row per
-- (relation, entity) among the run's open queries, asked with the relation's first open query
-- form the run scored (lowest ordinal), with the gold answers (the answers of the entity's facts
-- in the relation and, for DynamicQA facts, their aliases; NULLs dropped, sorted). $run_id.
WITH open_rows AS (
    SELECT s.relation_id, s.entity_id, s.entity, s.fact_id, s.answer, q.query_form_id, q.ordinal, q.template
    FROM stg_susceptibility s
    JOIN query_form q ON q.query_form_id = s.query_form_id
    WHERE s.run_id = $run_id AND s.query_type = 'open'
), first_form AS (
    SELECT relation_id, arg_min(query_form_id, ordinal) AS query_form_id, arg_min(template, ordinal) AS template
    FROM open_rows GROUP BY relation_id
), golds AS (
    SELECT f.relation_id, f.entity_id, f.entity, [f.answer] || coalesce(
               (SELECT list(al.alias) FROM dynamicqa_alias al WHERE al.fact_id = f.fact_id),
               []::VARCHAR[]) AS golds
    FROM (SELECT DISTINCT relation_id, entity_id, entity, fact_id, answer FROM open_rows) f
)
SELECT q.query_form_id, g.relation_id, g.entity_id, q.template, any_value(g.entity) AS entity,
       list_sort(list_distinct(flatten(list(g.golds)))) AS golds
FROM golds g
JOIN first_form q USING (relation_id)
GROUP BY q.query_form_id, g.relation_id, g.entity_id, q.template
ORDER BY q.query_form_id, g.entity_id;
