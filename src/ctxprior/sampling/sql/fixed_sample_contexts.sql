-- The fixed-context items of dataset ? (`ctxprior sample --design fixed`), in source order, each
-- with its passages in their order: the item's fact, relation and entity, and per passage its
-- template, type, supported answer and text.
SELECT fi.fact_id, fi.relation_id, f.entity_id, fi.source_row,
       fc.context_template_id, fc.context_type, fc.answer_id, fc.text
FROM fixed_item fi
JOIN fact f ON f.fact_id = fi.fact_id
JOIN fixed_context fc ON fc.fact_id = fi.fact_id
WHERE fi.dataset_id = ?
ORDER BY fi.source_row, fi.fact_id, fc.ordinal
