-- The relations of sample ? with contexts, in position order (plan.py, the unit order).
SELECT DISTINCT r.relation_id, r.name, r.short_name, r.position
FROM context c JOIN relation r USING (relation_id)
WHERE c.sample_id = ? ORDER BY r.position, r.relation_id
