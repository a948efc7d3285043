-- The contexts of sample ? per relation, in ordinal order, with the answer each asserts (plan.py).
SELECT c.relation_id, c.context_id, c.text, a.name FROM context c
LEFT JOIN answer a ON a.answer_id = c.answer_id
WHERE c.sample_id = ? ORDER BY c.relation_id, c.ordinal
