-- What score-dynamic needs of each fact in the list ? (fact ids): question, obj, replace_name,
-- context template and aliases (generate.py _fact_rows).
SELECT v.fact_id, v.partition, v.id, v.subject, v.object, v.replace_name, v.question,
       df.context_template, list(al.alias ORDER BY al.ordinal) AS aliases
FROM v_dynamicqa_fact v JOIN dynamicqa_fact df USING (fact_id)
LEFT JOIN dynamicqa_alias al USING (fact_id)
WHERE v.fact_id IN (SELECT unnest(?::INTEGER[])) GROUP BY ALL
