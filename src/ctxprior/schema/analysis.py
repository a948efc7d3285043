"""Analysis tables written by `ctxprior analyze` (issue 4).

`analysis_result` holds one row per statistical test (a group comparison per run x relation x
query type, or a Spearman correlation), including the tests that could not run (skip_reason).
`analysis_distribution` holds the binned / summarized numbers behind Fig. 3 (MR bins) and Fig. 4
(reliability: variance across seeds and across query forms); `analysis_replicate` the seed
replicates pooled into each reliability group (one row per run). Rerunning an analysis on a run
replaces that run's rows of that analysis in one transaction.
"""

from sqlalchemy import BigInteger, Boolean, Column, DateTime, Double, ForeignKey, Integer, Table, Text

from .base import metadata

analysis_result = Table(
    "analysis_result",
    metadata,
    Column(
        "run_id",
        Integer,
        ForeignKey("run.run_id"),
        nullable=False,
        comment="the run whose scores were tested (the first run of a multi-run analysis)",
    ),
    Column(
        "analysis",
        Text,
        nullable=False,
        comment="relevance | assertive | negation | familiarity | answer-groups | mr | frequency | degree | "
        "covariate | friend-enemy | gender",
    ),
    Column("relation_id", Integer, ForeignKey("relation.relation_id"), comment="NULL for pooled rows"),
    Column("relation", Text, nullable=False, comment="relation short name, or '(all)' for a pooled test"),
    Column(
        "query_type",
        Text,
        nullable=False,
        comment="open | closed, or a query form name / context type for case studies",
    ),
    Column(
        "test",
        Text,
        nullable=False,
        comment="independent = paper design (Student t, permutation); paired = sign-flip permutation of "
        "per-entity differences (query forms averaged); entity_mean = units are entities (query forms "
        "averaged); spearman = rank correlation",
    ),
    Column(
        "unit",
        Text,
        nullable=False,
        comment="what one observation is, e.g. 'mean psi per (entity, query form)'",
    ),
    Column("alternative", Text, comment="greater | less | two-sided (group 1 vs group 2)"),
    Column("label1", Text, comment="group 1, e.g. relevant"),
    Column("label2", Text, comment="group 2, e.g. irrelevant"),
    Column("n1", Integer, comment="units in group 1 (pairs for paired tests, points for Spearman)"),
    Column("n2", Integer, comment="units in group 2"),
    Column("mean1", Double, comment="mean of group 1 (paired: mean difference)"),
    Column("mean2", Double, comment="mean of group 2 (NULL for paired / Spearman)"),
    Column("t", Double, comment="Student t (pooled variance; one-sample t of differences for paired)"),
    Column("p", Double, comment="permutation p-value (Spearman: scipy's p)"),
    Column(
        "p_adj",
        Double,
        comment="Benjamini-Hochberg adjusted p across relations (per run, analysis, query type, test)",
    ),
    Column("significant", Boolean, comment="p_adj < alpha (BH); NULL when skipped"),
    Column("effect_size", Double, comment="Cohen's d (pooled SD); d_z for paired; Spearman rho for spearman"),
    Column("k", Integer, comment="permutations (NULL for Spearman)"),
    Column("seed", Integer, comment="random seed of the permutations"),
    Column("alpha", Double, comment="significance level of the BH procedure"),
    Column("skip_reason", Text, comment="why the test did not run (then t, p are NULL); NULL when it ran"),
    Column("note", Text, comment="extra information, e.g. excluded fake entities"),
    Column("created_at", DateTime, nullable=False),
    comment="One row per statistical test of `ctxprior analyze` (paper §4-§5, App. E-G).",
)

analysis_distribution = Table(
    "analysis_distribution",
    metadata,
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False, comment="first run of the group"),
    Column(
        "run_ids",
        Text,
        nullable=False,
        comment="comma-separated runs pooled into this row (seed replicates; kept for display, the normalized "
        "set is in analysis_replicate)",
    ),
    Column("model", Text, nullable=False),
    Column("analysis", Text, nullable=False, comment="mr | reliability"),
    Column("query_type", Text, nullable=False, comment="open | closed"),
    Column(
        "series",
        Text,
        nullable=False,
        comment="mr: susceptibility; reliability: '<score> across <seeds|query forms>'",
    ),
    Column("bin", Integer, nullable=False, comment="bin index (0-based); 0 when not binned"),
    Column("bin_lo", Double),
    Column("bin_hi", Double),
    Column("n", Integer, nullable=False, comment="items summarized (finite values)"),
    Column("n_nan", Integer, comment="items left out because their score or variance is NaN"),
    Column("share", Double, comment="n / total n of the (run, analysis, query type, series)"),
    Column("mean", Double),
    Column("q25", Double),
    Column("median", Double),
    Column("q75", Double),
    Column("max", Double),
    Column("created_at", DateTime, nullable=False),
    comment="Binned and summarized distributions behind Fig. 3 (MR bins) and Fig. 4 (reliability).",
)

analysis_replicate = Table(
    "analysis_replicate",
    metadata,
    Column(
        "group_run_id",
        Integer,
        ForeignKey("run.run_id"),
        nullable=False,
        comment="the replicate group: its first counted run (= analysis_distribution.run_id of its reliability rows)",
    ),
    Column("run_id", Integer, ForeignKey("run.run_id"), nullable=False, comment="a run of the group"),
    Column("sample_id", Integer, ForeignKey("sample.sample_id"), comment="the run's sample"),
    Column("seed", BigInteger, comment="the sample's seed (replicates differ only in it)"),
    Column(
        "counted",
        Boolean,
        nullable=False,
        comment="true: a seed replicate of the group; false: another run with the same sample seed counts",
    ),
    Column("reason", Text, comment="why the run does not count (NULL when it counts)"),
    Column("created_at", DateTime, nullable=False),
    comment="Seed-replicate sets behind the reliability rows (Fig. 4): runs that agree in everything but the "
    "sample seed (view v_run_replicate), one row per run; of several runs with one seed the latest "
    "finished run counts.",
)
