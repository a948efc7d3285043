-- dtype and quantization of the runs in the list parameter $1 (precision_note).
SELECT run_id, coalesce(dtype, 'unknown dtype'), coalesce(quantization, 'none') FROM run
WHERE list_contains(?::INTEGER[], run_id) ORDER BY run_id
