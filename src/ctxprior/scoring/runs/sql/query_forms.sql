-- Every query form by relation, open before closed, in ordinal order (the unit order).
SELECT relation_id, query_form_id, query_type FROM query_form
ORDER BY relation_id, query_type DESC, ordinal
