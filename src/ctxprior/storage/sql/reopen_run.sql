-- A resume: run ? marked running again on host ?, PID ?; units_total ? when counted again.
UPDATE run SET status = 'running', host = ?, pid = ?, ended_at = NULL, error = NULL,
units_total = coalesce(?, units_total) WHERE run_id = ?
