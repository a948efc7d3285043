-- The stored regression rows of the runs in ? (INTEGER[]), as analyze_dynamicqa wrote them.
SELECT * FROM dynamicqa_regression WHERE run_id IN (SELECT unnest(?::INTEGER[]))
ORDER BY run_id, rowid
