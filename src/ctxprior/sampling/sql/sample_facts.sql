-- The facts of the given relations (? = list of relation ids), with names and degrees,
-- as the sampler needs them.
SELECT f.fact_id, f.relation_id, f.position, f.entity_kind, f.entity_id, f.answer_id,
       e.name AS entity, e.entity_class, a.name AS answer, f.uri_degree, f.predicate_degree
FROM fact f
JOIN entity e USING (entity_id)
LEFT JOIN answer a USING (answer_id)
WHERE f.relation_id IN (SELECT unnest(?::INTEGER[]))
ORDER BY f.relation_id, f.entity_kind, f.position;
