-- Analysis views. Every analysis SQL file (src/ctxprior/analyses/*.sql) reads the runs to
-- analyze from `analysis_runs`:
--   * unset:   every finished persuasion run (status = 'done');
--   * chosen:  SET VARIABLE run_ids = [3, 4];   (what `ctxprior analyze --run 3 --run 4` does)
-- so `ctxprior sql --file src/ctxprior/analyses/relevance.sql` works as is.
-- columns:
--   seed: random seed of the run
CREATE OR REPLACE VIEW analysis_runs AS
SELECT run_id, model, sample_id, seed
FROM stg_run
WHERE CASE WHEN getvariable('run_ids') IS NULL THEN status = 'done' AND kind = 'persuasion'
           ELSE list_contains(getvariable('run_ids'), run_id) END;

-- Fig. 5 per model: share of relations significant and mean effect size per analysis.
-- columns:
--   n_tests: tests that ran (per relation; the all-relations rows left out)
--   n_skipped: tests that did not run (skip_reason says why)
--   n_significant: tests significant after the Benjamini-Hochberg correction
--   share_significant: share of the tests that ran that are significant
--   mean_effect_size: mean effect size of the tests that ran (Cohen's d, d_z or Spearman rho, by test)
CREATE OR REPLACE VIEW v_analysis_summary AS
SELECT a.run_id, a.model, a.analysis, a.query_type, a.test,
       count(*) FILTER (WHERE a.skip_reason IS NULL)            AS n_tests,
       count(*) FILTER (WHERE a.skip_reason IS NOT NULL)        AS n_skipped,
       count(*) FILTER (WHERE a.significant)                    AS n_significant,
       avg(CASE WHEN a.significant THEN 1.0 ELSE 0.0 END) FILTER (WHERE a.skip_reason IS NULL) AS share_significant,
       avg(a.effect_size) FILTER (WHERE a.skip_reason IS NULL)  AS mean_effect_size
FROM stg_analysis_result a
WHERE a.relation <> '(all)'
GROUP BY ALL;

-- Seed replicates (reliability across seeds, Fig. 4). The replicate key of a run is everything
-- that changes its scores except the sample's seed: kind, model, model revision, dtype,
-- quantization, estimator and its options (run.config_json -> identity.score, without
-- shard_size, which only changes how the work is split), and the sample's dataset, design,
-- sizes, context types and parameters (sample.params_json without seed). Runs with the same key
-- and different sample seeds are seed replicates.
-- columns:
--   replicate_key: everything two runs must share to be seed replicates (model, revision, dtype,
--     quantization, estimator and options, dataset, sampling parameters but the seed), as JSON
--   seed: the sample's seed
CREATE OR REPLACE VIEW v_run_replicate AS
SELECT r.run_id, r.kind, r.status, r.model, r.sample_id, r.dataset_id, r.seed,
       to_json(struct_pack(
           kind := r.kind, model := r.model, model_revision := r.model_revision, dtype := r.dtype,
           quantization := coalesce(r.quantization, 'none'), estimator := r.estimator,
           estimator_options := json_merge_patch(coalesce(json_extract(r.config_json, '$.identity.score'), '{}'),
                                                 '{"shard_size": null}'),
           dataset_id := r.dataset_id, design := r.design, n_entities := r.n_entities,
           n_contexts := r.n_contexts, context_types := r.context_types,
           sample_params := json_merge_patch(coalesce(r.params_json, '{}'), '{"seed": null}')))::VARCHAR AS replicate_key
FROM stg_run_sample r;

-- The runs of `analysis_runs` in replicate groups (grp, numbered by key). Of several runs with the
-- same key and the same sample seed only one counts (they are the same measurement, not a
-- replicate): the latest finished one (highest run_id among status 'done', else the highest).
-- group_run_id = the group's first counted run.
-- columns:
--   replicate_key: everything two runs must share to be seed replicates (model, revision, dtype,
--     quantization, estimator and options, dataset, sampling parameters but the seed), as JSON
--   seed: the sample's seed
--   counted: false when another run of the group has the same seed (the latest finished one counts)
--   grp: replicate group number (within the analyzed runs)
--   group_run_id: the group's first counted run; its reliability rows carry this run_id
--   reason: why a run does not count, when it does not
CREATE OR REPLACE VIEW analysis_replicates AS
WITH k AS (
    SELECT v.*, first_value(v.run_id) OVER (PARTITION BY v.replicate_key, v.seed
                                            ORDER BY v.status = 'done' DESC, v.run_id DESC) AS counted_run_id
    FROM analysis_runs ar JOIN v_run_replicate v ON v.run_id = ar.run_id
)
SELECT run_id, model, dataset_id, sample_id, seed, replicate_key, run_id = counted_run_id AS counted,
       dense_rank() OVER (ORDER BY replicate_key) AS grp,
       min(run_id) FILTER (WHERE run_id = counted_run_id) OVER (PARTITION BY replicate_key) AS group_run_id,
       CASE WHEN run_id <> counted_run_id THEN 'run ' || run_id || ' has the same sample seed ' || seed
            || ' as run ' || counted_run_id || ' and agrees with it in everything else; run '
            || counted_run_id || ' counts (the latest finished run)' END AS reason
FROM k;
