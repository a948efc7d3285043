-- Finished runs (of kind ? when not NULL, given twice) in id order.
SELECT run_id FROM run WHERE status = 'done' AND (? IS NULL OR kind = ?)
ORDER BY run_id
