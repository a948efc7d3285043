-- Drop the stored distributions of the runs in $1 and the analyses in $2.
DELETE FROM analysis_distribution
WHERE list_contains($1::INTEGER[], run_id) AND list_contains($2::VARCHAR[], analysis)
