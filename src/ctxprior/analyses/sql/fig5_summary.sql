-- Fig. 5: share significant and mean effect size of the four context / entity comparisons (runs in $1).
-- series: the runs a line may join, those that tested the same relations of the same sample (models
-- scored alike); a run of another sample or another relation set (e.g. the demo's one-relation
-- memorization run) is a point of its own, not a step of a trend.
WITH tested AS (
    SELECT a.run_id, r.sample_id, string_agg(DISTINCT a.relation, ',' ORDER BY a.relation) AS relations
    FROM analysis_result a JOIN run r USING (run_id)
    WHERE list_contains($1::INTEGER[], a.run_id) AND a.relation <> '(all)'
    GROUP BY a.run_id, r.sample_id
)
SELECT s.run_id, s.model, s.analysis, s.query_type, s.n_tests, s.n_skipped, s.n_significant,
       s.share_significant, s.mean_effect_size,
       dense_rank() OVER (ORDER BY t.sample_id, t.relations) AS series
FROM v_analysis_summary s JOIN tested t USING (run_id)
WHERE list_contains($1::INTEGER[], s.run_id) AND s.test = 'independent'
  AND s.analysis IN ('relevance', 'familiarity', 'assertive', 'negation')
ORDER BY s.run_id, s.analysis, s.query_type
