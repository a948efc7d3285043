"""Statistics the SQL lacks: batched permutation tests of Student's t, BH, Cohen's d, Spearman.

Why a batched engine: the analysis suite runs thousands of small two-group tests (relations x
query types x analyses x runs) with k = 10,000 permutations. One ``scipy.stats.ttest_ind(...,
method=PermutationMethod(k))`` call per test costs ~0.1-0.5 s; here all tests that share the
group sizes (n1, n2) are permuted at once with two matrix products:

    M        (k, n)  0/1 masks, row i selects the n1 members of group 1 under permutation i
    X        (n, T)  T tests' pooled values (each centered on its own mean)
    S1 = M @ X,  Q1 = M @ X**2      (k, T)  group-1 sums and sums of squares per permutation
    t  = pooled-variance Student t from (S1, Q1, S, Q, n1, n2)   (k, T)

The masks come from one random rank matrix per n, shared by the tests of that size, and each
test first shuffles its own values with an independent random permutation; so every test's
permutations are uniformly random, and given the shared ranks the tests' p-values are
independent. When C(n, n1) <= k every split is enumerated (an exact test), as scipy does.

p-values follow ``scipy.stats.permutation_test``: randomized p = (#{t_perm >= t_obs} + 1) / (k + 1)
(observed counted once), exact p = #{t_perm >= t_obs} / C(n, n1) (the identity split is one of
them), two-sided p = min(1, 2 * min(p_less, p_greater)). ``tests/test_stats.py`` cross-checks
this against scipy on the same data. Multiple testing uses statsmodels ``multipletests``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

ALTERNATIVES = ("greater", "less", "two-sided")
_EPS = 1e-14  # scipy's relative tolerance for ties with the observed statistic (scaled by |t|)


@dataclass
class TestResult:
    """Arrays aligned with the input tests. Skipped tests have NaN statistics and a skip_reason."""

    n1: np.ndarray
    n2: np.ndarray
    mean1: np.ndarray
    mean2: np.ndarray
    t: np.ndarray
    p: np.ndarray
    effect_size: np.ndarray
    skip_reason: list = field(default_factory=list)

    def rows(self) -> list[dict]:
        out = []
        for i in range(len(self.t)):
            out.append(
                dict(
                    n1=int(self.n1[i]),
                    n2=int(self.n2[i]),
                    mean1=_f(self.mean1[i]),
                    mean2=_f(self.mean2[i]),
                    t=_f(self.t[i]),
                    p=_f(self.p[i]),
                    effect_size=_f(self.effect_size[i]),
                    skip_reason=self.skip_reason[i],
                )
            )
        return out


def _nan_result(T: int) -> TestResult:
    """A result for T tests: every statistic NaN and no skip reason (the tests fill it in)."""

    def nan() -> np.ndarray:
        return np.full(T, np.nan)

    return TestResult(nan(), nan(), nan(), nan(), nan(), nan(), nan(), skip_reason=[None] * T)


def _f(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


def _as_array(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64).ravel()


def check_groups(a: np.ndarray, b: np.ndarray | None = None) -> str | None:
    """Why a test on these groups cannot run (None when it can). Never returns a silent 0."""
    groups = [("group 1", a)] if b is None else [("group 1", a), ("group 2", b)]
    for name, g in groups:
        if len(g) == 0:
            return f"{name} is empty (no units)"
    for name, g in groups:
        bad = int(np.isnan(g).sum())
        if bad:
            return f"{name} has {bad} NaN value(s): NaN scores in the warehouse"
    for name, g in groups:
        if len(g) < 2:
            return f"{name} has only {len(g)} unit; a t-test needs at least 2 per group"
    pooled = np.concatenate([a] if b is None else [a, b])
    if b is None:
        if np.ptp(a) == 0:
            return "all differences are equal (zero variance); t is undefined"
    else:
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            if np.ptp(pooled) == 0:
                return "all values are equal (zero variance); t is undefined"
            return "both groups have zero variance; t is undefined"
    if not np.all(np.isfinite(pooled)):
        return "infinite values in the scores"
    return None


def _t_from_sums(S1, Q1, S, Q, n1, n2):
    """Pooled-variance Student t and Cohen's d from group-1 sums (arrays broadcast)."""
    S2 = S - S1
    Q2 = Q - Q1
    m1 = S1 / n1
    m2 = S2 / n2
    ss1 = np.maximum(Q1 - n1 * m1 * m1, 0.0)
    ss2 = np.maximum(Q2 - n2 * m2 * m2, 0.0)
    sp2 = (ss1 + ss2) / (n1 + n2 - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (m1 - m2) / np.sqrt(sp2 * (1.0 / n1 + 1.0 / n2))
        d = (m1 - m2) / np.sqrt(sp2)
    return t, d


def _pvalues(t_perm: np.ndarray, t_obs: np.ndarray, alternative: np.ndarray, exact: bool) -> np.ndarray:
    """t_perm (k, T), t_obs (T,), alternative (T,) of ALTERNATIVES -> p (T,) like scipy."""
    gamma = np.abs(_EPS * t_obs)
    adj = 0 if exact else 1
    kk = t_perm.shape[0]
    n_ge = (t_perm >= (t_obs - gamma)).sum(axis=0)
    n_le = (t_perm <= (t_obs + gamma)).sum(axis=0)
    p_greater = (n_ge + adj) / (kk + adj)
    p_less = (n_le + adj) / (kk + adj)
    p_two = np.minimum(1.0, 2 * np.minimum(p_greater, p_less))
    return np.where(alternative == "greater", p_greater, np.where(alternative == "less", p_less, p_two))


class _MaskBank:
    """Random rank matrices per total size n (shared by the tests of that size within one call)."""

    def __init__(self, k: int, rng: np.random.Generator):
        self.k, self.rng = k, rng
        self._ranks: dict[int, np.ndarray] = {}

    def masks(self, n: int, n1: int) -> tuple[np.ndarray, bool]:
        if math.comb(n, n1) <= self.k:
            combos = np.array(list(itertools.combinations(range(n), n1)), dtype=np.intp)
            m = np.zeros((len(combos), n))
            np.put_along_axis(m, combos, 1.0, axis=1)
            return m, True
        if n not in self._ranks:
            self._ranks[n] = np.argsort(self.rng.random((self.k, n)), axis=1).astype(np.int32)
        return (self._ranks[n] < n1).astype(np.float64), False


def permutation_t_tests(
    groups1, groups2, alternative="greater", k: int = 10_000, seed: int = 0, chunk: int = 256
) -> TestResult:
    """Two-sample permutation tests of Student's t (pooled variance), many tests at once.

    groups1, groups2: sequences (one entry per test) of 1-d arrays; alternative: one of
    ALTERNATIVES or a sequence of them (group 1 vs group 2, "greater" = mean1 > mean2).
    Effect size: Cohen's d with the pooled SD. Tests that cannot run get a skip_reason.
    """
    T = len(groups1)
    alt = np.array([alternative] * T if isinstance(alternative, str) else list(alternative), dtype=object)
    bad = set(alt) - set(ALTERNATIVES)
    if bad:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, not {sorted(bad)}")
    rng = np.random.default_rng(seed)
    bank = _MaskBank(k, rng)
    res = _nan_result(T)
    by_size: dict[tuple[int, int], list[int]] = {}
    arrays = []
    for j in range(T):
        a, b = _as_array(groups1[j]), _as_array(groups2[j])
        arrays.append((a, b))
        res.n1[j], res.n2[j] = len(a), len(b)
        with np.errstate(all="ignore"):
            res.mean1[j] = a.mean() if len(a) else np.nan
            res.mean2[j] = b.mean() if len(b) else np.nan
        why = check_groups(a, b)
        if why:
            res.skip_reason[j] = why
            continue
        by_size.setdefault((len(a), len(b)), []).append(j)
    for (n1, n2), idx in sorted(by_size.items()):
        n = n1 + n2
        M, exact = bank.masks(n, n1)
        for start in range(0, len(idx), chunk):
            js = idx[start : start + chunk]
            X = np.empty((n, len(js)))
            for c, j in enumerate(js):
                x = np.concatenate(arrays[j])
                X[:, c] = x - x.mean()
            S, Q = X.sum(axis=0), (X * X).sum(axis=0)
            t_obs, d_obs = _t_from_sums(X[:n1].sum(axis=0), (X[:n1] ** 2).sum(axis=0), S, Q, n1, n2)
            if not exact:  # each test gets its own independent random relabeling
                for c in range(len(js)):
                    X[:, c] = X[rng.permutation(n), c]
            t_perm, _ = _t_from_sums(M @ X, M @ (X * X), S, Q, n1, n2)
            res.t[js], res.effect_size[js] = t_obs, d_obs
            res.p[js] = _pvalues(t_perm, t_obs, alt[js], exact)
    return res


def paired_permutation_t_tests(
    diffs, alternative="greater", k: int = 10_000, seed: int = 0, chunk: int = 256
) -> TestResult:
    """One-sample (paired) permutation tests of t on within-unit differences, by sign flips.

    diffs: sequence of 1-d arrays (group 1 minus group 2 per paired unit). Exact (all 2^n sign
    patterns) when 2^n <= k. Effect size: d_z = mean(diff) / sd(diff). mean1 holds the mean
    difference, mean2 is NaN; n1 = n2 = number of pairs.
    """
    T = len(diffs)
    alt = np.array([alternative] * T if isinstance(alternative, str) else list(alternative), dtype=object)
    rng = np.random.default_rng(seed)
    res = _nan_result(T)
    by_n: dict[int, list[int]] = {}
    arrays = []
    for j in range(T):
        d = _as_array(diffs[j])
        arrays.append(d)
        res.n1[j] = res.n2[j] = len(d)
        with np.errstate(all="ignore"):
            res.mean1[j] = d.mean() if len(d) else np.nan
        why = check_groups(d)
        if why:
            res.skip_reason[j] = why.replace("group 1 has", "the paired differences have").replace(
                "group 1 is", "the paired differences are"
            )
            continue
        by_n.setdefault(len(d), []).append(j)
    signs_cache: dict[int, tuple[np.ndarray, bool]] = {}
    for n, idx in sorted(by_n.items()):
        if n not in signs_cache:
            if 2**n <= k:
                signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
                signs_cache[n] = (signs, True)
            else:
                signs_cache[n] = (rng.choice((-1.0, 1.0), size=(k, n)), False)
        signs, exact = signs_cache[n]
        for start in range(0, len(idx), chunk):
            js = idx[start : start + chunk]
            D = np.column_stack([arrays[j] for j in js])  # (n, T)
            Q = (D * D).sum(axis=0)

            def tstat(S, n=n, Q=Q):
                m = S / n
                var = np.maximum(Q - n * m * m, 0.0) / (n - 1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    return m / np.sqrt(var / n), m / np.sqrt(var)

            t_obs, dz = tstat(D.sum(axis=0))
            if not exact:
                D = D[:, :] * rng.choice((-1.0, 1.0), size=D.shape)  # independent per-test flips
            t_perm, _ = tstat(signs @ D)
            res.t[js], res.effect_size[js] = t_obs, dz
            res.p[js] = _pvalues(t_perm, t_obs, alt[js], exact)
    return res


def bh_adjust(p, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg (statsmodels multipletests 'fdr_bh') over the non-NaN p-values.

    Returns (p_adj, significant); NaN p (skipped tests) stay NaN / False.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=np.float64)
    p_adj = np.full(p.shape, np.nan)
    sig = np.zeros(p.shape, dtype=bool)
    ok = ~np.isnan(p)
    if ok.any():
        reject, adj, _, _ = multipletests(p[ok], alpha=alpha, method="fdr_bh")
        p_adj[ok], sig[ok] = adj, reject
    return p_adj, sig


def spearman(x, y) -> tuple[float, float, int, str | None]:
    """Spearman rho and p-value (scipy) over the pairs where both are finite; skip reason else."""
    from scipy.stats import spearmanr

    x, y = _as_array(x), _as_array(y)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 3:
        return float("nan"), float("nan"), n, f"only {n} complete pair(s); Spearman needs at least 3"
    if np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan"), float("nan"), n, "one variable is constant; rho is undefined"
    r = spearmanr(x[ok], y[ok])
    return float(r.statistic), float(r.pvalue), n, None
