-- The declared answer space of sample ?'s dataset (schema/answer_labels.py), in its order (plan.py).
SELECT a.label FROM sample s JOIN answer_label a ON a.dataset_id = s.dataset_id
WHERE s.sample_id = ? ORDER BY a.ordinal
