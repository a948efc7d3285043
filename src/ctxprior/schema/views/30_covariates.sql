-- Covariate catalog and co-occurrence shard progress, readable.
-- The covariates themselves are the per-covariate views cov_<name>, created by
-- `ctxprior covariates ...` (ctxprior/covariates/*.py); see docs/readme/covariates.md.

CREATE OR REPLACE VIEW v_covariate AS
SELECT c.name,
       c.kind,
       coalesce(c.dataset, '(all)') AS dataset,
       c.view_name,
       c.key_columns,
       c.value_columns,
       c.status,
       c.n_rows,
       c.n_matched,
       c.source_path,
       c.source_sha256,
       c.description,
       c.params_json,
       c.data_table,
       c.added_at,
       c.updated_at,
       c.covariate_id, c.dataset_id
FROM stg_covariate c;

-- One row per counted corpus shard of a co-occurrence covariate.
-- columns:
--   covariate: name of the co-occurrence covariate the shard was counted for
CREATE OR REPLACE VIEW v_cooccurrence_shard AS
SELECT s.covariate,
       s.path,
       s.size_bytes,
       s.n_lines,
       s.n_documents,
       s.n_words,
       s.n_bad_json,
       s.n_missing_text,
       s.bad_examples,
       s.seconds,
       s.worker,
       s.finished_at,
       s.sha256,
       s.covariate_id, s.shard_id
FROM stg_cooccurrence_shard s;
