-- The keys ({keys}: the k_<key> columns) of the rows of _cov_keys that match no warehouse fact, in
-- file order (user._match_keys). {cond}: as in user_keys_matched.sql.
SELECT {keys} FROM _cov_keys u
WHERE NOT EXISTS (SELECT 1 FROM v_entity v WHERE {cond})
ORDER BY rid
