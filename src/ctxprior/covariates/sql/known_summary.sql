-- What `covariates known` reports for a run: entities per familiarity, attributes and answers
-- judged, entities with fewer attributes than the rule needs to call one known. $run_id.
SELECT count(*) AS n_entities,
       count(*) FILTER (WHERE familiarity = 'known') AS n_known,
       count(*) FILTER (WHERE familiarity = 'unknown') AS n_unknown,
       count(*) FILTER (WHERE familiarity = 'partial') AS n_partial,
       coalesce(sum(n_attributes), 0)::BIGINT AS n_attributes,
       coalesce(sum(n_correct_attributes), 0)::BIGINT AS n_correct_attributes,
       coalesce(sum(n_refused_attributes), 0)::BIGINT AS n_refused_attributes,
       count(*) FILTER (WHERE n_attributes < min_attributes) AS n_too_few_attributes,
       coalesce(sum(n_answers), 0)::BIGINT AS n_answers,
       coalesce(sum(n_correct), 0)::BIGINT AS n_correct
FROM stg_known_entity WHERE run_id = $run_id;
