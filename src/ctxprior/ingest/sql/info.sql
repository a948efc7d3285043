-- What the warehouse holds, one row per dataset.
SELECT d.name AS dataset,
       d.source_format AS format,
       (SELECT count(*) FROM relation r WHERE r.dataset_id = d.dataset_id) AS relations,
       (SELECT count(*) FROM fact f JOIN relation r USING (relation_id)
         WHERE r.dataset_id = d.dataset_id AND f.entity_kind = 'real') AS real_facts,
       (SELECT count(*) FROM fact f JOIN relation r USING (relation_id)
         WHERE r.dataset_id = d.dataset_id AND f.entity_kind = 'fake') AS fake_facts,
       (SELECT count(*) FROM entity e WHERE e.dataset_id = d.dataset_id AND e.kind = 'real') AS real_entities,
       (SELECT count(*) FROM entity e WHERE e.dataset_id = d.dataset_id AND e.kind = 'fake') AS fake_entities,
       (SELECT count(*) FROM sample s WHERE s.dataset_id = d.dataset_id) AS samples
FROM dataset d
ORDER BY d.dataset_id;
