-- Every table's and view's columns with their types, in column order (parquet.all_columns).
SELECT table_name, column_name, data_type FROM duckdb_columns()
WHERE schema_name = 'main' AND database_name = current_database()
ORDER BY table_name, column_index
