-- Columns and types of one table or view ($1) of the main schema, in order (auto_covariate).
SELECT column_name, data_type FROM information_schema.columns
WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position
