-- Readable core views: the join graph resolved to names.

-- One row per (relation, entity) fact: real entities and the fake entities that borrow the
-- answer of the real entity at the same position.
-- columns:
--   relation_uri: relation id as in the source file (relation.name)
--   position: index of the fact in the source lists; a fake entity shares it with the real entity
--     whose answer it borrows
CREATE OR REPLACE VIEW v_entity AS
SELECT dataset, relation, entity, entity_kind, entity_class, answer, entity_uri, answer_uri,
       uri_degree, namesake_degree, namesake_num_uris, predicate_degree, label, category, position,
       relation_uri,
       fact_id, relation_id, entity_id, answer_id, dataset_id
FROM stg_fact;

-- One row per context of a sample: the entity it mentions and the answer it states.
-- columns:
--   entity: entity the context mentions (NULL for fixed texts)
--   entity_kind: real | fake, of the entity the context mentions
--   answer: answer the context states
--   context: the context text, prepended to the query
--   ordinal: position in the relation's context list of the sample
--   entity_id: entity the context mentions (see config `entity`)
--   answer_id: answer the context states (see config `answer`)
CREATE OR REPLACE VIEW v_context AS
SELECT sample_id, seed, dataset, relation, entity, entity_kind, answer, context_type, context, ordinal,
       context_id, relation_id, entity_id, answer_id, context_template_id
FROM stg_context;

-- The queried facts of each sample.
-- columns:
--   ordinal: order of the entity within its relation in the sample
CREATE OR REPLACE VIEW v_sample_entity AS
SELECT sample_id, dataset, relation, entity, entity_kind, entity_class, answer,
       ordinal, fact_id, relation_id, entity_id, answer_id
FROM stg_sample_fact;
