-- The columns of the run table, in order (card._runs_rows picks the ones the card shows).
SELECT column_name FROM information_schema.columns
WHERE table_schema = 'main' AND table_name = 'run'
ORDER BY ordinal_position
