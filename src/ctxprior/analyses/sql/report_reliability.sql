-- The report's reliability table of the runs in $1.
SELECT model, run_ids, query_type, series, n, n_nan, median, q75, max FROM analysis_distribution
WHERE analysis = 'reliability' AND list_contains($1::INTEGER[], run_id) ORDER BY ALL
