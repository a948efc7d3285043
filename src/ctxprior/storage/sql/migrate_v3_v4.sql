-- Schema v3 -> v4 (migrations._v3_to_v4): in reliance, ctxprior's forced choice gets its own
-- columns, choice and choice_source (added first, from their declaration: measures.py). A row
-- written before v4 decided its outcome by that forced choice: it keeps outcome and outcome_source
-- ('argmax' | 'full-answer', which says so; v_reliance_rates.outcome_rule shows it), and the same
-- values are copied into choice and choice_source.
UPDATE reliance SET choice = outcome, choice_source = outcome_source
WHERE choice IS NULL AND outcome_source IN ('argmax', 'full-answer');
