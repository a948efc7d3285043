-- The report's table of one per-query-form comparison ($1: friend-enemy, gender) on the runs in $2.
SELECT run_id, query_type, test, n1, n2, mean1, mean2, t, p, p_adj, significant, effect_size,
       skip_reason FROM analysis_result WHERE analysis = $1 AND list_contains($2::INTEGER[], run_id)
ORDER BY ALL
