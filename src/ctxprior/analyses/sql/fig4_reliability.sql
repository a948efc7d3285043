-- Fig. 4: the reliability distributions of the runs in $1.
SELECT * EXCLUDE (created_at) FROM analysis_distribution WHERE analysis = 'reliability'
AND list_contains($1::INTEGER[], run_id) ORDER BY run_id, query_type, series
