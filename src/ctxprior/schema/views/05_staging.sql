-- Staging views (dbt-style `stg_*`): each join chain of the warehouse written once. The readable
-- views (v_*) and the analysis SQL files (analyses/*.sql, dynamicqa/sql/*.sql) build on these
-- instead of repeating the joins. DuckDB adds the rows of a group in the order its join plan
-- delivers them, so another join tree changes the last bit of a stored mean (docs/warehouse.md):
-- a file that sums or averages floats reads a view of exactly its own join chain (the analyses'
-- chains at the end). The score views below join in the order the v_* views always did, so the
-- plans over them are unchanged.
-- Internal: `view_names()` leaves them out, so they are not exported or published; their columns
-- may change with the code that reads them. in_case_study: the fact belongs to a case-study
-- dataset (friend_enemy, gender), which the general analyses leave out.

-- Column meanings (the dataset card reads them; tests/test_view_meanings.py checks them): the
-- `-- columns:` block directly above a view gives its own; a column a view does not explain
-- means what the block below says, else what it means in the view or table it reads from.
-- shared columns:
--   run_id: scoring run that produced the row (see config `run`)
--   model: model id / alias / path as given to the run
--   dataset: dataset name (dataset.name)
--   relation: relation short name, e.g. about, reverse-founder (relation.short_name)
--   query_form: query form name: open_0, open_1, closed_0, closed_1, ...
--   query_type: open | closed
--   entity: queried entity name
--   entity_kind: real | fake (fake entities were generated and borrow a real entity's answer)
--   entity_class: class of the entity, e.g. from YAGO
--   answer: the fact's answer (the queried entity's true answer; a fake entity borrows it)
--   entity_uri: entity URI in the source knowledge graph
--   answer_uri: answer URI in the source knowledge graph
--   context: context text
--   context_type: base | assertive | negation | ... (template family of the context)
--   seed: sampling seed of the sample
--   relation_id: id of a `relation` row (see config `relation`)
--   entity_id: id of an `entity` row (see config `entity`)
--   answer_id: id of an `answer` row (see config `answer`)
--   fact_id: id of a `fact` row: an (entity, answer) pair of a relation (see config `fact`)
--   n_contexts: number of contexts in the mixture p(A|q(e))
--   persuasion: psi(c, q(e)) = KL(p(A|c,q(e)) || p(A|q(e))) in nats, p(A|q(e)) the mixture over the
--     sample's contexts
--   susceptibility: chi(q(e)) = I(C; A | q(e)) = mean over contexts of psi(c, q(e)), nats
--   label: optional fact label, e.g. friend | enemy
--   category: optional fact category
--   ordinal: order within its parent

-- One row per fact: its relation, dataset, entity and answer (NULL when the dataset has none).
CREATE OR REPLACE VIEW stg_fact AS
SELECT f.fact_id, f.relation_id, f.entity_id, f.answer_id, r.dataset_id,
       d.name            AS dataset,
       d.source_format,
       d.source_format IN ('friend_enemy', 'gender') AS in_case_study,
       r.short_name      AS relation,
       r.name            AS relation_uri,
       e.name            AS entity,
       f.entity_kind,
       e.entity_class,
       e.uri             AS entity_uri,
       a.name            AS answer,
       a.uri             AS answer_uri,
       f.uri_degree, f.namesake_degree, f.namesake_num_uris, f.predicate_degree,
       f.label, f.category, f.position
FROM fact f
JOIN relation r USING (relation_id)
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id;

-- One row per context of a sample: the sample's seed, the relation, the entity the context
-- mentions and the answer it states (both NULL when it has none).
CREATE OR REPLACE VIEW stg_context AS
SELECT c.context_id, c.sample_id, c.relation_id, c.entity_id, c.answer_id, c.context_template_id,
       s.seed,
       d.name         AS dataset,
       r.short_name   AS relation,
       e.name         AS entity,
       e.kind         AS entity_kind,
       a.name         AS answer,
       c.context_type,
       c.text         AS context,
       c.ordinal
FROM context c
JOIN sample s USING (sample_id)
JOIN relation r ON r.relation_id = c.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
LEFT JOIN entity e ON e.entity_id = c.entity_id
LEFT JOIN answer a ON a.answer_id = c.answer_id;

-- One row per persuasion score ψ(c, q(e)): the run, the query form, the queried fact (the labels
-- of stg_fact) and the context. is_relevant: the context mentions the queried entity (by stored
-- entity id, never by substring) and its dataset does not type it 'irrelevant' (a fixed-context
-- dataset's passages all belong to their item; CUB's irrelevant passages are typed so).
CREATE OR REPLACE VIEW stg_persuasion AS
SELECT p.run_id, rn.model, rn.estimator, rn.sample_id,
       p.query_form_id, q.name AS query_form, q.query_type,
       p.fact_id, fa.relation_id, fa.entity_id, fa.answer_id, r.dataset_id,
       d.name          AS dataset,
       d.source_format,
       d.source_format IN ('friend_enemy', 'gender') AS in_case_study,
       r.short_name    AS relation,
       e.name          AS entity,
       fa.entity_kind,
       e.entity_class,
       a.name          AS answer,
       fa.label, fa.category,
       p.context_id,
       c.text          AS context,
       c.context_type,
       c.sample_id     AS context_sample_id,
       c.relation_id   AS context_relation_id,
       c.entity_id     AS context_entity_id,
       c.answer_id     AS context_answer_id,
       ca.name         AS context_answer,
       (c.entity_id IS NOT DISTINCT FROM fa.entity_id AND c.context_type IS DISTINCT FROM 'irrelevant')
           AS is_relevant,
       p.persuasion,
       p.entropy
FROM persuasion p
JOIN run rn USING (run_id)
JOIN query_form q USING (query_form_id)
JOIN fact fa USING (fact_id)
JOIN relation r ON r.relation_id = fa.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = fa.entity_id
LEFT JOIN answer a ON a.answer_id = fa.answer_id
JOIN context c ON c.context_id = p.context_id
LEFT JOIN answer ca ON ca.answer_id = c.answer_id;

-- One row per susceptibility score χ(q(e)): the run, the query form and the fact's labels.
CREATE OR REPLACE VIEW stg_susceptibility AS
SELECT s.run_id, rn.model, rn.sample_id,
       s.query_form_id, q.name AS query_form, q.query_type,
       s.fact_id, fa.relation_id, fa.entity_id, fa.answer_id, r.dataset_id,
       d.name          AS dataset,
       d.source_format,
       d.source_format IN ('friend_enemy', 'gender') AS in_case_study,
       r.short_name    AS relation,
       r.name          AS relation_uri,
       e.name          AS entity,
       fa.entity_kind,
       e.entity_class,
       a.name          AS answer,
       fa.label, fa.category, fa.uri_degree, fa.predicate_degree,
       s.susceptibility,
       s.n_contexts,
       s.mixture_entropy,
       s.mean_conditional_entropy,
       s.prior_entropy
FROM susceptibility s
JOIN run rn USING (run_id)
JOIN query_form q USING (query_form_id)
JOIN fact fa USING (fact_id)
JOIN relation r ON r.relation_id = fa.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = fa.entity_id
LEFT JOIN answer a ON a.answer_id = fa.answer_id;

-- One row per greedy generation (every run unless `--outcome-rule none`): its label, the fact's answer and the answer
-- the context states; conflict: they differ (case-insensitively, by name; false when either is
-- missing).
CREATE OR REPLACE VIEW stg_generation AS
SELECT g.run_id, g.query_form_id, g.fact_id, g.context_id, g.label,
       fa.name AS answer,
       ca.name AS context_answer,
       coalesce(lower(trim(ca.name)) <> lower(trim(fa.name)), false) AS conflict
FROM generation g
JOIN context c ON c.context_id = g.context_id
JOIN fact f ON f.fact_id = g.fact_id
LEFT JOIN answer ca ON ca.answer_id = c.answer_id
LEFT JOIN answer fa ON fa.answer_id = f.answer_id;

-- One row per DynamicQA fact (key: dataset, partition, id), in the source's terms.
-- columns:
--   id: the fact's `id` in the DynamicQA CSV (PopQA id for static/temporal); unique per partition
--   subject: the fact's subject (the queried entity)
--   object: the fact's object (its gold answer)
--   replace_name: the counter-memory substitute object (disputable: the competing value)
CREATE OR REPLACE VIEW stg_dynamicqa_fact AS
SELECT d.name                AS dataset,
       df.partition,
       df.source_id          AS id,
       e.name                AS subject,
       coalesce(df.relation_label, r.short_name) AS relation,
       a.name                AS object,
       ca.name               AS replace_name,
       df.num_edits,
       df.s_pop,
       df.o_pop,
       df.question,
       df.context,
       df.s_pop_new, df.o_pop_new, df.replace_quality, df.dir_info,
       df.subject_qid, df.relation_qid, df.object_qid, df.mask_count, df.mask_kind,
       df.fact_id, f.relation_id, f.entity_id, f.answer_id, df.counter_answer_id, d.dataset_id
FROM dynamicqa_fact df
JOIN fact f USING (fact_id)
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = df.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN answer a ON a.answer_id = f.answer_id
JOIN answer ca ON ca.answer_id = df.counter_answer_id;

-- One row per (dynamic run, fact, condition) score, with the fact's DynamicQA labels.
CREATE OR REPLACE VIEW stg_dynamicqa_score AS
SELECT s.run_id, rn.model,
       v.dataset, v.partition, v.id, v.subject, v.relation, v.object, v.replace_name,
       s.condition, s.context_answer,
       s.n_samples, s.n_clusters, s.semantic_entropy, s.semantic_entropy_mc, s.cp,
       s.greedy_answer, s.greedy_matches_gold, s.greedy_matches_context, s.sample_accuracy,
       s.persuaded, s.stubborn,
       v.num_edits, v.s_pop, v.o_pop, v.question,
       s.fact_id
FROM dynamicqa_score s
JOIN run rn USING (run_id)
JOIN stg_dynamicqa_fact v USING (fact_id);

-- One row per query form of a relation.
CREATE OR REPLACE VIEW stg_query_form AS
SELECT query_form_id, relation_id, name AS query_form, query_type, ordinal, template
FROM query_form;

-- The model's own familiarity with an entity (`ctxprior covariates known`). The rules are
-- declared here once (covariates/known.py describes them). One row per (run, attribute judged),
-- the rule that judged it and its counts of answers:
--   ferrando (closed_book_attribute; the default: Ferrando et al.'s released code,
--     javiferran/sae_entities): an attribute is one entity's facts in one relation, asked once with
--     the relation's first open query form; one greedy completion, labelled correct / refusal /
--     error (covariates/ferrando.py: get_label); refused: its label is refusal;
--   ctxprior-samples (closed_book_sample): the same attributes; n_answers samples, n_correct of
--     them match a gold answer; correct when n_correct >= min_correct (the covariate's params);
--   greedy-majority (closed_book_answer): one row per fact, one greedy answer per open query form;
--     correct is NULL (that rule judges the entity's answers, not its attributes).
CREATE OR REPLACE VIEW stg_known_attribute AS
SELECT a.run_id, any_value(a.covariate_id) AS covariate_id, 'greedy-majority' AS rule,
       f.relation_id, f.entity_id, a.fact_id,
       count(*)::BIGINT                          AS n_answers,
       count(*) FILTER (WHERE a.correct)::BIGINT AS n_correct,
       NULL::INTEGER                             AS min_correct,
       NULL::BOOLEAN                             AS correct,
       NULL::INTEGER                             AS min_attributes,
       NULL::BOOLEAN                             AS refused,
       NULL::VARCHAR                             AS label
FROM closed_book_answer a
JOIN fact f ON f.fact_id = a.fact_id
GROUP BY a.run_id, f.relation_id, f.entity_id, a.fact_id
UNION ALL
SELECT s.run_id, s.covariate_id, 'ctxprior-samples' AS rule,
       s.relation_id, s.entity_id, NULL::INTEGER AS fact_id,
       count(*)::BIGINT                          AS n_answers,
       count(*) FILTER (WHERE s.correct)::BIGINT AS n_correct,
       any_value(p.min_correct)                  AS min_correct,
       count(*) FILTER (WHERE s.correct) >= any_value(p.min_correct) AS correct,
       any_value(p.min_attributes)               AS min_attributes,
       NULL::BOOLEAN                             AS refused,
       NULL::VARCHAR                             AS label
FROM closed_book_sample s
JOIN (SELECT covariate_id,
             json_extract(params_json, '$.min_correct')::INTEGER    AS min_correct,
             json_extract(params_json, '$.min_attributes')::INTEGER AS min_attributes
      FROM covariate) p ON p.covariate_id = s.covariate_id
GROUP BY s.run_id, s.covariate_id, s.relation_id, s.entity_id
UNION ALL
SELECT run_id, covariate_id, 'ferrando' AS rule, relation_id, entity_id, NULL::INTEGER AS fact_id,
       1::BIGINT AS n_answers, (label = 'correct')::BIGINT AS n_correct, NULL::INTEGER AS min_correct,
       label = 'correct' AS correct, NULL::INTEGER AS min_attributes, label = 'refusal' AS refused,
       label
FROM closed_book_attribute;

-- One row per (run, entity) over its judged attributes (stg_known_attribute), n of them:
--   ferrando: `known` with at least greatest(2, n - 1) correct attributes and no refusal, `unknown`
--     with none correct, `partial` otherwise (the released code's `llama3_filter_*_is_known` of
--     filter_known_unknown_wikidata.py without entity types: player >= 2 of 3, city >= 3 of 4 and
--     no refusal; docs/departures.md says what differs);
--   ctxprior-samples: `known` with at least min_attributes correct attributes, `unknown` with
--     none, `partial` otherwise;
--   greedy-majority: `known` when at least half of its greedy answers are correct, `unknown` when
--     none is, `partial` otherwise.
-- `partial` entities are left out of the known / unknown comparison (analysis `known`).
CREATE OR REPLACE VIEW stg_known_entity AS
SELECT run_id, entity_id, rule,
       count(*)::BIGINT                   AS n_attributes,
       CASE WHEN rule <> 'greedy-majority' THEN count(*) FILTER (WHERE correct) END::BIGINT AS n_correct_attributes,
       CASE WHEN rule = 'ferrando' THEN count(*) FILTER (WHERE refused) END::BIGINT AS n_refused_attributes,
       sum(n_answers)::BIGINT             AS n_answers,
       sum(n_correct)::BIGINT             AS n_correct,
       sum(n_correct) / sum(n_answers)    AS accuracy,
       CASE WHEN rule = 'ferrando' THEN greatest(2, count(*) - 1)
            ELSE any_value(min_attributes) END::INTEGER AS min_attributes,
       CASE WHEN rule = 'ferrando' THEN
                CASE WHEN count(*) FILTER (WHERE correct) >= greatest(2, count(*) - 1)
                          AND NOT bool_or(refused) THEN 'known'
                     WHEN count(*) FILTER (WHERE correct) = 0 THEN 'unknown'
                     ELSE 'partial' END
            WHEN rule = 'ctxprior-samples' THEN
                CASE WHEN count(*) FILTER (WHERE correct) = 0 THEN 'unknown'
                     WHEN count(*) FILTER (WHERE correct) >= any_value(min_attributes) THEN 'known'
                     ELSE 'partial' END
            WHEN sum(n_correct) = 0 THEN 'unknown'
            WHEN 2 * sum(n_correct) >= sum(n_answers) THEN 'known'
            ELSE 'partial' END            AS familiarity
FROM stg_known_attribute
GROUP BY run_id, entity_id, rule;

-- One row per fixed-context item (`ingest table --shape contexts`, nq-swap, conflictqa,
-- counterfact), in the source's terms; joins stg_susceptibility / stg_persuasion USING (fact_id).
CREATE OR REPLACE VIEW stg_fixed_item AS
SELECT d.name          AS dataset,
       fi.item_key     AS item,
       fi.question,
       e.name          AS entity,
       ga.name         AS gold_answer,
       fi.source_row,
       fi.fact_id, fi.relation_id, f.entity_id, fi.gold_answer_id, fi.dataset_id
FROM fixed_item fi
JOIN fact f ON f.fact_id = fi.fact_id
JOIN dataset d ON d.dataset_id = fi.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN answer ga ON ga.answer_id = fi.gold_answer_id;

-- One row per sampled passage of a fixed-context item (a context of a `--design fixed` sample):
-- the item, the passage's label, type and supported answer; supports_gold: it supports the
-- item's gold answer (by answer id). Joins stg_persuasion USING (context_id).
CREATE OR REPLACE VIEW stg_fixed_context AS
SELECT c.context_id, c.sample_id,
       i.dataset, i.item, i.question, i.gold_answer,
       fc.label        AS context_label,
       fc.context_type,
       sa.name         AS supported_answer,
       (fc.answer_id IS NOT DISTINCT FROM i.gold_answer_id) AS supports_gold,
       fc.text         AS context,
       fc.ordinal,
       i.fact_id, fc.context_template_id, fc.answer_id AS supported_answer_id
FROM context c
JOIN fixed_context fc ON fc.context_template_id = c.context_template_id
JOIN stg_fixed_item i ON i.fact_id = fc.fact_id
LEFT JOIN answer sa ON sa.answer_id = fc.answer_id;

-- The analyses' own join chains (analyses/*.sql read only stg_* views; tests/test_staging.py checks
-- it). A mean over these rows depends on the order the join plan delivers them, so each chain is
-- the one its analyses wrote before, join for join: the plans and the stored numbers are the same.

-- One row per persuasion score ψ(c, q(e)) with the labels the context comparisons group by
-- (relevance, assertive, negation, gender).
CREATE OR REPLACE VIEW stg_persuasion_cell AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.persuasion,
       f.relation_id, f.entity_id,
       r.short_name    AS relation,
       d.source_format IN ('friend_enemy', 'gender') AS in_case_study,
       e.name          AS entity,
       e.entity_class,
       q.query_type,
       q.name          AS query_form,
       c.context_type,
       c.sample_id     AS context_sample_id,
       c.relation_id   AS context_relation_id,
       c.entity_id     AS context_entity_id
FROM persuasion p
JOIN fact f ON f.fact_id = p.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN query_form q ON q.query_form_id = p.query_form_id
JOIN context c ON c.context_id = p.context_id;

-- One row per persuasion score with the queried entity and the context's type and entity: the
-- keys of context_cells.sql's sums, before any label is joined.
CREATE OR REPLACE VIEW stg_persuasion_context AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.persuasion,
       f.entity_id,
       c.context_type,
       c.entity_id     AS context_entity_id
FROM persuasion p
JOIN fact f ON f.fact_id = p.fact_id
JOIN context c ON c.context_id = p.context_id;

-- One row per persuasion score that has a greedy generation: its label.
CREATE OR REPLACE VIEW stg_persuasion_generation AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.persuasion,
       g.label
FROM persuasion p
JOIN generation g ON g.run_id = p.run_id AND g.query_form_id = p.query_form_id
                 AND g.fact_id = p.fact_id AND g.context_id = p.context_id;

-- One row per susceptibility score χ(q(e)) with the fact's labels (susceptibility_by_fact, mr).
CREATE OR REPLACE VIEW stg_susceptibility_cell AS
SELECT s.run_id, s.query_form_id, s.fact_id, s.susceptibility,
       d.name          AS dataset,
       d.source_format IN ('friend_enemy', 'gender') AS in_case_study,
       r.short_name    AS relation,
       r.name          AS relation_uri,
       q.query_type,
       q.name          AS query_form,
       f.relation_id, f.entity_id, f.entity_kind, f.predicate_degree, f.uri_degree,
       e.name          AS entity,
       a.name          AS answer
FROM susceptibility s
JOIN fact f ON f.fact_id = s.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id
JOIN query_form q ON q.query_form_id = s.query_form_id;

-- One row per score with its query type (reliability.sql: variances across seeds and query forms);
-- stg_persuasion_text adds the context's relation and text, by which seeds are matched.
CREATE OR REPLACE VIEW stg_susceptibility_type AS
SELECT s.run_id, s.query_form_id, s.fact_id, s.susceptibility, q.query_type
FROM susceptibility s
JOIN query_form q USING (query_form_id);

CREATE OR REPLACE VIEW stg_persuasion_type AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.persuasion, q.query_type
FROM persuasion p
JOIN query_form q USING (query_form_id);

CREATE OR REPLACE VIEW stg_persuasion_text AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.persuasion, q.query_type,
       c.relation_id   AS context_relation_id,
       c.text          AS context
FROM persuasion p
JOIN query_form q USING (query_form_id)
JOIN context c ON c.context_id = p.context_id;

-- The readable views' own join chains (the v_* views of schema/views/*.sql read only stg_* views
-- and other views; tests/test_staging.py checks it). Each is the chain its view wrote before, join
-- for join, so the views' plans, rows and means are the same.

-- One row per queried fact of a sample, with the fact's labels (v_sample_entity).
CREATE OR REPLACE VIEW stg_sample_fact AS
SELECT sf.sample_id, sf.ordinal,
       v.dataset, v.relation, v.entity, v.entity_kind, v.entity_class, v.answer,
       v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM sample_fact sf
JOIN stg_fact v USING (fact_id);

-- One row per persuasion score ψ(c, q(e)) with the fact's relation, the query form and the
-- context: the rows v_kappa averages per (run, relation, query form, context).
CREATE OR REPLACE VIEW stg_persuasion_kappa AS
SELECT p.run_id, p.query_form_id, p.fact_id, p.context_id, p.relation_id, p.persuasion,
       r.short_name    AS relation,
       q.name          AS query_form,
       q.query_type,
       c.context_type,
       c.text          AS context
FROM (SELECT pp.*, f.relation_id FROM persuasion pp JOIN fact f USING (fact_id)) p
JOIN relation r ON r.relation_id = p.relation_id
JOIN query_form q ON q.query_form_id = p.query_form_id
JOIN context c ON c.context_id = p.context_id;

-- One row per reliance row: every column of table reliance, whose measures are declared once
-- (ctxprior/measures.py; v_reliance names each as r.<name>), so a new measure needs no line here.
CREATE OR REPLACE VIEW stg_reliance AS
SELECT * FROM reliance;

-- One row per (run, query form, fact, layer) of a per-layer run (`score --per-layer`).
CREATE OR REPLACE VIEW stg_susceptibility_layer AS
SELECT run_id, query_form_id, fact_id, layer, susceptibility, mixture_entropy, mean_conditional_entropy
FROM susceptibility_layer;

-- One row per covariate of the catalog, with its dataset's name (NULL: every dataset).
CREATE OR REPLACE VIEW stg_covariate AS
SELECT c.covariate_id, c.dataset_id, c.name, c.kind,
       d.name          AS dataset,
       c.view_name, c.key_columns, c.value_columns, c.status, c.n_rows, c.n_matched,
       c.source_path, c.source_sha256, c.description, c.params_json, c.data_table,
       c.added_at, c.updated_at
FROM covariate c
LEFT JOIN dataset d USING (dataset_id);

-- One row per counted corpus shard of a co-occurrence covariate, with the covariate's name.
CREATE OR REPLACE VIEW stg_cooccurrence_shard AS
SELECT s.covariate_id, s.shard_id,
       c.name          AS covariate,
       s.path, s.size_bytes, s.n_lines, s.n_documents, s.n_words, s.n_bad_json, s.n_missing_text,
       s.bad_examples, s.seconds, s.worker, s.finished_at, s.sha256
FROM cooccurrence_shard s
JOIN covariate c USING (covariate_id);

-- One row per run (seed: the run's own seed), for analysis_runs.
CREATE OR REPLACE VIEW stg_run AS
SELECT run_id, kind, status, model, sample_id, seed
FROM run;

-- One row per run with what makes seed replicates (v_run_replicate): the run's model, precision
-- and estimator, and its sample's dataset, design and sizes (seed: the sample's seed).
CREATE OR REPLACE VIEW stg_run_sample AS
SELECT r.run_id, r.kind, r.status, r.model, r.model_revision, r.dtype, r.quantization, r.estimator,
       r.config_json, r.sample_id,
       s.dataset_id, s.seed, s.design, s.n_entities, s.n_contexts, s.context_types, s.params_json
FROM run r
LEFT JOIN sample s ON s.sample_id = r.sample_id;

-- One row per stored analysis result, with its run's model (v_analysis_summary).
CREATE OR REPLACE VIEW stg_analysis_result AS
SELECT a.run_id, r.model, a.analysis, a.relation, a.query_type, a.test,
       a.significant, a.effect_size, a.skip_reason
FROM analysis_result a
JOIN run r USING (run_id);
