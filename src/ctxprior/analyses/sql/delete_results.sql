-- Drop the stored rows of the runs in $1 and the analyses in $2 (before `analyze` stores new ones).
DELETE FROM analysis_result
WHERE list_contains($1::INTEGER[], run_id) AND list_contains($2::VARCHAR[], analysis)
