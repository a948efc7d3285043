-- The covariate catalog, readable (`ctxprior covariates list`, catalog.list_covariates).
SELECT c.name, c.kind, coalesce(d.name, '(all)') AS dataset, c.view_name, c.key_columns, c.value_columns,
       c.status, c.n_rows, c.n_matched, c.source_path, left(c.source_sha256, 12) AS sha256,
       c.description, strftime(c.added_at, '%Y-%m-%d %H:%M:%S') AS added_at
FROM covariate c LEFT JOIN dataset d USING (dataset_id)
ORDER BY c.covariate_id
