-- Readable core views: the join graph resolved to names.

-- One row per (relation, entity) fact: real entities and the fake entities that borrow the
-- answer of the real entity at the same position.
CREATE OR REPLACE VIEW v_entity AS
SELECT d.name            AS dataset,
       r.short_name      AS relation,
       e.name            AS entity,
       f.entity_kind     AS entity_kind,
       e.entity_class    AS entity_class,
       a.name            AS answer,
       e.uri             AS entity_uri,
       a.uri             AS answer_uri,
       f.uri_degree,
       f.namesake_degree,
       f.namesake_num_uris,
       f.predicate_degree,
       f.label,
       f.category,
       f.position,
       r.name            AS relation_uri,
       f.fact_id, f.relation_id, f.entity_id, f.answer_id, d.dataset_id
FROM fact f
JOIN relation r USING (relation_id)
JOIN dataset d ON d.dataset_id = r.dataset_id
JOIN entity e ON e.entity_id = f.entity_id
LEFT JOIN answer a ON a.answer_id = f.answer_id;

-- One row per context of a sample: the entity it mentions and the answer it states.
CREATE OR REPLACE VIEW v_context AS
SELECT c.sample_id,
       s.seed,
       d.name         AS dataset,
       r.short_name   AS relation,
       e.name         AS entity,
       ek.entity_kind AS entity_kind,
       a.name         AS answer,
       c.context_type,
       c.text         AS context,
       c.ordinal,
       c.context_id, c.relation_id, c.entity_id, c.answer_id, c.context_template_id
FROM context c
JOIN sample s USING (sample_id)
JOIN relation r ON r.relation_id = c.relation_id
JOIN dataset d ON d.dataset_id = r.dataset_id
LEFT JOIN entity e ON e.entity_id = c.entity_id
LEFT JOIN (SELECT entity_id, kind AS entity_kind FROM entity) ek ON ek.entity_id = c.entity_id
LEFT JOIN answer a ON a.answer_id = c.answer_id;

-- The queried facts of each sample.
CREATE OR REPLACE VIEW v_sample_entity AS
SELECT sf.sample_id, v.dataset, v.relation, v.entity, v.entity_kind, v.entity_class, v.answer,
       sf.ordinal, v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM sample_fact sf
JOIN v_entity v USING (fact_id);
