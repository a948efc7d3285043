-- Run ? as a resume reads it.
SELECT run_id, kind, sample_id, status, config_json, model_revision FROM run
WHERE run_id = ?
