-- The runs with stored analyses (the default runs of `figures` and `report`).
SELECT DISTINCT run_id FROM analysis_result UNION SELECT DISTINCT run_id FROM analysis_distribution ORDER BY 1
