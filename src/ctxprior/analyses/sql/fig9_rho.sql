-- Fig. 9: the pooled Spearman rho per query type of one run ($1) and correlation analysis ($2).
SELECT query_type, effect_size FROM analysis_result WHERE run_id = $1 AND analysis = $2 AND relation = '(all)'
