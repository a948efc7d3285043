-- The first DynamicQA sample of dataset ? drawn with the same parameters (params_json ?).
SELECT min(sample_id) FROM sample WHERE dataset_id = ? AND design = 'dynamicqa'
AND params_json = ?
