-- Facts of dataset ? with their question, obj, replace_name and aliases (the threshold calibration
-- pairs; generate.py calibrate).
SELECT v.fact_id, v.question, v.object, v.replace_name,
       list(al.alias ORDER BY al.ordinal) AS aliases
FROM v_dynamicqa_fact v LEFT JOIN dynamicqa_alias al USING (fact_id)
WHERE v.dataset_id = ? GROUP BY ALL ORDER BY v.fact_id
