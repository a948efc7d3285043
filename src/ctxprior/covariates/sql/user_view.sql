-- Body of the view cov_<name> of a user covariate (user._view_sql): each matching fact's readable
-- keys, the table's value columns ({values}, quoted, on u), the ids. {table}: the quoted data table
-- covdata_<name>; {cond}: the key conditions of user._condition on u and v.
SELECT v.dataset, v.relation, v.entity, v.entity_kind, v.answer,
       {values},
       v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM {table} u
JOIN v_entity v ON {cond}
