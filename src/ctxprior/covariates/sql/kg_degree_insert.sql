-- delta(e, q) of covariate $1 into kg_degree (kg_degree._insert_degrees): per entity URI and
-- predicate, the distinct other ends of the triples in _kg_t that touch an entity URI (_kg_uri).
INSERT INTO kg_degree
SELECT $1::INTEGER, e, p, count(*) FROM (
  SELECT s AS e, p, o AS a FROM _kg_t WHERE s IN (SELECT uri FROM _kg_uri)
  UNION
  SELECT o AS e, p, s AS a FROM _kg_t WHERE o IN (SELECT uri FROM _kg_uri))
GROUP BY e, p
