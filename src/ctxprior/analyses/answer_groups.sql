-- analysis: answer-groups
-- order: 50
-- help: psi of contexts the model followed (CONTEXT) vs those it resisted (ORIGINAL) (§4.2.2, Fig. 2)
-- compare: CONTEXT > ORIGINAL
-- design: paired
-- unit: mean psi per (entity, query form, answer group)
-- summary: context-agreeing answers have higher persuasion
-- report-title: Persuasion by the model's answer (§4.2.2, Fig. 2)
-- report: Contexts after which the model answered with the context's answer vs those after which it
-- report: kept the original answer.
-- figure: fig2_answer_groups
-- Persuasion by answer group (paper §4.2.2, Fig. 2): contexts whose greedy generation agrees
-- with the context (CONTEXT), with the original answer (ORIGINAL) or neither (OTHER).
-- One row per (run, query form, fact, answer group): the mean persuasion ψ of those contexts.
-- Needs runs scored with generations (--memorization). Runs: `analysis_runs`.
WITH cells AS (   -- the one big join first, on the score keys only
    SELECT p.run_id, p.query_form_id, p.fact_id, p.label AS grp,
           avg(p.persuasion) AS value,
           count(*) AS n_rows,
           count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
    FROM stg_persuasion_generation p
    WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
    GROUP BY ALL
)
SELECT cl.run_id, f.relation_id, f.relation, q.query_type,
       cl.query_form_id, q.query_form, cl.fact_id, f.entity_id, f.entity,
       cl.grp, cl.value, cl.n_rows, cl.n_nan
FROM cells cl
JOIN stg_fact f ON f.fact_id = cl.fact_id
JOIN stg_query_form q ON q.query_form_id = cl.query_form_id
WHERE NOT f.in_case_study
ORDER BY cl.run_id, f.relation_id, cl.query_form_id, cl.fact_id, cl.grp;
