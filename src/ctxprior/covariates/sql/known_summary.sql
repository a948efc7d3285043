-- What `covariates known` reports for a run: entities per familiarity and answers judged. $run_id.
SELECT count(*) AS n_entities,
       count(*) FILTER (WHERE familiarity = 'known') AS n_known,
       count(*) FILTER (WHERE familiarity = 'unknown') AS n_unknown,
       count(*) FILTER (WHERE familiarity = 'partial') AS n_partial,
       coalesce(sum(n_answers), 0)::BIGINT AS n_answers,
       coalesce(sum(n_correct), 0)::BIGINT AS n_correct
FROM stg_known_entity WHERE run_id = $run_id;
