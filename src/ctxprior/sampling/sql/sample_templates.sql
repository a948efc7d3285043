-- The context templates of the relations $1 (INTEGER[]) of a sample (sampling), by type and ordinal.
SELECT relation_id, context_template_id, context_type, template FROM context_template
WHERE relation_id IN (SELECT unnest(?::INTEGER[]))
ORDER BY relation_id, context_type, ordinal
