-- The demo's real facts with an answer (demo.write_demo_corpus: the facts its corpus states).
SELECT entity, answer FROM v_entity
WHERE dataset = 'demo' AND entity_kind = 'real' AND answer IS NOT NULL
ORDER BY relation, position
