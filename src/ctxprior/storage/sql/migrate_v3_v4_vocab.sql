-- Schema v3 -> v4, the vocabulary half (migrations._v3_to_v4): until v4 an answer-set run stored
-- its candidate-set values under the sources' names (shift, jsd, confidence_gain,
-- scaled_difference, scaled_difference_memory); they move to the *_answer_set columns (added
-- first, from their declaration: measures.py), and the sources' columns of those rows become NULL
-- (the whole-vocabulary values were never computed; rescore to get them). shift and jsd become
-- nullable for that. First-token runs already stored the sources' values and keep them.
ALTER TABLE reliance ALTER COLUMN shift DROP NOT NULL;
ALTER TABLE reliance ALTER COLUMN jsd DROP NOT NULL;
UPDATE reliance SET shift_answer_set = shift, jsd_answer_set = jsd,
       confidence_gain_answer_set = confidence_gain,
       scaled_difference_answer_set = scaled_difference,
       scaled_difference_memory_answer_set = scaled_difference_memory,
       shift = NULL, jsd = NULL, confidence_gain = NULL, confidence_gain_vocab = NULL,
       scaled_difference = NULL, scaled_difference_memory = NULL
WHERE shift_answer_set IS NULL AND shift IS NOT NULL
  AND run_id IN (SELECT run_id FROM run WHERE estimator = 'answer-set');
