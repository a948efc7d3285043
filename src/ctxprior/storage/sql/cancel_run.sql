-- Run ? cancelled at ? unless it is done (an end time it has is kept).
UPDATE run SET status = 'cancelled', ended_at = coalesce(ended_at, ?)
WHERE run_id = ? AND status <> 'done'
