-- build-dataset: per relation (rid) the number of its triples, pairs and candidate entities
-- (kg_build._prepare, after kg_prepare.sql).
SELECT r.rid, 'triples', count(e.p) FROM _kgb_rel r LEFT JOIN _kgb_edge e ON e.p = r.predicate GROUP BY 1
UNION ALL SELECT rid, 'pairs', count(*) FROM _kgb_pair GROUP BY 1
UNION ALL SELECT rid, 'entities', count(DISTINCT entity) FROM _kgb_pair GROUP BY 1
