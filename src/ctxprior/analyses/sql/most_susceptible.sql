-- Run ?'s first ? (entity, query form) rows by susceptibility {direction} (api.most_susceptible).
SELECT relation, query_form, entity, entity_kind, susceptibility
FROM v_susceptibility WHERE run_id = ?
ORDER BY susceptibility {direction} LIMIT ?
