-- The report's table of one comparison ($1) on the runs in $2: the tests that ran.
SELECT run_id, relation, query_type, test, n1, n2, mean1, mean2, t, p, p_adj, significant,
       effect_size FROM analysis_result WHERE analysis = $1 AND list_contains($2::INTEGER[], run_id)
       AND skip_reason IS NULL ORDER BY run_id, test, query_type, p
