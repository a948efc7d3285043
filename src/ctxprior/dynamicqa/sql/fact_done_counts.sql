-- Run ?'s done units recounted from dynamicqa_fact_done, its prompts grown by ? (run ?).
UPDATE run SET units_done = (SELECT count(*) FROM dynamicqa_fact_done WHERE run_id = ?),
prompts_done = coalesce(prompts_done, 0) + ? WHERE run_id = ?
