-- Close a co-occurrence covariate's catalog row (cooccurrence._finish): status, corpus digest,
-- facts seen, time; $5 = covariate id.
UPDATE covariate SET status = ?, source_sha256 = ?, n_matched = ?, updated_at = ?
WHERE covariate_id = ?
