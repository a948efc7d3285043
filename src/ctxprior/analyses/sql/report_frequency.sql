-- The report's correlation table (frequency, degree, covariate) of the runs in $1: pooled rows first.
SELECT run_id, analysis, note AS covariate, relation, query_type, n1 AS n, effect_size AS rho, p,
       p_adj, significant FROM analysis_result
WHERE analysis IN ('frequency', 'degree', 'covariate') AND list_contains($1::INTEGER[], run_id)
  AND skip_reason IS NULL ORDER BY run_id, analysis, relation <> '(all)', relation, query_type
