-- Facts of dataset $1 with at least one yago_qec degree (catalog.register_fact_degrees;
-- the columns of catalog.FACT_DEGREE_COLUMNS).
SELECT count(*) FROM fact f JOIN relation r USING (relation_id)
WHERE r.dataset_id = ?
  AND (f.predicate_degree IS NOT NULL OR f.uri_degree IS NOT NULL OR f.namesake_degree IS NOT NULL
       OR f.namesake_num_uris IS NOT NULL)
