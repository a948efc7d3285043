-- The summary's correlations of the runs in $1: pooled Spearman rho per analysis and query type.
SELECT analysis, query_type, effect_size AS rho, p, n1 AS n, note FROM analysis_result
WHERE list_contains($1::INTEGER[], run_id) AND test = 'spearman' AND relation = '(all)'
  AND skip_reason IS NULL
ORDER BY ALL
