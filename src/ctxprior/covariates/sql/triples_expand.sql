-- Expanded terms of the raw triples (triples.TripleFiles.sql): {keep} the file (and line) columns,
-- {s_}/{p_}/{o_} the prefix expansions of s, p, o (triples.expand_sql), {raw} the raw query
-- (triples_tsv.sql / triples_rdf.sql). s is NULL for a malformed line: one that is not a triple, or
-- in N-Triples / Turtle (rdf) one with a prefixed name of an undeclared prefix.
SELECT {keep},
       CASE WHEN rdf AND (s_ IS NULL OR p_ IS NULL OR o_ IS NULL) THEN NULL ELSE coalesce(s_, s) END AS s,
       CASE WHEN rdf AND (s_ IS NULL OR p_ IS NULL OR o_ IS NULL) THEN NULL ELSE coalesce(p_, p) END AS p,
       CASE WHEN rdf AND (s_ IS NULL OR p_ IS NULL OR o_ IS NULL) THEN NULL ELSE coalesce(o_, o) END AS o
FROM (SELECT *, {s_} AS s_, {p_} AS p_, {o_} AS o_
      FROM ({raw}))
