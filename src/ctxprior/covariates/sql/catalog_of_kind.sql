-- The cataloged covariate views of one kind ($1), oldest first (auto_covariate).
SELECT view_name, value_columns FROM covariate WHERE kind = ? ORDER BY covariate_id
