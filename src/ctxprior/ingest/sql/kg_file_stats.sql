-- build-dataset: lines, malformed lines and the first malformed line numbers of file $1, from
-- _kgb_pick (kg_build._file_stats).
SELECT coalesce(sum(n), 0), coalesce(sum(n) FILTER (WHERE kind = 'bad'), 0),
       flatten(list(bad_lines) FILTER (WHERE kind = 'bad'))
FROM _kgb_pick WHERE filename = ?
