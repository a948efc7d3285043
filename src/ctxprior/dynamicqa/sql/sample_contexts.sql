-- The two contexts of each chosen DynamicQA fact (`make_sample`), parameter: the fact ids.
-- One row per (fact, context type): the fact's relation, entity and answer, its counter answer
-- (replace_name) and the context template at the fact's position; original before counter.
SELECT f.fact_id, f.relation_id, f.entity_id, f.answer_id, a.name, df.counter_answer_id, ca.name,
       ct.context_template_id, ct.context_type, ct.template
FROM fact f JOIN dynamicqa_fact df USING (fact_id)
JOIN answer a ON a.answer_id = f.answer_id JOIN answer ca ON ca.answer_id = df.counter_answer_id
JOIN context_template ct ON ct.relation_id = f.relation_id AND ct.ordinal = f.position
WHERE f.fact_id IN (SELECT unnest(?::INTEGER[]))
ORDER BY f.relation_id, f.position, ct.context_type DESC
