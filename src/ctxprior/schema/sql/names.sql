-- The names of the tables ($1 = 'BASE TABLE') or views ($1 = 'VIEW') of the warehouse, sorted
-- (the file's own: not the TEMP views that shadow a foreign file's views, schema/trust.py).
SELECT table_name FROM information_schema.tables
WHERE table_schema = 'main' AND table_catalog = current_database() AND table_type = ?
ORDER BY 1
