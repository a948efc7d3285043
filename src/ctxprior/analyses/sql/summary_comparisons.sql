-- The summary's group comparisons of the runs in $1: per analysis and query type the tests run,
-- significant, the mean effect size, the skipped tests, the runs and the gender mixture size.
SELECT analysis, query_type, count(*) FILTER (WHERE skip_reason IS NULL) AS n,
       count(*) FILTER (WHERE significant) AS s, avg(effect_size) FILTER (WHERE skip_reason IS NULL) AS d,
       count(*) FILTER (WHERE skip_reason IS NOT NULL) AS skipped,
       count(DISTINCT run_id) AS n_runs,
       max(regexp_extract(unit, 'mixture of (\d+) collections', 1)) AS mixture
FROM analysis_result WHERE list_contains($1::INTEGER[], run_id) AND test = 'independent'
GROUP BY ALL ORDER BY ALL
