-- analysis: gender
-- order: 120
-- help: masculine vs feminine names, per context collection, two-sided (§5, Fig. 11)
-- compare: masculine != feminine
-- design: entity_mean
-- unit: mean psi per (name, query form) over the collection's contexts
-- stratum: context_type
-- family: run_id, test
-- transform: label-mixture
-- summary: masculine vs feminine names differ
-- report-title: Gender (§5, Fig. 11)
-- report: Susceptibility of masculine vs feminine names, per context collection (two-sided): χ of a
-- report: collection when the run's sample holds only that collection.
-- figure: fig11_gender
-- Gender case study (paper §5, Fig. 11, App. G.2): for each name (entity_class feminine |
-- masculine), query form and context collection (context_type feminine_stereotype,
-- masculine_stereotype, feminine_swapped, masculine_swapped), the mean persuasion ψ over the
-- collection's contexts. ψ is measured against the mixture over all contexts of the run's sample
-- (for the relation), so: when the sample holds a single collection (n_collections = 1) this is
-- exactly the susceptibility χ of that collection; when it mixes N collections, it is the mean ψ
-- of the collection's contexts against the mixture of all N, not χ of one collection (`analyze`
-- says so in the `unit` and `note` of each stored row).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
WITH collections AS (
    SELECT sample_id, relation_id, count(DISTINCT context_type) AS n_collections
    FROM stg_context GROUP BY ALL
)
SELECT p.run_id, p.relation_id, p.relation, p.context_type, p.query_type,
       p.query_form_id, p.query_form, p.fact_id, p.entity_id, p.entity,
       p.entity_class AS grp,
       avg(p.persuasion) AS value,
       count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan,
       any_value(k.n_collections) AS n_collections
FROM stg_persuasion_cell p
JOIN collections k ON k.sample_id = p.context_sample_id AND k.relation_id = p.context_relation_id
WHERE p.run_id IN (SELECT run_id FROM analysis_runs)
  AND p.entity_class IN ('feminine', 'masculine')
  AND p.context_type IN ('feminine_stereotype', 'masculine_stereotype', 'feminine_swapped', 'masculine_swapped')
GROUP BY p.run_id, p.relation_id, p.relation, p.context_type, p.query_type, p.query_form_id, p.query_form,
         p.fact_id, p.entity_id, p.entity, p.entity_class
ORDER BY p.run_id, p.context_type, p.query_form_id, p.fact_id;
