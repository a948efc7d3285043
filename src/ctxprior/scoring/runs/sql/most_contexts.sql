-- The most contexts one relation of sample ? has (the automatic shard size's input; score.py).
SELECT max(n) FROM (SELECT count(*) AS n FROM context WHERE sample_id = ? GROUP BY relation_id)
