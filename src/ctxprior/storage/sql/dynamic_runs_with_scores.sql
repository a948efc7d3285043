-- Dynamic (score-dynamic) runs with at least one DynamicQA score: the default dynamic runs of `analyze`.
SELECT DISTINCT s.run_id FROM dynamicqa_score s JOIN run r USING (run_id)
WHERE r.kind = 'dynamic' ORDER BY 1
