"""Metrics: METHOD.md §1 reference vectors and hypothesis properties (numpy and torch agree)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ctxprior.scoring.metrics import (
    entropy_np,
    kl_np,
    memorization_ratio,
    scores_from_probs,
    scores_np,
    scores_torch,
)

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)


def test_reference_uniform():
    s = scores_from_probs(np.full((3, 4), 0.25))
    assert s.susceptibility == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(s.persuasion, [0, 0, 0], atol=1e-15)


def test_reference_identity():
    s = scores_from_probs(np.eye(4))
    assert s.susceptibility == pytest.approx(1.3862943611198906, abs=1e-12)
    np.testing.assert_allclose(s.persuasion, [math.log(4)] * 4, atol=1e-12)
    assert not np.isnan(s.persuasion).any()


def test_reference_two_contexts():
    s = scores_from_probs([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]], [0.5, 0.5])
    assert s.susceptibility == pytest.approx(0.222923186, abs=1e-9)
    np.testing.assert_allclose(s.persuasion, [0.208472908, 0.237373468], atol=1e-9)


def test_reference_duplicated_context():
    s = scores_from_probs([[0.9, 0.1], [0.2, 0.8]], [2 / 3, 1 / 3])
    assert s.susceptibility == pytest.approx(0.252991378, abs=1e-9)
    # the same thing as a duplicated row with uniform weights
    s2 = scores_from_probs([[0.9, 0.1], [0.9, 0.1], [0.2, 0.8]])
    assert s2.susceptibility == pytest.approx(0.252991378, abs=1e-9)


def test_reference_vectors_torch():
    for probs, w, chi in [
        (np.eye(4), None, math.log(4)),
        ([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]], [0.5, 0.5], 0.222923186),
        ([[0.9, 0.1], [0.2, 0.8]], [2 / 3, 1 / 3], 0.252991378),
    ]:
        with np.errstate(divide="ignore"):
            lp = torch.log(torch.tensor(probs, dtype=torch.float64))
        out = scores_torch(lp, w)
        assert float(out["susceptibility"]) == pytest.approx(chi, abs=1e-9)
        assert not torch.isnan(out["persuasion"]).any()


def test_memorization_ratio():
    assert memorization_ratio(["ORIGINAL", "CONTEXT", "OTHER", "ORIGINAL"]) == pytest.approx(2 / 3)
    assert memorization_ratio(["OTHER", "OTHER"]) is None
    assert memorization_ratio([]) is None


# ---------------------------------------------------------------- properties


def prob_matrices(min_rows=1, max_rows=6, min_cols=2, max_cols=8):
    return st.integers(min_rows, max_rows).flatmap(
        lambda n: st.integers(min_cols, max_cols).flatmap(
            lambda v: arrays(
                np.float64, (n, v), elements=st.one_of(st.just(0.0), st.floats(1e-6, 1.0))
            ).filter(lambda a: (a.sum(axis=1) > 0).all())
        )
    )


@settings(max_examples=200, deadline=None)
@given(prob_matrices())
def test_properties(p):
    s = scores_from_probs(p)
    n = p.shape[0]
    assert np.isfinite(s.persuasion).all() and np.isfinite(s.entropy).all()
    assert (s.persuasion >= 0).all()
    assert s.susceptibility >= 0
    n_unique = len({tuple(np.round(r / r.sum(), 12)) for r in p})
    assert s.susceptibility <= min(s.mixture_entropy, math.log(n_unique)) + 1e-9
    # chi = H(mixture) - mean H
    assert s.susceptibility == pytest.approx(s.mixture_entropy - s.mean_conditional_entropy, abs=1e-9)
    assert s.susceptibility == pytest.approx(float(np.mean(s.persuasion)), abs=1e-12)
    assert s.n_contexts == n


@settings(max_examples=100, deadline=None)
@given(prob_matrices(max_rows=4), st.integers(0, 3))
def test_duplicates_weigh_twice(p, k):
    k = k % p.shape[0]
    dup = np.vstack([p, p[k : k + 1]])
    w = np.ones(p.shape[0])
    w[k] = 2
    a = scores_from_probs(dup)
    b = scores_from_probs(p, w)
    assert a.susceptibility == pytest.approx(b.susceptibility, abs=1e-12)
    np.testing.assert_allclose(a.persuasion[:-1], b.persuasion, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(prob_matrices())
def test_torch_matches_numpy(p):
    a = scores_from_probs(p)
    with np.errstate(divide="ignore"):
        lp = np.log(p / p.sum(axis=1, keepdims=True))
    b = scores_torch(torch.from_numpy(lp))
    np.testing.assert_allclose(b["persuasion"].numpy(), a.persuasion, atol=1e-12)
    assert float(b["susceptibility"]) == pytest.approx(a.susceptibility, abs=1e-12)
    assert float(b["mixture_entropy"]) == pytest.approx(a.mixture_entropy, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(prob_matrices(min_rows=1, max_rows=1))
def test_kl_self_zero_and_entropy_bounds(p):
    with np.errstate(divide="ignore"):
        lp = np.log(p[0] / p[0].sum())
    assert kl_np(lp, lp) == pytest.approx(0.0, abs=1e-12)
    h = entropy_np(lp)
    assert -1e-12 <= h <= math.log(p.shape[1]) + 1e-12


def test_single_context_has_zero_susceptibility():
    s = scores_from_probs([[0.3, 0.0, 0.7]])
    assert s.susceptibility == 0.0 and s.persuasion[0] == 0.0


def test_bad_weights():
    with pytest.raises(ValueError):
        scores_np(np.log(np.full((2, 2), 0.5)), [1, -1])


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(2, 9), st.integers(0, 10**6))
def test_chunked_torch_scores_equal_the_numpy_reference(nq, nc, v, seed):
    """scores_torch_chunk (the per-layer lens' batched form) equals scores_np query by query,
    zeros in the distributions included."""
    import torch

    from ctxprior.scoring.metrics import scores_torch_chunk

    rng = np.random.default_rng(seed)
    p = rng.random((nq, nc, v)) * (rng.random((nq, nc, v)) > 0.3)
    p[..., 0] += 1e-3
    with np.errstate(divide="ignore"):
        lp = np.log(p / p.sum(-1, keepdims=True))
    got = scores_torch_chunk(torch.tensor(lp, dtype=torch.float32))
    for i in range(nq):
        ref = scores_np(lp[i].astype(np.float32))
        np.testing.assert_allclose(got["persuasion"][i].numpy(), ref.persuasion, atol=1e-9)
        assert float(got["susceptibility"][i]) == pytest.approx(ref.susceptibility, abs=1e-9)
        assert float(got["mixture_entropy"][i]) == pytest.approx(ref.mixture_entropy, abs=1e-9)
