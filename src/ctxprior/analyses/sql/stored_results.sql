-- Stored analysis rows (api.results): of the runs in $1 (all when NULL), of analysis $2 (all
-- when NULL).
SELECT * FROM analysis_result
WHERE ($1 IS NULL OR list_contains($1::INTEGER[], run_id)) AND ($2 IS NULL OR analysis = $2)
ORDER BY run_id, analysis, relation, query_type, test
