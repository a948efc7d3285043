-- Import rows into a table without a primary key (parquet import): the rows of {src} not already
-- in {table}, as a multiset. {table}: quoted table name; {columns}: its quoted columns.
INSERT INTO {table} ({columns})
SELECT * FROM ({src}) EXCEPT ALL SELECT {columns} FROM {table}
