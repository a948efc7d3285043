-- The views of the open database's main schema and DuckDB's text of each, in creation order.
SELECT view_name, sql FROM system.main.duckdb_views()
WHERE NOT internal AND NOT temporary AND schema_name = 'main' AND database_name = system.main.current_database()
ORDER BY view_oid
