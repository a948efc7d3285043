-- Reliability (paper §4.2.2-4.2.3, Fig. 4): variance of ψ and χ across seeds and across the
-- query forms of one query type. Seeds: runs are seed replicates when they agree in everything
-- but the sample's seed (model, revision, dtype, quantization, estimator and its options, the
-- sample's dataset, design, sizes, context types and parameters: view v_run_replicate); of
-- several runs with the same sample seed only the latest finished one counts (view
-- analysis_replicates; `analyze` stores the sets in analysis_replicate). For ψ across seeds, a
-- context is matched by (relation, text) and kept only when it was sampled for every seed. One
-- row per (replicate group, query type, series) with the distribution of the per-item sample
-- variances (var_samp); NaN variances (from NaN scores) are counted in n_nan and left out of the
-- quartiles. Groups with one seed get the across-query-forms series only.
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
WITH runs AS (
    SELECT run_id, model, seed, grp FROM analysis_replicates WHERE counted
),
groups AS (
    SELECT grp, min(run_id) AS run_id, string_agg(run_id::VARCHAR, ',' ORDER BY run_id) AS run_ids,
           any_value(model) AS model, count(DISTINCT seed) AS n_seeds
    FROM runs GROUP BY grp
),
chi_seed AS (
    SELECT ru.grp, s.query_type, var_samp(s.susceptibility) AS v
    FROM stg_susceptibility_type s JOIN runs ru USING (run_id)
    JOIN groups g ON g.grp = ru.grp AND g.n_seeds >= 2
    GROUP BY ru.grp, s.query_type, s.query_form_id, s.fact_id
    HAVING count(DISTINCT ru.seed) = any_value(g.n_seeds)
),
psi_seed AS (
    SELECT ru.grp, p.query_type, var_samp(p.persuasion) AS v
    FROM stg_persuasion_text p JOIN runs ru USING (run_id)
    JOIN groups g ON g.grp = ru.grp AND g.n_seeds >= 2
    GROUP BY ru.grp, p.query_type, p.query_form_id, p.fact_id, p.context_relation_id, p.context
    HAVING count(DISTINCT ru.seed) = any_value(g.n_seeds)
),
chi_form AS (
    SELECT ru.grp, s.query_type, var_samp(s.susceptibility) AS v
    FROM stg_susceptibility_type s JOIN runs ru USING (run_id)
    GROUP BY ru.grp, s.run_id, s.query_type, s.fact_id
    HAVING count(*) >= 2
),
psi_form AS (
    SELECT ru.grp, p.query_type, var_samp(p.persuasion) AS v
    FROM stg_persuasion_type p JOIN runs ru USING (run_id)
    GROUP BY ru.grp, p.run_id, p.query_type, p.fact_id, p.context_id
    HAVING count(*) >= 2
),
items AS (
    SELECT grp, query_type, 'susceptibility across seeds' AS series, v FROM chi_seed
    UNION ALL SELECT grp, query_type, 'persuasion across seeds', v FROM psi_seed
    UNION ALL SELECT grp, query_type, 'susceptibility across query forms', v FROM chi_form
    UNION ALL SELECT grp, query_type, 'persuasion across query forms', v FROM psi_form
)
SELECT g.run_id, g.run_ids, g.model, i.query_type, i.series,
       count(*) FILTER (WHERE NOT isnan(i.v)) AS n,
       count(*) FILTER (WHERE isnan(i.v)) AS n_nan,
       avg(i.v) FILTER (WHERE NOT isnan(i.v)) AS mean,
       quantile_cont(i.v, 0.25) FILTER (WHERE NOT isnan(i.v)) AS q25,
       median(i.v) FILTER (WHERE NOT isnan(i.v)) AS median,
       quantile_cont(i.v, 0.75) FILTER (WHERE NOT isnan(i.v)) AS q75,
       max(i.v) FILTER (WHERE NOT isnan(i.v)) AS max
FROM items i JOIN groups g USING (grp)
GROUP BY ALL
ORDER BY g.run_id, i.query_type, i.series;
