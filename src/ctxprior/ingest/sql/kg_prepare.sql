-- build-dataset, between the passes: from the rows kept by pass 1 (_kgb_pick) and the relations
-- (_kgb_rel: rid, predicate, reverse; _kgb_rel_class: rid, role subject|object, class), derive
-- the edges, labels, classes and (entity, answer) pairs, and the IRIs whose total degree pass 2
-- must count (_kgb_x). A term is an IRI when it is neither a literal ("...) nor a blank node (_:).
-- a label's (escaped) lexical form is a usable name: 1 to 100 characters once unescaped, not blank,
-- no control character (NUL, tab, newline, ... raw or escaped) and no bidirectional control
-- (U+202A-202E, U+2066-2069, U+200E/F, U+061C); ingest.kg_build.name_problem is the exact rule,
-- applied again to the chosen names. (Braces are doubled: this file is a Python format string.)
CREATE OR REPLACE TEMP MACRO _kgb_name_ok(s) AS (
    length(regexp_replace(s, '\\(u[0-9A-Fa-f]{{4}}|U[0-9A-Fa-f]{{8}}|.)', 'x', 'g')) BETWEEN 1 AND 100
    AND NOT regexp_full_match(s, '\s*')
    AND NOT regexp_matches(s, '[\x00-\x1F\x7F-\x9F\x{{061C}}\x{{200E}}\x{{200F}}\x{{202A}}-\x{{202E}}\x{{2066}}-\x{{2069}}]')
    AND NOT regexp_matches(regexp_replace(s, '\\\\', '', 'g'),
        '\\([tnrbf]|u(00[01][0-9A-Fa-f]|007[Ff]|00[89][0-9A-Fa-f]|061[Cc]|200[EeFf]|202[A-Ea-e]|206[6-9])|U0000(00[01][0-9A-Fa-f]|007[Ff]|00[89][0-9A-Fa-f]|061[Cc]|200[EeFf]|202[A-Ea-e]|206[6-9]))'));

CREATE OR REPLACE TEMP TABLE _kgb_edge AS
SELECT DISTINCT s, p, o FROM _kgb_pick WHERE kind = 'edge';

CREATE OR REPLACE TEMP TABLE _kgb_type AS
SELECT DISTINCT s, o AS class FROM _kgb_pick
WHERE kind IN ('edge', 'type') AND p = {rdf_type} AND o IN (SELECT class FROM _kgb_rel_class);

-- labels: lexical form still escaped as in the file; pred_rank = order of the label predicates,
-- lang_rank 0 = the chosen language, 1 = no language tag; a label that is not a usable name is
-- left out (the entity keeps its other labels, or is named after its IRI)
CREATE OR REPLACE TEMP TABLE _kgb_label AS
SELECT * FROM (
    SELECT DISTINCT s AS e, regexp_extract(o, '^"(.*)"', 1) AS label, l.rank AS pred_rank,
           CASE WHEN ends_with(lower(o), {lang_tag}) THEN 0 ELSE 1 END AS lang_rank
    FROM _kgb_pick k JOIN _kgb_label_pred l USING (p)
    WHERE k.kind = 'label')
WHERE _kgb_name_ok(label);

CREATE OR REPLACE TEMP TABLE _kgb_pair AS
SELECT DISTINCT r.rid,
       CASE WHEN r.reverse THEN e.o ELSE e.s END AS entity,
       CASE WHEN r.reverse THEN e.s ELSE e.o END AS answer
FROM _kgb_edge e JOIN _kgb_rel r ON e.p = r.predicate
WHERE NOT starts_with(CASE WHEN r.reverse THEN e.o ELSE e.s END, '"')
  AND NOT starts_with(CASE WHEN r.reverse THEN e.o ELSE e.s END, '_:')
  AND NOT starts_with(CASE WHEN r.reverse THEN e.s ELSE e.o END, '_:')
  -- a literal answer is a name too
  AND (NOT starts_with(CASE WHEN r.reverse THEN e.s ELSE e.o END, '"')
       OR _kgb_name_ok(regexp_extract(CASE WHEN r.reverse THEN e.s ELSE e.o END, '^"(.*)"', 1)))
  AND (NOT EXISTS (SELECT 1 FROM _kgb_rel_class c WHERE c.rid = r.rid AND c.role = 'subject')
       OR EXISTS (SELECT 1 FROM _kgb_rel_class c JOIN _kgb_type t ON t.class = c.class
                  WHERE c.rid = r.rid AND c.role = 'subject' AND t.s = e.s))
  AND (NOT EXISTS (SELECT 1 FROM _kgb_rel_class c WHERE c.rid = r.rid AND c.role = 'object')
       OR EXISTS (SELECT 1 FROM _kgb_rel_class c JOIN _kgb_type t ON t.class = c.class
                  WHERE c.rid = r.rid AND c.role = 'object' AND t.s = e.o));

-- entities, IRI answers, and every IRI sharing a label with an entity (its namesakes)
CREATE OR REPLACE TEMP TABLE _kgb_x AS
SELECT entity AS e FROM _kgb_pair
UNION
SELECT answer FROM _kgb_pair WHERE NOT starts_with(answer, '"')
UNION
SELECT l2.e FROM _kgb_label l1 JOIN _kgb_label l2 ON l2.label = l1.label
WHERE l1.e IN (SELECT entity FROM _kgb_pair);
