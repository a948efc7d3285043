-- DynamicQA Tables 1-2 analogues per run and partition.
-- Parameter 1: INTEGER[] of run ids. Variable se_shift: the likelihood shift (5) the released code
-- subtracts from every cluster log-likelihood before averaging, i.e. adds to -(1/K) sum_k log p(k)
-- (semantic.LIKELIHOOD_SHIFT); with it, a run with se_form = authors gives the paper's Table 2
-- quantity. Instances = (fact, context condition): 2 per fact, as in the paper's Table 1
-- (N = 2 x facts). Accuracy with context: the greedy answer states the context's answer; without
-- context: it states obj (not defined for disputable facts); matching per the run's labels rule.
WITH s AS (
    SELECT s.*, df.partition
    FROM dynamicqa_score s
    JOIN dynamicqa_fact df USING (fact_id)
    WHERE s.run_id IN (SELECT unnest(?::INTEGER[]))
),
with_ctx AS (
    SELECT run_id, partition,
           count(DISTINCT fact_id)                       AS n_facts,
           count(*)                                      AS n_instances,
           100.0 * avg(persuaded::INTEGER)               AS pct_persuaded,
           100.0 * avg(stubborn::INTEGER)                AS pct_stubborn,
           avg(greedy_matches_context::INTEGER)          AS accuracy_with_context,
           avg(semantic_entropy)                         AS se_with_context,
           avg(semantic_entropy_mc) + getvariable('se_shift') AS se_mc_with_context,
           avg(cp)                                       AS cp
    FROM s WHERE condition <> 'none'
    GROUP BY run_id, partition
),
no_ctx AS (
    SELECT run_id, partition,
           CASE WHEN partition = 'disputable' THEN NULL
                ELSE avg(greedy_matches_gold::INTEGER) END AS accuracy_without_context,
           avg(semantic_entropy)                         AS se_without_context,
           avg(semantic_entropy_mc) + getvariable('se_shift') AS se_mc_without_context
    FROM s WHERE condition = 'none'
    GROUP BY run_id, partition
)
SELECT w.run_id, w.partition, r.model, w.n_facts, w.n_instances, w.pct_persuaded, w.pct_stubborn,
       w.accuracy_with_context, n.accuracy_without_context,
       w.se_with_context, n.se_without_context, w.se_mc_with_context, n.se_mc_without_context, w.cp
FROM with_ctx w
JOIN no_ctx n USING (run_id, partition)
JOIN run r USING (run_id)
ORDER BY w.run_id, CASE w.partition WHEN 'static' THEN 0 WHEN 'temporal' THEN 1 ELSE 2 END;
