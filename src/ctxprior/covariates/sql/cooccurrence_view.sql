-- Body of the view cov_<name> of a co-occurrence covariate (cooccurrence.view_sql): per fact the
-- counts summed over the counted shards. {covariate_id}, {window}: integer literals (a view takes
-- no parameter). The joins are stg_fact's, written out: the plan (and so the order of rows that tie
-- in the analyses and figures reading this view) stays as it was.
WITH pc AS (SELECT pair_id, sum("count") AS n FROM cooccurrence_pair_count
            WHERE covariate_id = {covariate_id} GROUP BY pair_id),
     nc AS (SELECT name_id, sum("count") AS n FROM cooccurrence_name_count
            WHERE covariate_id = {covariate_id} GROUP BY name_id)
SELECT DISTINCT
       d.name       AS dataset,
       r.short_name AS relation,
       e.name       AS entity,
       a.name       AS answer,
       (CASE WHEN cf.pair_id IS NOT NULL THEN coalesce(pc.n, 0) END)::BIGINT        AS cooccurrence,
       (CASE WHEN cf.entity_name_id IS NOT NULL THEN coalesce(ne.n, 0) END)::BIGINT AS entity_count,
       (CASE WHEN cf.answer_name_id IS NOT NULL THEN coalesce(na.n, 0) END)::BIGINT AS answer_count,
       {window} AS "window"
FROM cooccurrence_fact cf
JOIN fact f ON f.fact_id = cf.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id
LEFT JOIN pc ON pc.pair_id = cf.pair_id
LEFT JOIN nc ne ON ne.name_id = cf.entity_name_id
LEFT JOIN nc na ON na.name_id = cf.answer_name_id
WHERE cf.covariate_id = {covariate_id}
