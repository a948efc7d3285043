-- Rows of the DynamicQA tables stored for the dynamic runs in the list parameter $1.
SELECT (SELECT count(*) FROM dynamicqa_summary WHERE list_contains($1::INTEGER[], run_id))
     + (SELECT count(*) FROM dynamicqa_regression WHERE list_contains($1::INTEGER[], run_id))
