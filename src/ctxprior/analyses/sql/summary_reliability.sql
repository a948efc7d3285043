-- The summary's reliability medians of the runs in $1.
SELECT query_type, series, median FROM analysis_distribution
WHERE list_contains($1::INTEGER[], run_id) AND analysis = 'reliability' ORDER BY ALL
