-- One line about a sample (? = sample_id).
SELECT s.sample_id, d.name, s.seed, s.design,
       (SELECT count(DISTINCT relation_id) FROM sample_fact WHERE sample_id = s.sample_id),
       (SELECT count(*) FROM sample_fact WHERE sample_id = s.sample_id),
       (SELECT count(*) FROM context WHERE sample_id = s.sample_id)
FROM sample s JOIN dataset d USING (dataset_id)
WHERE s.sample_id = ?;
