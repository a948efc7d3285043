-- The @prefix / PREFIX declarations of Turtle files (triples.TripleFiles._read_prefixes): distinct
-- (prefix, IRI). {lines}: a read_csv of the files' lines; {prefix_re}: the PREFIX_RE literal.
SELECT DISTINCT x.p, x.i FROM (
    SELECT regexp_extract(line, {prefix_re}, ['p', 'i']) AS x FROM {lines}
    WHERE NOT starts_with(line, '<') AND regexp_matches(line, {prefix_re}))
ORDER BY 1, 2
