-- The names of the tables ($1 = 'BASE TABLE') or views ($1 = 'VIEW') of the warehouse, sorted.
SELECT table_name FROM information_schema.tables
WHERE table_schema = 'main' AND table_type = ?
ORDER BY 1
