-- Body of the view cov_<name> of a KG-degree covariate (kg_degree.view_sql). {covariate_id}: an
-- integer literal; {where}: WHERE v.dataset_id = <integer literal>, or nothing for every dataset
-- (a view takes no parameter).
SELECT v.dataset, v.relation, v.entity, v.entity_kind, v.answer,
       (CASE WHEN ked.entity_uri IS NOT NULL THEN coalesce(kd.degree, 0) END)::BIGINT AS degree,
       ked.total_degree,
       v.entity_uri, v.relation_uri, v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM v_entity v
LEFT JOIN kg_entity_degree ked ON ked.covariate_id = {covariate_id} AND ked.entity_uri = v.entity_uri
LEFT JOIN kg_degree kd ON kd.covariate_id = {covariate_id} AND kd.entity_uri = v.entity_uri
      AND kd.relation_uri = regexp_replace(v.relation_uri, '^reverse-', '')
{where}
