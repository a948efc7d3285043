-- The entity URIs to look up (of dataset $1; NULL: every dataset), as temp table _kg_uri.
CREATE OR REPLACE TEMP TABLE _kg_uri AS
SELECT DISTINCT uri FROM entity WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)
