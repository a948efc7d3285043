-- The facts of sample ? by relation, in sampled order.
SELECT relation_id, fact_id FROM sample_fact WHERE sample_id = ?
ORDER BY relation_id, ordinal, fact_id
