-- The template of relation $1's first query form, open forms first (fakes.plan).
SELECT template FROM query_form WHERE relation_id = ?
ORDER BY query_type = 'open' DESC, ordinal LIMIT 1
