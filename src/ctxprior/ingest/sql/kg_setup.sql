-- build-dataset: the temp tables of one build (kg_build._setup and _pass1): the relations, their
-- class filters, the label predicates (filled from the relations file and the options) and the
-- triples pass 1 keeps (kg_pick.sql).
CREATE TEMP TABLE _kgb_rel (rid INTEGER, predicate VARCHAR, reverse BOOLEAN);
CREATE TEMP TABLE _kgb_rel_class (rid INTEGER, role VARCHAR, class VARCHAR, ordinal INTEGER);
CREATE TEMP TABLE _kgb_label_pred (p VARCHAR, rank INTEGER);
CREATE TEMP TABLE _kgb_pick (kind VARCHAR, filename VARCHAR, s VARCHAR, p VARCHAR, o VARCHAR,
                             n BIGINT, bad_lines BIGINT[]);
