-- The report's skipped tests of the runs in $1, grouped by analysis, test and reason.
SELECT analysis, test, skip_reason, count(*) AS n_tests,
       string_agg(DISTINCT relation, ', ') AS relations
FROM analysis_result WHERE skip_reason IS NOT NULL AND list_contains($1::INTEGER[], run_id)
GROUP BY ALL ORDER BY ALL
