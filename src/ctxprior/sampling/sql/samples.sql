-- One row per sample: id, dataset, design, seed, relations, entities, contexts (api.samples).
SELECT s.sample_id, d.name AS dataset, s.design, s.seed,
       (SELECT count(DISTINCT relation_id) FROM sample_fact f WHERE f.sample_id = s.sample_id) AS relations,
       (SELECT count(*) FROM sample_fact f WHERE f.sample_id = s.sample_id) AS entities,
       (SELECT count(*) FROM context c WHERE c.sample_id = s.sample_id) AS contexts
FROM sample s JOIN dataset d USING (dataset_id) ORDER BY 1
