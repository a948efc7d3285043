-- Whether the open file has the base table main.covariate (names qualified by DuckDB's system catalog).
SELECT count(*) FROM system.main.duckdb_tables()
WHERE database_name = system.main.current_database() AND schema_name = 'main' AND table_name = 'covariate'
