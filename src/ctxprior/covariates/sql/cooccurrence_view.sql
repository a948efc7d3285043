-- Body of the view cov_<name> of a co-occurrence covariate (cooccurrence.view_sql): per fact the
-- counts summed over the counted shards. {covariate_id}, {window}: integer literals (a view takes
-- no parameter).
WITH pc AS (SELECT pair_id, sum("count") AS n FROM cooccurrence_pair_count
            WHERE covariate_id = {covariate_id} GROUP BY pair_id),
     nc AS (SELECT name_id, sum("count") AS n FROM cooccurrence_name_count
            WHERE covariate_id = {covariate_id} GROUP BY name_id)
SELECT DISTINCT
       f.dataset,
       f.relation,
       f.entity,
       f.answer,
       (CASE WHEN cf.pair_id IS NOT NULL THEN coalesce(pc.n, 0) END)::BIGINT        AS cooccurrence,
       (CASE WHEN cf.entity_name_id IS NOT NULL THEN coalesce(ne.n, 0) END)::BIGINT AS entity_count,
       (CASE WHEN cf.answer_name_id IS NOT NULL THEN coalesce(na.n, 0) END)::BIGINT AS answer_count,
       {window} AS "window"
FROM cooccurrence_fact cf
JOIN stg_fact f ON f.fact_id = cf.fact_id
LEFT JOIN pc ON pc.pair_id = cf.pair_id
LEFT JOIN nc ne ON ne.name_id = cf.entity_name_id
LEFT JOIN nc na ON na.name_id = cf.answer_name_id
WHERE cf.covariate_id = {covariate_id}
