-- Readable core views: the join graph resolved to names.

-- One row per (relation, entity) fact: real entities and the fake entities that borrow the
-- answer of the real entity at the same position.
CREATE OR REPLACE VIEW v_entity AS
SELECT dataset, relation, entity, entity_kind, entity_class, answer, entity_uri, answer_uri,
       uri_degree, namesake_degree, namesake_num_uris, predicate_degree, label, category, position,
       relation_uri,
       fact_id, relation_id, entity_id, answer_id, dataset_id
FROM stg_fact;

-- One row per context of a sample: the entity it mentions and the answer it states.
CREATE OR REPLACE VIEW v_context AS
SELECT sample_id, seed, dataset, relation, entity, entity_kind, answer, context_type, context, ordinal,
       context_id, relation_id, entity_id, answer_id, context_template_id
FROM stg_context;

-- The queried facts of each sample.
CREATE OR REPLACE VIEW v_sample_entity AS
SELECT sample_id, dataset, relation, entity, entity_kind, entity_class, answer,
       ordinal, fact_id, relation_id, entity_id, answer_id
FROM stg_sample_fact;
