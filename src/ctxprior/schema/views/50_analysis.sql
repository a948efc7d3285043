-- Analysis views. Every analysis SQL file (src/ctxprior/queries/*.sql) reads the runs to
-- analyze from `analysis_runs`:
--   * unset:   every finished persuasion run (status = 'done');
--   * chosen:  SET VARIABLE run_ids = [3, 4];   (what `ctxprior analyze --run 3 --run 4` does)
-- so `ctxprior sql --file src/ctxprior/queries/relevance.sql` works as is.
CREATE OR REPLACE VIEW analysis_runs AS
SELECT run_id, model, sample_id, seed
FROM run
WHERE CASE WHEN getvariable('run_ids') IS NULL THEN status = 'done' AND kind = 'persuasion'
           ELSE list_contains(getvariable('run_ids'), run_id) END;

-- Fig. 5 per model: share of relations significant and mean effect size per analysis.
CREATE OR REPLACE VIEW v_analysis_summary AS
SELECT a.run_id, r.model, a.analysis, a.query_type, a.test,
       count(*) FILTER (WHERE a.skip_reason IS NULL)            AS n_tests,
       count(*) FILTER (WHERE a.skip_reason IS NOT NULL)        AS n_skipped,
       count(*) FILTER (WHERE a.significant)                    AS n_significant,
       avg(CASE WHEN a.significant THEN 1.0 ELSE 0.0 END) FILTER (WHERE a.skip_reason IS NULL) AS share_significant,
       avg(a.effect_size) FILTER (WHERE a.skip_reason IS NULL)  AS mean_effect_size
FROM analysis_result a
JOIN run r USING (run_id)
WHERE a.relation <> '(all)'
GROUP BY ALL;
