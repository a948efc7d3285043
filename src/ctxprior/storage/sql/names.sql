-- The names of the tables ($1 = 'BASE TABLE') or views ($1 = 'VIEW') of the warehouse, sorted
-- (the file's own: not the TEMP views that shadow a foreign file's views, storage/trust.py). Read
-- through DuckDB's `system` catalog, which no macro of the file shadows: this runs before the
-- catalog check has refused or dropped them (information_schema calls duckdb_views() unqualified).
SELECT name FROM (
    SELECT table_name AS name, 'BASE TABLE' AS kind FROM system.main.duckdb_tables()
    WHERE schema_name = 'main' AND database_name = system.main.current_database() AND NOT temporary
    UNION ALL
    SELECT view_name, 'VIEW' FROM system.main.duckdb_views()
    WHERE schema_name = 'main' AND database_name = system.main.current_database()
      AND NOT internal AND NOT temporary
)
WHERE kind = ?
ORDER BY 1
