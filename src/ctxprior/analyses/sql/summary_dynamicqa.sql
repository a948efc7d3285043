-- The summary's DynamicQA line of each dynamic run in $1: % persuaded and mean CP per partition.
SELECT run_id, partition, pct_persuaded, cp FROM dynamicqa_summary
WHERE list_contains($1::INTEGER[], run_id)
ORDER BY run_id, CASE partition WHEN 'static' THEN 0 WHEN 'temporal' THEN 1 ELSE 2 END
