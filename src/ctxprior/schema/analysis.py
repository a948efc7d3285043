"""Analysis tables written by `ctxprior analyze` (issue 4).

`analysis_result` holds one row per statistical test (a group comparison per run x relation x
query type, or a Spearman correlation), including the tests that could not run (skip_reason).
`analysis_distribution` holds the binned / summarized numbers behind Fig. 3 (MR bins) and Fig. 4
(reliability: variance across seeds and across query forms); `analysis_replicate` the seed
replicates pooled into each reliability group (one row per run). Rerunning an analysis on a run
replaces that run's rows of that analysis in one transaction.
"""

from sqlalchemy import BigInteger, Boolean, DateTime, Double, Integer, Text

from .base import col, ref, table

analysis_result = table(
    "analysis_result",
    ref("run", "the run whose scores were tested (the first run of a multi-run analysis)", null=False),
    col(
        "analysis",
        Text,
        "relevance | assertive | negation | familiarity | answer-groups | mr | frequency | degree | "
        "covariate | friend-enemy | gender",
        null=False,
    ),
    ref("relation", "NULL for pooled rows"),
    col("relation", Text, "relation short name, or '(all)' for a pooled test", null=False),
    col(
        "query_type", Text, "open | closed, or a query form name / context type for case studies", null=False
    ),
    col(
        "test",
        Text,
        "independent = paper design (Student t, permutation); paired = sign-flip permutation of "
        "per-entity differences (query forms averaged); entity_mean = units are entities (query forms "
        "averaged); spearman = rank correlation",
        null=False,
    ),
    col("unit", Text, "what one observation is, e.g. 'mean psi per (entity, query form)'", null=False),
    col("alternative", Text, "greater | less | two-sided (group 1 vs group 2)"),
    col("label1", Text, "group 1, e.g. relevant"),
    col("label2", Text, "group 2, e.g. irrelevant"),
    col("n1", Integer, "units in group 1 (pairs for paired tests, points for Spearman)"),
    col("n2", Integer, "units in group 2"),
    col("mean1", Double, "mean of group 1 (paired: mean difference)"),
    col("mean2", Double, "mean of group 2 (NULL for paired / Spearman)"),
    col("t", Double, "Student t (pooled variance; one-sample t of differences for paired)"),
    col("p", Double, "permutation p-value (Spearman: scipy's p)"),
    col(
        "p_adj",
        Double,
        "Benjamini-Hochberg adjusted p across relations (per run, analysis, query type, test)",
    ),
    col("significant", Boolean, "p_adj < alpha (BH); NULL when skipped"),
    col("effect_size", Double, "Cohen's d (pooled SD); d_z for paired; Spearman rho for spearman"),
    col("k", Integer, "permutations (NULL for Spearman)"),
    col("seed", Integer, "random seed of the permutations"),
    col("alpha", Double, "significance level of the BH procedure"),
    col("skip_reason", Text, "why the test did not run (then t, p are NULL); NULL when it ran"),
    col("note", Text, "extra information, e.g. excluded fake entities"),
    col("created_at", DateTime, null=False),
    comment="One row per statistical test of `ctxprior analyze` (paper §4-§5, App. E-G).",
)

analysis_distribution = table(
    "analysis_distribution",
    ref("run", "first run of the group", null=False),
    col(
        "run_ids",
        Text,
        "comma-separated runs pooled into this row (seed replicates; kept for display, the normalized "
        "set is in analysis_replicate)",
        null=False,
    ),
    col("model", Text, null=False),
    col("analysis", Text, "mr | reliability", null=False),
    col("query_type", Text, "open | closed", null=False),
    col("series", Text, "mr: susceptibility; reliability: '<score> across <seeds|query forms>'", null=False),
    col("bin", Integer, "bin index (0-based); 0 when not binned", null=False),
    col("bin_lo", Double),
    col("bin_hi", Double),
    col("n", Integer, "items summarized (finite values)", null=False),
    col("n_nan", Integer, "items left out because their score or variance is NaN"),
    col("share", Double, "n / total n of the (run, analysis, query type, series)"),
    col("mean", Double),
    col("q25", Double),
    col("median", Double),
    col("q75", Double),
    col("max", Double),
    col("created_at", DateTime, null=False),
    comment="Binned and summarized distributions behind Fig. 3 (MR bins) and Fig. 4 (reliability).",
)

analysis_replicate = table(
    "analysis_replicate",
    col(
        "group_run_id",
        Integer,
        "the replicate group: its first counted run (= analysis_distribution.run_id of its reliability rows)",
        null=False,
        fk="run.run_id",
    ),
    ref("run", "a run of the group", null=False),
    ref("sample", "the run's sample"),
    col("seed", BigInteger, "the sample's seed (replicates differ only in it)"),
    col(
        "counted",
        Boolean,
        "true: a seed replicate of the group; false: another run with the same sample seed counts",
        null=False,
    ),
    col("reason", Text, "why the run does not count (NULL when it counts)"),
    col("created_at", DateTime, null=False),
    comment="Seed-replicate sets behind the reliability rows (Fig. 4): runs that agree in everything but the "
    "sample seed (view v_run_replicate), one row per run; of several runs with one seed the latest "
    "finished run counts.",
)
