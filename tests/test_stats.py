"""The batched permutation engine against scipy / statsmodels on the same data, and edge cases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from statsmodels.stats.multitest import multipletests

from ctxprior.analyses.stats import (
    bh_adjust,
    check_groups,
    paired_permutation_t_tests,
    permutation_t_tests,
    spearman,
)

K = 10_000


def _mc_tol(p, k=K):
    # two independent Monte-Carlo estimates of the same p: difference within ~5 SE (+1/k)
    return 5 * np.sqrt(2 * p * (1 - p) / k) + 2.0 / k


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_independent_matches_scipy_ttest_ind_permutations(alternative):
    rng = np.random.default_rng(7)
    A = [rng.normal(0.25 * (i % 4), 1, 30 + i % 3) for i in range(8)]
    B = [rng.normal(0, 1.3, 25) for _ in range(8)]
    res = permutation_t_tests(A, B, alternative, k=K, seed=1)
    for i in range(8):
        ref = st.ttest_ind(
            A[i], B[i], alternative=alternative, method=st.PermutationMethod(n_resamples=K, rng=123)
        )
        assert res.t[i] == pytest.approx(ref.statistic, rel=1e-10)
        # two-sided p = 2 * min(one-sided p): its Monte-Carlo error doubles
        tol = 2 * _mc_tol(ref.pvalue / 2) if alternative == "two-sided" else _mc_tol(ref.pvalue)
        assert abs(res.p[i] - ref.pvalue) <= tol, (i, res.p[i], ref.pvalue)
        assert (res.p[i] < 0.05) == (ref.pvalue < 0.05) or abs(ref.pvalue - 0.05) < 0.02
        a, b = A[i], B[i]
        sp = np.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(b) - 1) * b.var(ddof=1)) / (len(a) + len(b) - 2))
        assert res.effect_size[i] == pytest.approx((a.mean() - b.mean()) / sp)


@pytest.mark.quick
def test_exact_enumeration_equals_scipy_exactly():
    a, b = np.array([1.0, 2.0, 3.5]), np.array([2.5, 4.0, 5.0, 6.0])
    for alt in ("greater", "less", "two-sided"):
        res = permutation_t_tests([a], [b], alt, k=K)
        ref = st.ttest_ind(a, b, alternative=alt, method=st.PermutationMethod(n_resamples=K))
        assert res.p[0] == pytest.approx(ref.pvalue, abs=1e-12)


@pytest.mark.quick
def test_paired_sign_flip_matches_scipy_permutation_test():
    rng = np.random.default_rng(3)
    for n, shift in ((30, 0.3), (8, 0.5)):  # randomized and exact (2^8 <= k)
        d = rng.normal(shift, 1, n)
        res = paired_permutation_t_tests([d], "greater", k=K, seed=2)
        ref = st.permutation_test(
            (d,),
            lambda x, axis: st.ttest_1samp(x, 0, axis=axis).statistic,
            permutation_type="samples",
            alternative="greater",
            n_resamples=K,
            vectorized=True,
            rng=5,
        )
        assert res.t[0] == pytest.approx(ref.statistic)
        tol = 1e-12 if 2**n <= K else _mc_tol(ref.pvalue)
        assert abs(res.p[0] - ref.pvalue) <= tol


@pytest.mark.quick
def test_planted_effect_direction():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1, 1, 50), rng.normal(0, 1, 50)
    res = permutation_t_tests([a, b], [b, a], "greater", k=2000)
    assert res.p[0] < 0.01 and res.p[1] > 0.99
    assert res.effect_size[0] > 0 > res.effect_size[1]


@pytest.mark.quick
def test_bh_matches_statsmodels_and_keeps_nan():
    p = np.array([0.001, 0.04, np.nan, 0.03, 0.2, 0.011])
    adj, sig = bh_adjust(p, 0.05)
    ok = ~np.isnan(p)
    ref_rej, ref_adj, _, _ = multipletests(p[ok], alpha=0.05, method="fdr_bh")
    np.testing.assert_allclose(adj[ok], ref_adj)
    assert list(sig[ok]) == list(ref_rej)
    assert np.isnan(adj[2]) and not sig[2]


@pytest.mark.quick
@pytest.mark.parametrize(
    "a,b,reason",
    [
        ([], [1.0, 2.0], "group 1 is empty"),
        ([1.0, 2.0], [], "group 2 is empty"),
        ([1.0], [1.0, 2.0, 3.0], "only 1 unit"),
        ([0.5, 0.5, 0.5], [0.5, 0.5], "all values are equal"),
        ([1.0, 1.0], [2.0, 2.0], "both groups have zero variance"),
        ([1.0, np.nan, 2.0], [1.0, 2.0], "NaN"),
    ],
)
def test_edge_cases_get_a_reason_not_a_number(a, b, reason):
    res = permutation_t_tests(
        [np.array(a), np.array([0.0, 1.0, 2.0])], [np.array(b), np.array([3.0, 4.0, 5.0])], "greater", k=100
    )
    assert reason in res.skip_reason[0]
    assert np.isnan(res.p[0]) and np.isnan(res.t[0]) and np.isnan(res.effect_size[0])
    assert res.skip_reason[1] is None and not np.isnan(res.p[1])  # the other test still runs


@pytest.mark.quick
def test_paired_edge_cases():
    res = paired_permutation_t_tests(
        [np.array([]), np.array([0.2]), np.array([0.3, 0.3, 0.3]), np.array([np.nan, 1.0, 2.0])],
        "greater",
        k=100,
    )
    assert "empty" in res.skip_reason[0]
    assert "only 1" in res.skip_reason[1]
    assert "equal" in res.skip_reason[2]
    assert "NaN" in res.skip_reason[3]
    assert np.isnan(res.p).all()


@pytest.mark.quick
def test_check_groups_ok():
    assert check_groups(np.array([1.0, 2.0]), np.array([3.0, 3.5])) is None


@pytest.mark.quick
def test_spearman_matches_scipy_and_skips():
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    y = -x + rng.normal(size=40)
    rho, p, n, why = spearman(x, y)
    ref = st.spearmanr(x, y)
    assert why is None and n == 40
    assert rho == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert spearman([1, 2], [3, 4])[3].startswith("only 2")
    assert "constant" in spearman([1, 1, 1, 1], [1, 2, 3, 4])[3]
    # NaN pairs are dropped and counted in n
    assert spearman([1, 2, 3, np.nan, 5], [2, 1, 4, 3, 6])[2] == 4


@pytest.mark.quick
def test_spearman_rows_pool_each_run_and_query_type_and_split_by_relation():
    """The frequency/degree step's rows: one pooled '(all)' row per run and query type, then one per
    relation, each scipy's rho over that group (a group under 3 pairs gets a skip reason)."""
    import pandas as pd

    from ctxprior.analyses.steps.spearman import spearman_rows

    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        dict(
            run_id=[1] * 8,
            query_type=["open"] * 8,
            relation=["capital"] * 6 + ["author"] * 2,
            relation_id=[10] * 6 + [20] * 2,
            degree=rng.normal(size=8),
            susceptibility=rng.normal(size=8),
        )
    )
    rows = spearman_rows(df, "degree", "degree", note="", unit="fact")
    assert [r["relation"] for r in rows] == ["(all)", "author", "capital"]
    pooled, author, capital = rows
    assert pooled["effect_size"] == pytest.approx(st.spearmanr(df.degree, df.susceptibility).statistic)
    assert pooled["n1"] == 8 and capital["n1"] == 6 and capital["relation_id"] == 10
    assert author["effect_size"] is None and "at least 3" in author["skip_reason"]
