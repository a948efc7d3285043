-- A raw RDF term in the column {{col}} expanded (triples.expand_sql): an <IRI> unbracketed, 'a' as
-- rdf:type ({{rdf_type}}), literals, blank nodes and plain words kept, a prefixed name by its
-- prefix's IRI from {{cases}} (WHEN 'prefix' THEN 'iri' ...; NULL for an undeclared prefix).
(CASE
      WHEN starts_with({col}, '<') AND ends_with({col}, '>') THEN substr({col}, 2, length({col}) - 2)
      WHEN {col} = 'a' THEN {rdf_type}
      WHEN starts_with({col}, '"') OR starts_with({col}, '_:') OR NOT contains({col}, ':') THEN {col}
      ELSE (CASE split_part({col}, ':', 1) {cases} END) || substr({col}, strpos({col}, ':') + 1)
    END)
