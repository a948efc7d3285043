-- The model's own familiarity with an entity (`ctxprior covariates known`; Ferrando et al. 2025):
-- one row per (run, entity) over the run's closed-book answers (every open query form of every
-- fact of the entity). The rule, declared here once: `known` when at least half of the answers
-- are correct, `unknown` when none is, `partial` otherwise (the paper's "other" group, left out
-- of the known / unknown comparison).
CREATE OR REPLACE VIEW stg_known_entity AS
SELECT a.run_id, f.entity_id,
       count(*)::BIGINT                          AS n_answers,
       count(*) FILTER (WHERE a.correct)::BIGINT AS n_correct,
       avg(a.correct::DOUBLE)                    AS accuracy,
       CASE WHEN count(*) FILTER (WHERE a.correct) = 0 THEN 'unknown'
            WHEN 2 * count(*) FILTER (WHERE a.correct) >= count(*) THEN 'known'
            ELSE 'partial' END                  AS familiarity
FROM closed_book_answer a
JOIN fact f ON f.fact_id = a.fact_id
GROUP BY a.run_id, f.entity_id;
