-- The gold / context answer pairs run ? could not tell apart (score.collision_line): how many,
-- how many outcomes the full answers decided, and one example pair.
SELECT count(*) FILTER (WHERE r.collision),
       count(*) FILTER (WHERE r.outcome_source = 'full-answer'),
       any_value('''' || ga.name || ''' / ''' || ca.name || '''') FILTER (WHERE r.collision)
FROM reliance r
JOIN fact f ON f.fact_id = r.fact_id
JOIN context c ON c.context_id = r.context_id
LEFT JOIN answer ga ON ga.answer_id = f.answer_id
LEFT JOIN answer ca ON ca.answer_id = c.answer_id
WHERE r.run_id = ?
