-- Tables 1-2 rows stored for the runs in the list ? (analyses.py stored_report), partitions in order.
SELECT * FROM dynamicqa_summary WHERE run_id IN (SELECT unnest(?::INTEGER[])) ORDER BY run_id,
    CASE partition WHEN 'static' THEN 0 WHEN 'temporal' THEN 1 ELSE 2 END
