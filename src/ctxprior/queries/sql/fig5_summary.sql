-- Fig. 5: share significant and mean effect size of the four context / entity comparisons (runs in $1).
SELECT run_id, model, analysis, query_type, n_tests, n_skipped, n_significant,
       share_significant, mean_effect_size
FROM v_analysis_summary WHERE list_contains($1::INTEGER[], run_id) AND test = 'independent'
  AND analysis IN ('relevance', 'familiarity', 'assertive', 'negation')
ORDER BY run_id, analysis, query_type
