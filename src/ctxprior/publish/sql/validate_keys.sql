-- One key of an import folder's table that more than one row has (validate.py), with the count;
-- {keys}: the key columns; {files}: its Parquet files.
SELECT {keys}, count(*) AS n FROM read_parquet({files}) GROUP BY ALL HAVING count(*) > 1 LIMIT 1
