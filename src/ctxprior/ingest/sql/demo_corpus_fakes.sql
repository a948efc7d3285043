-- Two of the demo's fake entities (demo.write_demo_corpus: they occur in passing in its corpus).
SELECT entity FROM v_entity
WHERE dataset = 'demo' AND entity_kind = 'fake'
ORDER BY relation, position LIMIT 2
