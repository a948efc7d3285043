-- Tables of the main schema that carry a CHECK or FOREIGN KEY constraint (ctxprior's tables declare
-- none: trust.check_tables), read through the system catalog, which no object of the file shadows.
SELECT DISTINCT table_name, constraint_type
FROM system.main.duckdb_constraints()
WHERE database_name = system.main.current_database() AND schema_name = 'main'
  AND constraint_type IN ('CHECK', 'FOREIGN KEY')
ORDER BY table_name, constraint_type
