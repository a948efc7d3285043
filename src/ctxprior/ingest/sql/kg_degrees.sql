-- build-dataset, pass 2: total degree of every IRI in _kgb_x = the number of distinct triples of
-- the triple files with it as subject or object (the definition of `covariates kg-degree`;
-- duplicates and self-loops count once). Placeholder: {{triples}} (TripleFiles.sql()).
-- The distinct triples that touch _kgb_x are found first (one row per triple), then each counts
-- for its subject and, unless it is a self-loop, for its object. The IN tests run as semi joins
-- on the stream.
-- types: the rdf:type objects of the IRI (as a subject), for the entity classes of relations
-- without an entity-side class filter.
SELECT e, count(*) AS total_degree, list(DISTINCT t) FILTER (WHERE t IS NOT NULL) AS types FROM (
    SELECT unnest([CASE WHEN sx THEN s END, CASE WHEN ox AND o <> s THEN o END]) AS e,
           unnest([CASE WHEN sx AND p = {rdf_type} AND NOT starts_with(o, '"') THEN o END, NULL]) AS t FROM (
        SELECT DISTINCT s, p, o, sx, ox FROM (
            SELECT s, p, o, s IN (SELECT e FROM _kgb_x) AS sx, o IN (SELECT e FROM _kgb_x) AS ox
            FROM ({triples})
            WHERE s IS NOT NULL)
        WHERE sx OR ox))
WHERE e IS NOT NULL
GROUP BY e
