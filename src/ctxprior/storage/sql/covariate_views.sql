-- The covariate views the catalog records (`covariate.view_name`), when the file has that table.
SELECT view_name FROM main.covariate WHERE view_name IS NOT NULL
