-- Import rows into a table with a primary key (parquet import): the rows of {src} whose key is not
-- in {table} yet. {table}: quoted table name; {columns}: its quoted columns; {on}: the key match of s and t.
INSERT INTO {table} ({columns})
SELECT * FROM ({src}) s
WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {on})
