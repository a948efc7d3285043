-- Each entity's total degree (distinct triples with it as subject or object) and number of
-- predicates, of covariate $1, into kg_entity_degree (kg_degree._insert_degrees).
INSERT INTO kg_entity_degree
SELECT $1::INTEGER, e, count(*), count(DISTINCT p) FROM (
  SELECT s, p, o, s AS e FROM _kg_t WHERE s IN (SELECT uri FROM _kg_uri)
  UNION
  SELECT s, p, o, o AS e FROM _kg_t WHERE o IN (SELECT uri FROM _kg_uri))
GROUP BY e
