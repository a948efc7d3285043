-- Table 3 input: one row per (run, fact, context condition) with CP and its predictors.
-- Parameter 1: INTEGER[] of run ids. SE is the authors' Monte-Carlo form (their Table 2/3 scale).
-- o_pop is NULL for disputable facts, so those rows drop out of the regression (complete cases).
SELECT c.run_id, c.fact_id, c.condition, c.partition,
       c.cp,
       c.num_edits,
       c.s_pop,
       c.o_pop,
       n.semantic_entropy_mc AS se_without_context,
       c.semantic_entropy_mc AS se_with_context
FROM stg_dynamicqa_score c
JOIN stg_dynamicqa_score n ON n.run_id = c.run_id AND n.fact_id = c.fact_id AND n.condition = 'none'
WHERE c.run_id IN (SELECT unnest(?::INTEGER[])) AND c.condition <> 'none'
ORDER BY c.run_id, c.fact_id, c.condition;
