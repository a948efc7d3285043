-- build-dataset, after pass 2: per relation, the top {{k}} entities by total degree (then by the
-- relation degree delta, then by md5(seed, IRI): ties are broken by the seed, the same on every
-- machine), each with one answer, its names, its class and the four degree columns of a yago_qec fact.
-- delta(e, q) = |{{a : (e,q,a)}} U {{a : (a,q,e)}}| over all triples of the predicate (either direction).
-- Options (checked in Python): {{require_label}} both | entity | none: which (entity, answer) pairs
-- may be chosen (both, the authors' rule: the entity and an IRI answer need a label; literal
-- answers are their own names); {{answer_choice}} random | degree: which of an entity's answers
-- (random, the authors' rule: md5(seed, entity, answer) order; degree: a named one first, then
-- the highest total degree, then the chosen language, then md5).
-- Creates _kgb_chosen (one row per chosen fact).
CREATE OR REPLACE TEMP TABLE _kgb_chosen AS
WITH delta AS (
    SELECT rid, e, count(DISTINCT nb) AS delta FROM (
        SELECT r.rid, d.s AS e, d.o AS nb FROM _kgb_edge d JOIN _kgb_rel r ON d.p = r.predicate
        UNION ALL
        SELECT r.rid, d.o AS e, d.s AS nb FROM _kgb_edge d JOIN _kgb_rel r ON d.p = r.predicate)
    GROUP BY rid, e
),
best_label AS (
    SELECT e, first(label ORDER BY pred_rank, lang_rank, label) AS label FROM _kgb_label GROUP BY e
),
pair AS (
    SELECT p.* FROM _kgb_pair p
    WHERE CASE {require_label}
              WHEN 'none' THEN true
              WHEN 'entity' THEN p.entity IN (SELECT e FROM best_label)
              ELSE p.entity IN (SELECT e FROM best_label)
                   AND (starts_with(p.answer, '"') OR p.answer IN (SELECT e FROM best_label)) END
),
ranked AS (
    SELECT c.rid, c.entity, coalesce(g.total_degree, 0) AS total_degree, d.delta,
           row_number() OVER (PARTITION BY c.rid ORDER BY coalesce(g.total_degree, 0) DESC, d.delta DESC,
                                                        md5({seed} || c.entity)) - 1 AS position
    FROM (SELECT DISTINCT rid, entity FROM pair) c
    JOIN delta d ON d.rid = c.rid AND d.e = c.entity
    LEFT JOIN _kgb_deg g ON g.e = c.entity
),
chosen AS (SELECT * FROM ranked WHERE position < {k}),
answer AS (
    SELECT p.rid, p.entity, p.answer, starts_with(p.answer, '"') AS is_literal, bl.label AS answer_label,
           row_number() OVER (
               PARTITION BY p.rid, p.entity
               ORDER BY CASE WHEN {answer_choice} = 'degree'
                             THEN (starts_with(p.answer, '"') OR bl.label IS NOT NULL) END DESC,
                        CASE WHEN {answer_choice} = 'degree' THEN g.total_degree END DESC NULLS LAST,
                        CASE WHEN {answer_choice} <> 'degree' OR NOT starts_with(p.answer, '"') THEN 0
                             WHEN ends_with(lower(p.answer), {lang_tag}) THEN 0
                             WHEN regexp_matches(p.answer, '"@[A-Za-z0-9-]+$') THEN 2 ELSE 1 END,
                        md5({seed} || p.entity || ' ' || p.answer)) AS rk
    FROM pair p
    JOIN chosen c ON c.rid = p.rid AND c.entity = p.entity
    LEFT JOIN best_label bl ON bl.e = p.answer
    LEFT JOIN _kgb_deg g ON g.e = p.answer
),
namesake AS (
    SELECT c.rid, c.entity, count(*) AS num_uris, sum(coalesce(g.total_degree, 0)) AS degree
    FROM chosen c
    JOIN best_label bl ON bl.e = c.entity
    JOIN (SELECT DISTINCT e, label FROM _kgb_label) n ON n.label = bl.label
    LEFT JOIN _kgb_deg g ON g.e = n.e
    GROUP BY c.rid, c.entity
),
-- the entity's class: its first entity-side filter class; without such a filter, the one of its
-- rdf:type classes (pass 2) that most of the relation's chosen entities have (ties by IRI)
filtered_class AS (
    SELECT c.rid, c.entity, first(t.class ORDER BY rc.ordinal) AS class
    FROM chosen c
    JOIN _kgb_rel r ON r.rid = c.rid
    JOIN _kgb_rel_class rc ON rc.rid = c.rid AND rc.role = CASE WHEN r.reverse THEN 'object' ELSE 'subject' END
    JOIN _kgb_type t ON t.s = c.entity AND t.class = rc.class
    GROUP BY c.rid, c.entity
),
typed AS (
    SELECT c.rid, c.entity, unnest(g.types) AS class
    FROM chosen c
    JOIN _kgb_rel r ON r.rid = c.rid
    JOIN _kgb_deg g ON g.e = c.entity
    WHERE NOT EXISTS (SELECT 1 FROM _kgb_rel_class rc WHERE rc.rid = c.rid
                      AND rc.role = CASE WHEN r.reverse THEN 'object' ELSE 'subject' END)
),
class_count AS (SELECT rid, class, count(*) AS n FROM typed GROUP BY rid, class),
derived_class AS (
    SELECT t.rid, t.entity, first(t.class ORDER BY n.n DESC, t.class) AS class
    FROM typed t JOIN class_count n ON n.rid = t.rid AND n.class = t.class
    GROUP BY t.rid, t.entity
),
entity_class AS (
    SELECT rid, entity, class FROM filtered_class
    UNION ALL
    SELECT rid, entity, class FROM derived_class
)
SELECT c.rid, c.position, c.entity, bl.label AS entity_label, ec.class AS entity_class,
       c.total_degree, c.delta,
       coalesce(n.num_uris, 1) AS namesake_num_uris, coalesce(n.degree, c.total_degree) AS namesake_degree,
       a.answer, a.is_literal, a.answer_label
FROM chosen c
JOIN answer a ON a.rid = c.rid AND a.entity = c.entity AND a.rk = 1
LEFT JOIN best_label bl ON bl.e = c.entity
LEFT JOIN namesake n ON n.rid = c.rid AND n.entity = c.entity
LEFT JOIN entity_class ec ON ec.rid = c.rid AND ec.entity = c.entity
ORDER BY c.rid, c.position
