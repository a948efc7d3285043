-- Rows of the user's table (temp table _cov_keys) whose keys match a warehouse fact
-- (user._match_keys). {cond}: the key conditions on u (_cov_keys) and v (v_entity), of user._condition.
SELECT count(*) FROM _cov_keys u
WHERE EXISTS (SELECT 1 FROM v_entity v WHERE {cond})
