-- build-dataset, pass 1: one scan of the triple files keeps what the dataset needs and counts
-- the rest per file. Placeholder {{triples}}: TripleFiles.sql(line_numbers=True). Parameters:
-- $labels_only (a --labels file: labels only), $lang_tag ('"@' + --lang), $rdf_type. A triple is an
-- edge (predicate of a relation, _kgb_rel), a label (a label predicate, _kgb_label_pred, with a
-- literal in the chosen language or without a language tag) or a type (rdf:type of a filter
-- class, _kgb_rel_class).
-- Rows: kind = edge | label | type -- one per distinct triple and file, n = how often it occurs;
--       kind = bad | other -- one per file, n = number of such lines; bad_lines = the first 5
--       line numbers of malformed lines.
SELECT kind, filename,
       CASE WHEN kind IN ('bad', 'other') THEN NULL ELSE s END AS s,
       CASE WHEN kind IN ('bad', 'other') THEN NULL ELSE p END AS p,
       CASE WHEN kind IN ('bad', 'other') THEN NULL ELSE o END AS o,
       count(*) AS n,
       min(line_no, 5) FILTER (WHERE kind = 'bad') AS bad_lines
FROM (SELECT filename, line_no, s, p, o,
             CASE WHEN s IS NULL THEN 'bad'
                  WHEN NOT $labels_only AND p IN (SELECT predicate FROM _kgb_rel) THEN 'edge'
                  WHEN p IN (SELECT p FROM _kgb_label_pred) AND starts_with(o, '"')
                       AND (ends_with(lower(o), $lang_tag) OR regexp_full_match(o, '".*"(\^\^\S+)?'))
                       THEN 'label'
                  WHEN NOT $labels_only AND p = $rdf_type AND o IN (SELECT class FROM _kgb_rel_class)
                       THEN 'type'
                  ELSE 'other' END AS kind
      FROM ({triples}))
GROUP BY ALL
