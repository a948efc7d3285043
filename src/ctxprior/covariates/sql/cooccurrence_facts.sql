-- The facts to count (cooccurrence.plan): id, entity and answer names, of dataset $1 (NULL: all).
SELECT fact_id, entity, answer
FROM stg_fact
WHERE ? IS NULL OR dataset_id = ?
ORDER BY fact_id
