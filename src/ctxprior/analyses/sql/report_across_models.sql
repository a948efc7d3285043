-- The report's Fig. 5 table: share significant and mean effect size per run and comparison
-- (runs in $1).
SELECT model, run_id, analysis, query_type, test, n_tests, n_significant, share_significant,
       mean_effect_size, n_skipped FROM v_analysis_summary WHERE list_contains($1::INTEGER[], run_id)
  AND analysis IN ('relevance', 'familiarity', 'assertive', 'negation')
ORDER BY analysis, test, query_type, run_id
