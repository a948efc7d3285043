-- Run ?'s done units and the prompts they scored.
SELECT count(*), coalesce(sum(n_prompts), 0) FROM run_unit
WHERE run_id = ? AND status = 'done'
