-- Body of the view cov_<dataset>_degree (catalog.register_fact_degrees): the yago_qec degrees on
-- the fact rows of one dataset. {dataset_id}: an integer literal (a view takes no parameter).
SELECT dataset, relation, entity, entity_kind, answer,
       predicate_degree, uri_degree, namesake_degree, namesake_num_uris,
       entity_uri, relation_uri, fact_id, relation_id, entity_id, answer_id
FROM v_entity
WHERE dataset_id = {dataset_id}
