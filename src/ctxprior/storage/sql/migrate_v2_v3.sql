-- Schema v2 -> v3 (migrations._v2_to_v3): dataset.separator ('' for the datasets already there:
-- their prompts had none); in reliance, CK-PLUG's filtered confidence_gain (v2's whole-vocabulary
-- value moves to confidence_gain_vocab; the filtered one is NULL in older rows),
-- scaled_difference_memory, outcome_source ('argmax' for older rows) and collision (NULL: not
-- checked; those four columns are added first, from their declaration: measures.py); outcome and
-- confidence_gain become nullable.
ALTER TABLE dataset ADD COLUMN IF NOT EXISTS separator TEXT DEFAULT '';
UPDATE dataset SET separator = '' WHERE separator IS NULL;
ALTER TABLE reliance ALTER COLUMN confidence_gain DROP NOT NULL;
ALTER TABLE reliance ALTER COLUMN outcome DROP NOT NULL;
UPDATE reliance SET confidence_gain_vocab = confidence_gain, confidence_gain = NULL, outcome_source = 'argmax'
WHERE outcome_source IS NULL;
