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

The field's other reliance measures compare each with-context distribution p_c = p(A | c, q(e))
with the *no-context* one p_0 = p(A | q(e)) of the prompt without any context (not the mixture):
``reliance_np`` (reference) and ``reliance_torch`` (device) -- the shift KL(p_c ‖ p_0) (inseq's
contrastive KL, original = with context), JSD(p_c, p_0) (AdaCAD), CK-PLUG's confidence gain
H(p̃_0) − H(p̃_c) over its plausible tokens (``plausible_np``) and the same over the whole
vocabulary, the probabilities of the context's, the gold and the prior's answer, the scaled
probability difference of the context's answer (DRUID) and of the model's own no-context answer
(CUB's CCU for irrelevant contexts), and the argmax answers; see docs/concepts.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures import RELIANCE_MEASURES, answer_set_of, measure_names


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


def scores_torch(logp, weights=None, keep_probs: bool = False):
    """Same as scores_np for a torch tensor [N, V] of log-probs; stays on the tensor's device.

    Returns a dict of float64 tensors: persuasion [N], entropy [N], susceptibility, mixture_entropy,
    mean_conditional_entropy (0-d), log_mixture [V]; with ``keep_probs``, also probs [N, V] (the
    float64 probabilities, for ``reliance_torch``).
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
    out = {
        "persuasion": psi,
        "entropy": ent,
        "susceptibility": (w * psi).sum(),
        "mixture_entropy": h_mix,
        "mean_conditional_entropy": (w * ent).sum(),
        "log_mixture": log_mix,
    }
    return {**out, "probs": p} if keep_probs else out


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


# ---------------------------------------------------------------- reliance against the no-context prompt

LN2 = float(np.log(2.0))
# the keys reliance_np / reliance_torch return, as the measures are declared (ctxprior/measures.py)
RELIANCE_DIVERGENCES = measure_names("float", finite=True)  # always finite
RELIANCE_FLOATS = measure_names("float")  # NaN where the answer is unknown
# CK-PLUG's plausibility filter (Bi et al. 2025, github byronBBL/CK-PLUG,
# transformers-4.49/src/transformers/generation/utils.py, ``relative_top_filter`` as ``_ck_decoding``
# calls it): a token stays when its probability is at least RELATIVE_TOP x the top token's, or
# when it is among the SELECT_TOP most probable, in either of the two distributions.
RELATIVE_TOP = 0.01
SELECT_TOP = 10
RELIANCE_ANSWERS = measure_names("answer")  # indices, -1: none
RELIANCE_KEYS = RELIANCE_FLOATS + RELIANCE_ANSWERS
# always over the vocabulary at the first answer token (the sources'), whatever the estimator
RELIANCE_VOCAB = tuple(m.name for m in RELIANCE_MEASURES if m.vocab)
# ctxprior's answer-set variants: {stored name: the measure it is computed as, over the candidates}
RELIANCE_ANSWER_SET = answer_set_of()
# the float columns a unit writes: the measures above, then the answer-set variants (NaN: none)
RELIANCE_ROW_FLOATS = RELIANCE_FLOATS + tuple(RELIANCE_ANSWER_SET)


def jsd_np(logp: np.ndarray, logq: np.ndarray) -> np.ndarray:
    """Jensen–Shannon divergence ½ KL(p ‖ m) + ½ KL(q ‖ m), m = (p + q) / 2, over the last axis, in
    nats (0 ≤ JSD ≤ ln 2; AdaCAD, Wang et al. 2025)."""
    logp, logq = np.broadcast_arrays(np.asarray(logp, np.float64), np.asarray(logq, np.float64))
    logm = np.logaddexp(logp, logq) - LN2
    return np.clip(0.5 * (kl_np(logp, logm) + kl_np(logq, logm)), 0.0, LN2)


def scaled_difference_np(p_with, p_without) -> np.ndarray:
    """DRUID's scaled probability difference of one answer (Hagström et al. 2025), in [-1, 1]:
    (p_c − p_0) / (1 − p_0) when the context raises the answer's probability, (p_c − p_0) / p_0
    when it lowers it; 0 when they are equal (also where the denominator is 0)."""
    pc, p0 = np.asarray(p_with, np.float64), np.asarray(p_without, np.float64)
    d = pc - p0
    den = np.where(d >= 0, 1.0 - p0, p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, d / np.where(den > 0, den, 1.0), 0.0)


def plausible_np(logp: np.ndarray, relative_top: float = RELATIVE_TOP, select_top: int = SELECT_TOP):
    """CK-PLUG's plausible tokens of each row (over the last axis): probability at least
    ``relative_top`` x the row's top probability, or among its ``select_top`` most probable."""
    lp = np.asarray(logp, np.float64)
    k = min(select_top, lp.shape[-1])
    kth = -np.sort(-lp, axis=-1)[..., k - 1]
    thresh = np.minimum(kth, lp.max(axis=-1) + np.log(relative_top))
    return lp >= thresh[..., None]


def filtered_entropy_np(logp: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """H of each row's distribution restricted to ``keep`` and renormalized (nats)."""
    lp = np.where(keep, np.asarray(logp, np.float64), -np.inf)
    return entropy_np(lp - _np_logsumexp(lp, axis=-1)[..., None])


def confidence_gain_np(logp, log_prior) -> np.ndarray:
    """CK-PLUG's Confidence Gain of each with-context row against the no-context distribution:
    H(p̃_0) − H(p̃_c), both restricted to the tokens plausible in either (``plausible_np``) and
    renormalized (Bi et al. 2025, §3; ``_ck_decoding``: IG = entropy(no context) − entropy(context))."""
    lp = np.atleast_2d(np.asarray(logp, np.float64))
    l0 = np.broadcast_to(np.asarray(log_prior, np.float64), lp.shape)
    keep = plausible_np(lp) | plausible_np(l0)
    return filtered_entropy_np(l0, keep) - filtered_entropy_np(lp, keep)


def _pick_np(p: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """p[c, idx[c]] per row, NaN where idx < 0 (no such answer)."""
    out = p[np.arange(len(idx)), np.maximum(idx, 0)]
    return np.where(idx >= 0, out, np.nan)


def reliance_np(logp, log_prior, context_answer, gold_answer: int = -1) -> dict[str, np.ndarray]:
    """The reliance measures of one query (reference for ``reliance_torch``).

    ``logp [C, A]``: log p(A | c, q) per context; ``log_prior [A]``: log p(A | q) without context;
    ``context_answer [C]``: the index in A of the answer each context supports (-1: none);
    ``gold_answer``: the index of the fact's gold answer (-1: none). Returns arrays of length C
    (``RELIANCE_KEYS``); an answer probability is NaN where the answer is unknown; ``answer_*`` are
    indices in A (the argmax with context, the argmax without, and the two inputs).
    """
    lp = np.asarray(logp, np.float64)
    l0 = np.asarray(log_prior, np.float64)
    ctx = np.asarray(context_answer, np.int64)
    p, p0 = np.exp(lp), np.exp(l0)
    top0 = int(np.argmax(l0))
    p_ctx = _pick_np(p, ctx)
    p0_ctx = np.where(ctx >= 0, p0[np.maximum(ctx, 0)], np.nan)
    return {
        "shift": kl_np(lp, l0[None, :]),
        "jsd": jsd_np(lp, l0[None, :]),
        "confidence_gain": confidence_gain_np(lp, l0),
        "confidence_gain_vocab": entropy_np(l0) - entropy_np(lp),
        "p_context_answer": p_ctx,
        "p_gold_answer": _pick_np(p, np.full(len(lp), gold_answer, np.int64)),
        "p_prior_answer": p[:, top0],
        "scaled_difference": np.where(ctx >= 0, scaled_difference_np(p_ctx, p0_ctx), np.nan),
        "scaled_difference_memory": scaled_difference_np(p[:, top0], np.full(len(lp), p0[top0])),
        "answer_top": np.argmax(lp, axis=-1),
        "answer_prior": np.full(len(lp), top0, np.int64),
        "answer_context": ctx,
        "answer_gold": np.full(len(lp), gold_answer, np.int64),
    }


def _plausible_torch(lp, relative_top: float = RELATIVE_TOP, select_top: int = SELECT_TOP):
    """``plausible_np`` on the device (rows over the last axis)."""
    import torch

    kth = torch.topk(lp, min(select_top, lp.shape[-1]), dim=-1).values[..., -1]
    thresh = torch.minimum(kth, lp.max(-1).values + float(np.log(relative_top)))
    return lp >= thresh[..., None]


def confidence_gain_torch(lp, p, l0, p0):
    """``confidence_gain_np`` on the device, from what ``reliance_torch`` holds: ``lp [C, A]``
    with-context log-probs and ``p`` their float64 probabilities, ``l0``/``p0 [A]`` the no-context
    ones. A distribution restricted to the kept set S and renormalized has entropy
    log Z − (Σ_S p log p) / Z with Z = Σ_S p, so no filtered copy of the rows is made: two masked
    sums over the rows and two products for the no-context side."""
    import torch

    keep = _plausible_torch(lp) | _plausible_torch(l0)[None, :]
    zero = torch.zeros((), dtype=torch.float64, device=p.device)
    z_c = torch.where(keep, p, zero).sum(-1)
    h_c = z_c.log() - torch.where(keep, torch.special.xlogy(p, p), zero).sum(-1) / z_c
    k = keep.to(torch.float64)
    z_0 = k @ p0
    h_0 = z_0.log() - (k @ torch.special.xlogy(p0, p0)) / z_0
    return h_0 - h_c


def reliance_torch(lp, p, prior, context_answer, gold_answer, entropy):
    """``reliance_np`` on the device for one query, from what ``scores_torch`` already holds:
    ``lp [C, A]`` log-probs, ``p [C, A]`` their float64 probabilities, ``entropy [C]`` H(p_c);
    ``prior [A]`` the no-context log-probs; ``context_answer [C]`` and ``gold_answer`` (0-d) int64
    indices (-1: none). Fewer passes over the rows than the definitions: KL(p_c ‖ p_0) =
    −H(p_c) − Σ p_c log p_0 (one product) and JSD = H(m) − ½ (H(p_c) + H(p_0)). Float64; returns a
    dict of [C] tensors. Exact where p_0 > 0 wherever p_c > 0 (else the KL is infinite)."""
    import torch

    l0 = prior.to(torch.float64)
    p0 = l0.exp()
    h0 = entropy_torch(l0)
    m = (p + p0) * 0.5
    h_m = -torch.special.xlogy(m, m).sum(-1)
    top0 = l0.argmax()
    ctx = context_answer.clamp_min(0)
    nan = torch.full((), float("nan"), dtype=torch.float64, device=p.device)
    p_ctx = torch.where(context_answer >= 0, p.gather(1, ctx[:, None])[:, 0], nan)
    d = p_ctx - p0[ctx]
    den = torch.where(d >= 0, 1.0 - p0[ctx], p0[ctx])
    scaled = torch.where(den > 0, d / torch.where(den > 0, den, 1.0), 0.0)
    p_top0 = p.index_select(1, top0.reshape(1))[:, 0]  # a copy: p[:, top0] is a view of p
    d0 = p_top0 - p0[top0]
    den0 = torch.where(d0 >= 0, 1.0 - p0[top0], p0[top0])
    return {
        "shift": (-entropy - p @ l0.nan_to_num(neginf=0.0)).clamp_min(0.0),
        "jsd": (h_m - 0.5 * (entropy + h0)).clamp(0.0, LN2),
        "confidence_gain": confidence_gain_torch(lp, p, l0, p0),
        "confidence_gain_vocab": h0 - entropy,
        "p_context_answer": p_ctx,
        "p_gold_answer": torch.where(gold_answer >= 0, p[:, gold_answer.clamp_min(0)], nan),
        "p_prior_answer": p_top0,
        "scaled_difference": torch.where(context_answer >= 0, scaled, nan),
        "scaled_difference_memory": torch.where(den0 > 0, d0 / torch.where(den0 > 0, den0, 1.0), 0.0),
        "answer_top": lp.argmax(-1),
        "answer_prior": top0.expand(p.shape[0]),
        "answer_context": context_answer,
        "answer_gold": gold_answer.expand(p.shape[0]),
    }


def outcomes_np(top, context_answer, gold_answer) -> np.ndarray:
    """Per context, from the with-context argmax answer: ORIGINAL (the gold answer; it wins when the
    context supports the gold answer too), CONTEXT (the answer the context supports) or OTHER --
    the labels of Longpre et al. (2021) that ``generation.label`` uses."""
    top, ctx, gold = np.asarray(top), np.asarray(context_answer), np.asarray(gold_answer)
    return np.where(
        (gold >= 0) & (top == gold), "ORIGINAL", np.where((ctx >= 0) & (top == ctx), "CONTEXT", "OTHER")
    )


def memorization_ratio(labels) -> float | None:
    """n_original / (n_original + n_context); None when the denominator is 0 (undefined)."""
    labels = list(labels)
    n_o = sum(1 for x in labels if x == "ORIGINAL")
    n_c = sum(1 for x in labels if x == "CONTEXT")
    return None if n_o + n_c == 0 else n_o / (n_o + n_c)
