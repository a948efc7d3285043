-- An import folder's table (validate.py): its rows, then per column the values that do not cast to
-- the column's type ({checks}), then per column the NULLs ({nulls}); {files}: its Parquet files.
SELECT count(*), {checks}, {nulls} FROM read_parquet({files})
