-- Drop the stored replicate sets that hold a run in $1 (as a member or as the group's run).
DELETE FROM analysis_replicate
WHERE list_contains($1::INTEGER[], run_id) OR list_contains($1::INTEGER[], group_run_id)
