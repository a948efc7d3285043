-- Facts and contexts of sample ? (what `ctxprior sample-dynamic` prints). Parameter: sample_id, twice.
SELECT (SELECT count(*) FROM sample_fact WHERE sample_id = ?),
       (SELECT count(*) FROM context WHERE sample_id = ?)
