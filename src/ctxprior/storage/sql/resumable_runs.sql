-- Unfinished runs of kind ? (of sample ? when not NULL, given twice), newest first.
SELECT run_id, config_json FROM run WHERE kind = ? AND (? IS NULL OR sample_id = ?)
AND status <> 'done' ORDER BY run_id DESC
