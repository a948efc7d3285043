-- The distinct parsed triples that touch an entity URI of the warehouse, as temp table _kg_t
-- (kg_degree._load_triples). {parsed}: the parsing query of the triple files (triples.TripleFiles).
CREATE OR REPLACE TEMP TABLE _kg_t AS
SELECT DISTINCT s, p, o FROM ({parsed})
WHERE s IS NOT NULL AND (s IN (SELECT uri FROM _kg_uri) OR o IN (SELECT uri FROM _kg_uri))
