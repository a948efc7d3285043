-- Seed-replicate groups of the analyzed runs (reliability across seeds): one row per run with its
-- group (group_run_id = the group's first counted run), sample seed and whether it counts; of
-- several runs with one sample seed only the latest finished counts (the reason says so).
-- The grouping key is the view v_run_replicate (everything but the sample seed).
-- Runs: `analysis_runs` (all finished runs, or SET VARIABLE run_ids = [..] first).
SELECT group_run_id, run_id, model, dataset_id, sample_id, seed, counted, reason
FROM analysis_replicates
ORDER BY group_run_id, seed, run_id;
