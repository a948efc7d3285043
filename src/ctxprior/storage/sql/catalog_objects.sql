-- What the open file's catalog holds besides tables, which a query could resolve: (kind, schema, name).
-- Every name is qualified with DuckDB's `system` catalog, so no macro of the file shadows them.
SELECT DISTINCT 'view' AS kind, schema_name, view_name AS name FROM system.main.duckdb_views()
WHERE database_name = system.main.current_database() AND NOT internal AND NOT temporary
UNION ALL
SELECT DISTINCT CASE function_type WHEN 'table_macro' THEN 'table macro' ELSE 'macro' END, schema_name, function_name
FROM system.main.duckdb_functions()
WHERE database_name = system.main.current_database() AND NOT internal
UNION ALL
SELECT DISTINCT 'type', schema_name, type_name FROM system.main.duckdb_types()
WHERE database_name = system.main.current_database() AND NOT internal
UNION ALL
SELECT DISTINCT 'sequence', schema_name, sequence_name FROM system.main.duckdb_sequences()
WHERE database_name = system.main.current_database()
UNION ALL
SELECT DISTINCT 'schema', schema_name, schema_name FROM system.main.duckdb_schemas()
WHERE database_name = system.main.current_database() AND NOT internal AND schema_name <> 'main'
ORDER BY 1, 2, 3
