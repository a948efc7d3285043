-- The runs $1 (INTEGER[]) the dataset card lists (card._runs_rows); {columns}: the quoted run
-- columns it shows (those the warehouse's run table has).
SELECT {columns} FROM run
WHERE run_id IN (SELECT unnest(?::INTEGER[]))
ORDER BY run_id
