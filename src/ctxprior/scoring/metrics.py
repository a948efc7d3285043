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

Implementations with the same semantics:
- ``scores_np`` (numpy float64) -- the reference, used by tests and the naive benchmark;
- ``vocab_pass`` (torch, on the device) -- used by the estimators: ψ, χ and the reliance measures
  below of many queries in one pass over the vocabulary, float32 terms and float64 per-row sums
  (issue 41; ``benchmarks/vocab_pass.py`` compares it with the float64 path it replaced);
- ``scores_torch`` (torch, float64, context weights) -- the competent baseline of the GPU
  benchmarks; ``scores_torch_chunk`` is the same for a chunk of queries at once (uniform
  weights), used by the per-layer logit-lens scores.

The field's other reliance measures compare each with-context distribution p_c = p(A | c, q(e))
with the *no-context* one p_0 = p(A | q(e)) of the prompt without any context (not the mixture):
``reliance_np`` (reference) and ``vocab_pass`` (device, with ψ and χ in one pass) -- the shift KL(p_c ‖ p_0) (inseq's
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


# ---------------------------------------------------------------- torch (fast path)


def scores_torch(logp, weights=None, keep_probs: bool = False):
    """Same as scores_np for a torch tensor [N, V] of log-probs; stays on the tensor's device.

    Returns a dict of float64 tensors: persuasion [N], entropy [N], susceptibility, mixture_entropy,
    mean_conditional_entropy (0-d), log_mixture [V]; with ``keep_probs``, also probs [N, V] (the
    float64 probabilities).
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


# ---------------------------------------------------------------- reliance against the no-context prompt

LN2 = float(np.log(2.0))
# the keys reliance_np / vocab_pass return, as the measures are declared (ctxprior/measures.py)
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
    """The reliance measures of one query (reference for ``vocab_pass``).

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


# ---------------------------------------------------------------- the vocabulary pass (the device path)

# elements ([queries x contexts x vocabulary entries]) per step of ``vocab_pass``: bounds its
# temporaries (about ten float32 tensors of this size at once: 640 MiB); ``row_stats`` alike
VOCAB_ELEMENTS = 1 << 24


def row_stats(table, chunk: int | None = None):
    """Per row of ``table [R, V]`` (log-probs): (its largest value, the first index holding it, its
    ``SELECT_TOP``-th largest value, log Σ exp of the row in float64), a chunk of the vocabulary at
    a time (no sorted copy). The last is the row's normalisation error: a float32 log-softmax
    shifts a whole row by the rounding of its float32 log-sum-exp (up to ~2e-7 at 6 nats), which
    ``vocab_pass`` divides out."""
    import torch

    k = min(SELECT_TOP, table.shape[-1])
    chunk = chunk or max(k, VOCAB_ELEMENTS // max(1, table.shape[0]))
    mx, am, tops, z = [], [], [], 0.0
    for v0 in range(0, table.shape[-1], chunk):
        part = table[:, v0 : v0 + chunk]
        m, i = part.max(-1)
        mx.append(m)
        am.append(i + v0)
        tops.append(part.topk(min(k, part.shape[-1]), dim=-1).values)
        z = z + part.exp().sum(-1, dtype=torch.float64)
    best = torch.stack(mx, -1).argmax(-1, keepdim=True)  # the first chunk holding the maximum
    top = torch.stack(mx, -1).gather(-1, best)[:, 0]
    kth = torch.cat(tops, -1).topk(k, dim=-1).values[:, -1]
    return top, torch.stack(am, -1).gather(-1, best)[:, 0], kth, torch.as_tensor(z).log()


def _vocab_sums(table, rows, prior, thresh, inv_z, chunk: int) -> dict:
    """The per-row sums over the vocabulary that ``vocab_pass`` needs, in float64; every
    elementwise term is made in the table's dtype on one chunk of the vocabulary at a time, from
    the probabilities p = exp(log-prob) / Z (``inv_z`` = 1 / Z per table row, ``row_stats``) and
    the table's log-probs (``vocab_pass`` subtracts log Z from the sums): one logarithm per entry
    (H(m) of the JSD), the mixture's per query."""
    import torch

    acc: dict = {}
    low = torch.finfo(table.dtype).min  # -inf -> a finite floor, so p = 0 gives p log p = 0

    def add(name, x) -> None:
        s = x.sum(-1, dtype=torch.float64)  # CUDA casts as it loads; CPU copies (slower, as exact)
        acc[name] = acc[name] + s if name in acc else s

    for v0 in range(0, table.shape[-1], chunk):
        lp = table[rows, v0 : v0 + chunk].clamp_min_(low)  # [Q, C, v], a copy
        p = lp.exp().mul_(inv_z[rows][..., None])
        p_lp = p * lp
        mix = p.mean(1)  # the mixture over contexts, [Q, v]
        add("p_lp", p_lp)
        add("p_logmix", p * mix.log().clamp_min_(low)[:, None])  # mix(a) = 0: p_c(a) = 0
        if prior is None:
            continue
        l0 = table[prior, v0 : v0 + chunk].clamp_min_(low)  # [Q, v]
        p0 = l0.exp().mul_(inv_z[prior][:, None])
        p0_l0 = p0 * l0
        add("p0_l0", p0_l0)
        add("p_l0", p * l0[:, None])
        m = (p + p0[:, None]) * 0.5
        add("m_logm", torch.special.xlogy(m, m))
        keep = (lp >= thresh[rows][..., None]) | (l0 >= thresh[prior][:, None])[:, None]
        add("z_c", torch.where(keep, p, 0.0))
        add("s_c", torch.where(keep, p_lp, 0.0))
        add("z_0", torch.where(keep, p0[:, None], 0.0))
        add("s_0", torch.where(keep, p0_l0[:, None], 0.0))
    return acc


def _scaled_difference(pc, p0):
    """``scaled_difference_np`` on the device."""
    import torch

    d = pc - p0
    den = torch.where(d >= 0, 1.0 - p0, p0)
    return torch.where(den > 0, d / torch.where(den > 0, den, 1.0), 0.0)


def vocab_pass(table, rows, prior=None, context_answer=None, gold_answer=None, chunk: int | None = None):
    """ψ, χ and the reliance measures of Q queries in one pass over the vocabulary (the device
    path; ``scores_np`` and ``reliance_np`` are the references).

    ``table [R, V]``: next-token log-probs (the engine's float32 table); ``rows [Q, C]``: the table
    row of each query's prompt with each context; ``prior [Q]``: the row of its no-context prompt
    (None: ψ and χ only); ``context_answer [Q, C]`` / ``gold_answer [Q]``: answer indices (-1:
    none). Uniform context weights. Elementwise terms are made in the table's dtype ``chunk``
    vocabulary entries at a time (default: ``VOCAB_ELEMENTS`` elements of [Q, C, chunk]), only the per-row sums in float64: no float64 copy, no gathered copy of
    the rows. Identities used: ψ_c = −H_c − Σ p_c log mix; Σ_a mix f = mean_c Σ_a p_c f (so
    mean_c KL(p_c ‖ p_0) = χ + KL(mix ‖ p_0) to float64 rounding); KL(p_c ‖ p_0) = −H_c − Σ p_c log p_0;
    JSD = H(m) − ½ (H_c + H_0); a distribution restricted to S and renormalized has entropy
    log Z − (Σ_S p log p) / Z, Z = Σ_S p (CK-PLUG's confidence gain). Returns float64 [Q, C]
    (per context) and [Q] (per query) tensors keyed like ``Scores`` plus ``prior_entropy``,
    ``prior_kl`` and ``RELIANCE_KEYS`` with a prior."""
    import torch

    chunk = chunk or max(1, VOCAB_ELEMENTS // max(1, rows.numel()))
    top, arg, kth, log_z = row_stats(table, chunk)
    thresh = torch.minimum(kth.to(torch.float64), top.to(torch.float64) + float(np.log(RELATIVE_TOP)))
    s = _vocab_sums(table, rows, prior, thresh, (-log_z).exp().to(table.dtype), chunk)
    lz_c = log_z[rows]
    plogp = s["p_lp"] - lz_c  # Σ p log p with p = exp(log-prob − log Z)
    h = -plogp
    psi = (plogp - s["p_logmix"]).clamp_min(0.0)
    out = {
        "persuasion": psi,
        "entropy": h,
        "susceptibility": psi.mean(1),
        "mixture_entropy": -s["p_logmix"].mean(1),  # Σ mix log mix = mean_c Σ p_c log mix
        "mean_conditional_entropy": h.mean(1),
    }
    if prior is None:
        return out
    lz_0 = log_z[prior]
    h0 = lz_0 - s["p0_l0"]
    p_logp0 = s["p_l0"] - lz_0[:, None]
    out["prior_kl"] = (s["p_logmix"] - p_logp0).mean(1).clamp_min(0.0)  # KL(mix ‖ p_0)
    out["prior_entropy"] = h0
    out["shift"] = (plogp - p_logp0).clamp_min(0.0)
    out["jsd"] = (-s["m_logm"] - 0.5 * (h + h0[:, None])).clamp(0.0, LN2)
    # the filtered entropies log z − Σ_S p log p / z: log Z cancels out of log p there
    h_c, h_00 = s["z_c"].log() - s["s_c"] / s["z_c"], s["z_0"].log() - s["s_0"] / s["z_0"]
    out["confidence_gain"] = (h_00 + lz_0[:, None]) - (h_c + lz_c)
    out["confidence_gain_vocab"] = h0[:, None] - h
    return out | _answer_measures(table, log_z, rows, prior, arg, context_answer, gold_answer)


def _answer_measures(table, log_z, rows, prior, arg, context_answer, gold_answer) -> dict:
    """The measures of single answers (``vocab_pass``): a few table entries each, no pass."""
    import torch

    q, c = rows.shape
    if context_answer is None:
        context_answer = rows.new_full((q, c), -1)
    if gold_answer is None:
        gold_answer = rows.new_full((q,), -1)
    nan = torch.full((), float("nan"), dtype=torch.float64, device=table.device)

    def prob(r, t):
        return (table[r, t].to(torch.float64) - log_z[r]).exp()

    ctx, gold, top0 = context_answer.clamp_min(0), gold_answer.clamp_min(0), arg[prior]
    p_ctx = torch.where(context_answer >= 0, prob(rows, ctx), nan)
    p_top0 = prob(rows, top0[:, None])
    scaled = _scaled_difference(p_ctx, prob(prior[:, None], ctx))
    return {
        "p_context_answer": p_ctx,
        "p_gold_answer": torch.where(gold_answer[:, None] >= 0, prob(rows, gold[:, None]), nan),
        "p_prior_answer": p_top0,
        "scaled_difference": torch.where(context_answer >= 0, scaled, nan),
        "scaled_difference_memory": _scaled_difference(p_top0, prob(prior, top0)[:, None]),
        "answer_top": arg[rows],
        "answer_prior": top0[:, None].expand(q, c),
        "answer_context": context_answer,
        "answer_gold": gold_answer[:, None].expand(q, c),
    }


def outcomes_np(top, context_answer, gold_answer) -> np.ndarray:
    """Per context, from the with-context argmax answer: ORIGINAL (the gold answer; it wins when the
    context supports the gold answer too), CONTEXT (the answer the context supports) or OTHER --
    the labels of Longpre et al. (2021) that ``generation.label`` uses."""
    top, ctx, gold = np.asarray(top), np.asarray(context_answer), np.asarray(gold_answer)
    return np.where(
        (gold >= 0) & (top == gold), "ORIGINAL", np.where((ctx >= 0) & (top == ctx), "CONTEXT", "OTHER")
    )
