-- Fig. 8: the (run, relation, query type) with the largest real-vs-fake effect (first run in $1).
SELECT run_id, relation, query_type FROM analysis_result
WHERE analysis = 'familiarity' AND test = 'independent' AND skip_reason IS NULL
  AND list_contains($1::INTEGER[], run_id) ORDER BY run_id, effect_size DESC LIMIT 1
