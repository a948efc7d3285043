-- Body of the view cov_<name> of a `known` covariate (known.store_answers): one row per fact of
-- the run's judged attributes (stg_known_attribute: under ferrando and ctxprior-samples every fact of the entity in the
-- relation the run scored shares the attribute's row), with the entity's label (stg_known_entity) and the
-- attribute's own counts. {run_id}: an integer literal (a view takes no parameter).
SELECT v.dataset, v.relation, v.entity, v.entity_kind, v.answer,
       CASE k.familiarity WHEN 'known' THEN 1 WHEN 'unknown' THEN 0 END AS known,
       k.familiarity,
       k.rule,
       k.n_attributes         AS entity_attributes,
       k.n_correct_attributes AS entity_correct_attributes,
       k.n_refused_attributes AS entity_refused_attributes,
       k.accuracy             AS entity_accuracy,
       k.n_answers            AS entity_answers,
       k.n_correct            AS entity_correct,
       t.correct::INTEGER     AS attribute_correct,
       t.label                AS attribute_label,
       t.n_answers            AS fact_answers,
       t.n_correct            AS fact_correct,
       t.n_correct / t.n_answers AS fact_accuracy,
       {run_id} AS run_id, v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM stg_known_attribute t
JOIN v_entity v ON v.relation_id = t.relation_id AND v.entity_id = t.entity_id
               AND (t.fact_id IS NULL OR v.fact_id = t.fact_id)
JOIN stg_known_entity k ON k.run_id = {run_id} AND k.entity_id = t.entity_id
WHERE t.run_id = {run_id}
  AND v.fact_id IN (SELECT fact_id FROM susceptibility WHERE run_id = {run_id})
