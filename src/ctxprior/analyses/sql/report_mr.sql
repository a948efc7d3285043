-- The report's memorization-ratio table: Spearman rho(MR, chi) of the runs in $1.
SELECT run_id, query_type, effect_size AS spearman_rho, p, n1 AS n FROM analysis_result
WHERE analysis = 'mr' AND list_contains($1::INTEGER[], run_id) AND skip_reason IS NULL ORDER BY ALL
