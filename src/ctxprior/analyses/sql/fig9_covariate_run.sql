-- Fig. 9: the correlation to plot among the runs in $1 (frequency first, then degree, covariate).
SELECT run_id, analysis, note FROM analysis_result
WHERE analysis IN ('frequency', 'degree', 'covariate') AND relation = '(all)'
  AND list_contains($1::INTEGER[], run_id) ORDER BY analysis = 'frequency' DESC, analysis, run_id LIMIT 1
