-- The report's runs table: model, dataset, seed, estimator and precision of the runs in $1.
SELECT r.run_id, r.model, d.name AS dataset, s.seed, r.estimator, r.dtype, r.quantization, r.status
FROM run r LEFT JOIN sample s USING (sample_id) LEFT JOIN dataset d ON d.dataset_id = s.dataset_id
WHERE list_contains($1::INTEGER[], r.run_id) ORDER BY r.run_id
