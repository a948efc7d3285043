-- The samples of `ctxprior info`: id, dataset, design, seed, relations, entities, contexts.
SELECT s.sample_id, d.name, s.design, s.seed,
       (SELECT count(DISTINCT relation_id) FROM sample_fact f WHERE f.sample_id = s.sample_id),
       (SELECT count(*) FROM sample_fact f WHERE f.sample_id = s.sample_id),
       (SELECT count(*) FROM context c WHERE c.sample_id = s.sample_id)
FROM sample s JOIN dataset d USING (dataset_id)
ORDER BY 1
