"""Persuasion ψ and susceptibility χ (Du et al. 2024, §2; METHOD.md §1) as pure functions.

For a query q(e) about entity e and sampled contexts c with weights p(c) (uniform: 1/N):

    p(A | q(e))     = Σ_c p(c) p(A | c, q(e))                        (the mixture over contexts)
    ψ(c, q(e))      = KL( p(A | c, q(e)) ‖ p(A | q(e)) )              (persuasion, nats, ≥ 0)
    χ(q(e))         = Σ_c p(c) ψ(c, q(e)) = I(C; A | q(e))            (susceptibility)
                    = H(p(A | q(e))) − Σ_c p(c) H(p(A | c, q(e))),   0 ≤ χ ≤ min(H(A | q(e)), log N)

A is the answer: the next token over the whole vocabulary (first-token estimator) or the
candidate answers (answer-set estimator, ``estimators.py``).

Inputs are log-probabilities ``logp[c, a] = log p(A=a | c, q(e))`` (rows = contexts, one row per
sampled context: a duplicated context appears twice and so weighs twice) and optional context
weights p(c) (uniform when omitted). Everything is computed in log space with float64
accumulation: the mixture with logsumexp, zero probabilities contribute exactly 0 (no NaN/inf).

Two implementations with the same semantics:
- ``scores_np`` (numpy float64) -- the reference, used by tests and the naive benchmark;
- ``scores_torch`` (torch, on the tensors' device, float64) -- used by the fast estimator;
  ``scores_torch_chunk`` is the same for a chunk of queries at once (uniform weights), used by
  the per-layer logit-lens scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Scores:
    persuasion: np.ndarray  # psi per context (nats), shape [N]
    entropy: np.ndarray  # H(p(A|c)) per context, shape [N]
    susceptibility: float  # chi = sum_c p(c) psi_c
    mixture_entropy: float  # H(p(A|q)) of the mixture
    mean_conditional_entropy: float  # sum_c p(c) H(p(A|c))
    n_contexts: int
    log_mixture: np.ndarray | None = None  # log p(A|q(e)), shape [V]


# ---------------------------------------------------------------- numpy (reference)


def _np_log_weights(n: int, weights) -> np.ndarray:
    if weights is None:
        return np.full(n, -np.log(n), dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("weights must be n non-negative finite numbers with a positive sum")
    with np.errstate(divide="ignore"):
        return np.log(w / w.sum())


def _np_logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)


def log_normalize_np(logits: np.ndarray) -> np.ndarray:
    """log_softmax over the last axis, float64."""
    x = np.asarray(logits, dtype=np.float64)
    return x - _np_logsumexp(x, axis=-1)[..., None]


def entropy_np(logp: np.ndarray) -> np.ndarray:
    """H(p) = -sum p log p over the last axis; p = 0 contributes 0."""
    logp = np.asarray(logp, dtype=np.float64)
    p = np.exp(logp)
    with np.errstate(invalid="ignore"):
        return -np.sum(np.where(p > 0, p * logp, 0.0), axis=-1)


def kl_np(logp: np.ndarray, logq: np.ndarray) -> np.ndarray:
    """KL(p || q) over the last axis; terms with p = 0 are 0; clipped at 0 (rounding)."""
    logp = np.asarray(logp, dtype=np.float64)
    logq = np.asarray(logq, dtype=np.float64)
    p = np.exp(logp)
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (logp - logq), 0.0)
    return np.maximum(np.sum(terms, axis=-1), 0.0)


def scores_np(logp, weights=None, keep_mixture: bool = False) -> Scores:
    """Persuasion per context and susceptibility from a [N, V] matrix of log-probabilities."""
    logp = np.asarray(logp, dtype=np.float64)
    if logp.ndim != 2 or logp.shape[0] == 0:
        raise ValueError("logp must be a non-empty [contexts, answers] matrix")
    n = logp.shape[0]
    lw = _np_log_weights(n, weights)
    w = np.exp(lw)
    log_mix = _np_logsumexp(lw[:, None] + logp, axis=0)
    psi = kl_np(logp, log_mix[None, :])
    ent = entropy_np(logp)
    h_mix = float(entropy_np(log_mix))
    chi = float(np.sum(w * psi))
    return Scores(
        persuasion=psi,
        entropy=ent,
        susceptibility=chi,
        mixture_entropy=h_mix,
        mean_conditional_entropy=float(np.sum(w * ent)),
        n_contexts=n,
        log_mixture=log_mix if keep_mixture else None,
    )


def scores_from_probs(probs, weights=None) -> Scores:
    """Convenience: same as scores_np for a probability matrix (zeros allowed)."""
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return scores_np(np.log(p / p.sum(axis=-1, keepdims=True)), weights)


def susceptibility(probs, weights=None) -> float:
    return scores_from_probs(probs, weights).susceptibility


def persuasion(probs, weights=None) -> np.ndarray:
    return scores_from_probs(probs, weights).persuasion


# ---------------------------------------------------------------- torch (fast path)


def scores_torch(logp, weights=None):
    """Same as scores_np for a torch tensor [N, V] of log-probs; stays on the tensor's device.

    Returns a dict of float64 tensors: persuasion [N], entropy [N], susceptibility, mixture_entropy,
    mean_conditional_entropy (0-d), log_mixture [V].
    """
    import torch

    lp = logp.to(torch.float64)
    n = lp.shape[0]
    if weights is None:
        lw = torch.full((n,), -float(np.log(n)), dtype=torch.float64, device=lp.device)
    else:
        w = torch.as_tensor(weights, dtype=torch.float64, device=lp.device)
        lw = torch.log(w / w.sum())
    log_mix = torch.logsumexp(lw[:, None] + lp, dim=0)
    p = lp.exp()
    pos = p > 0
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    ent = -torch.where(pos, p * lp, zero).sum(-1)
    psi = torch.where(pos, p * (lp - log_mix[None, :]), zero).sum(-1).clamp_min(0.0)
    pm = log_mix.exp()
    h_mix = -torch.where(pm > 0, pm * log_mix, zero).sum()
    w = lw.exp()
    return {
        "persuasion": psi,
        "entropy": ent,
        "susceptibility": (w * psi).sum(),
        "mixture_entropy": h_mix,
        "mean_conditional_entropy": (w * ent).sum(),
        "log_mixture": log_mix,
    }


def scores_torch_chunk(lp32):
    """``scores_torch`` for a chunk of queries at once, ``lp32 [queries, contexts, V]``, uniform
    context weights, in fewer passes over the rows: the mixture as a mean of probabilities, and
    ψ_c = -H_c - Σ_a p_c(a) log mix(a) (one batched product); float64 throughout. Equal to
    ``scores_torch`` up to float rounding (the per-layer logit-lens scores use it)."""
    import torch

    lp = lp32.to(torch.float64)
    p = lp.exp()
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    ent = -torch.where(p > 0, p * lp, zero).sum(-1)  # [Q, C]
    mix = p.mean(1)  # [Q, V]
    log_mix = mix.log()
    h_mix = -torch.where(mix > 0, mix * log_mix, zero).sum(-1)  # [Q]
    # where mix(a) = 0 every p_c(a) = 0, so its -inf may be replaced by 0
    cross = torch.bmm(p, log_mix.nan_to_num(neginf=0.0)[..., None])[..., 0]  # [Q, C]
    psi = (-ent - cross).clamp_min(0.0)
    return {
        "persuasion": psi,
        "entropy": ent,
        "susceptibility": psi.mean(1),
        "mixture_entropy": h_mix,
        "mean_conditional_entropy": ent.mean(1),
    }


def kl_torch(logp, logq):
    import torch

    lp = logp.to(torch.float64)
    lq = logq.to(torch.float64)
    p = lp.exp()
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    return torch.where(p > 0, p * (lp - lq), zero).sum(-1).clamp_min(0.0)


def entropy_torch(logp):
    import torch

    lp = logp.to(torch.float64)
    p = lp.exp()
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    return -torch.where(p > 0, p * lp, zero).sum(-1)


def memorization_ratio(labels) -> float | None:
    """n_original / (n_original + n_context); None when the denominator is 0 (undefined)."""
    labels = list(labels)
    n_o = sum(1 for x in labels if x == "ORIGINAL")
    n_c = sum(1 for x in labels if x == "CONTEXT")
    return None if n_o + n_c == 0 else n_o / (n_o + n_c)
