-- Every run (or run ?), with its failed units, the first unit error and the last unit's end time
-- (`ctxprior runs`; storage/runs.py list_runs). Parameters: run_id, run_id (NULL = every run).
SELECT r.run_id, r.kind, r.model, r.sample_id, r.status, r.units_done, r.units_total,
       r.prompts_done, r.started_at, r.ended_at, r.host, r.pid, r.error,
       (SELECT count(*) FROM run_unit u WHERE u.run_id = r.run_id AND u.status = 'failed'),
       (SELECT min(u.error) FROM run_unit u WHERE u.run_id = r.run_id AND u.status = 'failed'),
       (SELECT max(u.finished_at) FROM run_unit u WHERE u.run_id = r.run_id)
FROM run r WHERE ? IS NULL OR r.run_id = ? ORDER BY r.run_id
