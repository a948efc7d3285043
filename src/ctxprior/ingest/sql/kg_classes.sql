-- build-dataset: class fractions of the chosen facts (relation_class rows), for the filter classes
-- only: the share of a relation's chosen facts whose entity (answer) has the class (rdf:type in
-- the triples). subject_class filters concern the entity of a forward relation and the answer of
-- a reverse one (and object_class the other way round). A relation without an entity-side
-- filter gets the entity classes derived from rdf:type (_kgb_chosen.entity_class, see
-- kg_select.sql): the share of its chosen facts whose entity has each class.
WITH n AS (SELECT rid, count(*) AS n FROM _kgb_chosen GROUP BY rid)
SELECT c.rid,
       CASE WHEN (rc.role = 'subject') <> r.reverse THEN 'entity' ELSE 'answer' END AS role,
       rc.class,
       count(t.s)::DOUBLE / any_value(n.n) AS fraction
FROM _kgb_chosen c
JOIN _kgb_rel r ON r.rid = c.rid
JOIN _kgb_rel_class rc ON rc.rid = c.rid
JOIN n ON n.rid = c.rid
LEFT JOIN _kgb_type t ON t.class = rc.class
     AND t.s = CASE WHEN (rc.role = 'subject') <> r.reverse THEN c.entity ELSE c.answer END
GROUP BY ALL
UNION ALL
SELECT c.rid, 'entity' AS role, c.entity_class AS class, count(*)::DOUBLE / any_value(n.n) AS fraction
FROM _kgb_chosen c
JOIN _kgb_rel r ON r.rid = c.rid
JOIN n ON n.rid = c.rid
WHERE c.entity_class IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM _kgb_rel_class rc WHERE rc.rid = c.rid
                  AND rc.role = CASE WHEN r.reverse THEN 'object' ELSE 'subject' END)
GROUP BY c.rid, c.entity_class
ORDER BY 1, 2, 3
