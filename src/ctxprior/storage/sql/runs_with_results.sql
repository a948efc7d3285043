-- Runs with stored analysis rows (the default runs of figures and the report).
SELECT DISTINCT run_id FROM analysis_result
UNION
SELECT DISTINCT run_id FROM analysis_distribution
ORDER BY 1
