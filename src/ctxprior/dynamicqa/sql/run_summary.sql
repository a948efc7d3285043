-- A dynamic run's status, facts done / total and answers generated, with the mean CP and mean
-- semantic entropy of its with-context conditions (what `ctxprior score-dynamic` prints).
-- Parameter: run_id.
SELECT r.status, r.units_done, r.units_total, coalesce(r.prompts_done, 0),
       (SELECT avg(cp) FROM dynamicqa_score s
        WHERE s.run_id = r.run_id AND s.condition <> 'none'),
       (SELECT avg(semantic_entropy) FROM dynamicqa_score s
        WHERE s.run_id = r.run_id AND s.condition <> 'none'),
       r.error
FROM run r WHERE r.run_id = ?
