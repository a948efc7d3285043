-- The facts of sample ?: (fact_id, entity name, true answer name) for the units' prompts (plan.py).
SELECT f.fact_id, e.name, a.name FROM sample_fact sf JOIN fact f USING (fact_id)
JOIN entity e ON e.entity_id = f.entity_id LEFT JOIN answer a ON a.answer_id = f.answer_id
WHERE sf.sample_id = ?
