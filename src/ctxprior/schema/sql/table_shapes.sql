-- Every column and key of every table, as DuckDB's catalog reads them: what two lists of
-- CREATE TABLE statements are compared by (schema/declared.py ddl_differences).
SELECT table_name, 'column', column_index::VARCHAR, column_name, data_type, is_nullable::VARCHAR, coalesce(column_default, '')
FROM duckdb_columns() WHERE NOT internal
UNION ALL
SELECT table_name, constraint_type, '', array_to_string(constraint_column_names, ','), '', '', ''
FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')
