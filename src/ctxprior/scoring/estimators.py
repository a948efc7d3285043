"""Estimators: from (contexts, queries) to persuasion / susceptibility scores.

- ``first_token``: the paper's approximation -- A is the next token after the prompt, over the full
  vocabulary (fast engine: last-position logits, shared-prefix KV, no padding, float64 on device).
- ``answer_set``: A ranges over a set of candidate answer strings, each scored in full (teacher
  forcing, sum of token log-probs), normalized over the set.

Every query is scored against every context (the same contexts for every entity); the prompt is
``context + query`` as one string. The no-context prompt ``query`` alone gives the prior entropy,
top-k and KL(mixture || prior).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from .engine import Engine
from .metrics import entropy_torch, kl_torch, scores_torch

ESTIMATORS = ("first-token", "answer-set")


class ScoreError(RuntimeError):
    """Scores that cannot be trusted (NaN / inf); the unit is marked failed."""


@dataclass
class QueryScores:
    persuasion: np.ndarray
    entropy: np.ndarray
    susceptibility: float
    mixture_entropy: float
    mean_conditional_entropy: float
    n_contexts: int
    prior_entropy: float | None = None
    prior_kl: float | None = None
    prior_topk: list[tuple[int, str, float]] = field(default_factory=list)
    prompt_topk: list[list[tuple[int, str, float]]] | None = None


def _check_finite(name: str, *values) -> None:
    for v in values:
        arr = np.asarray(v, dtype=np.float64)
        if not np.isfinite(arr).all():
            raise ScoreError(f"non-finite {name} score (NaN/inf); refusing to store it")


def _topk(logp_rows: torch.Tensor, k: int, labels: Callable[[int], str]) -> list[list[tuple[int, str, float]]]:
    if k <= 0:
        return [[] for _ in range(logp_rows.shape[0])]
    k = min(k, logp_rows.shape[-1])
    vals, idx = torch.topk(logp_rows.to(torch.float64), k, dim=-1)
    probs = vals.exp().cpu().numpy()
    idx = idx.cpu().numpy()
    return [[(int(t), labels(int(t)), float(p)) for t, p in zip(ti, pi)] for ti, pi in zip(idx, probs)]


def _scores_from_rows(rows: torch.Tensor, prior_row: torch.Tensor | None, topk: int,
                      prompt_topk: int, labels) -> QueryScores:
    for t in (rows, prior_row):
        if t is not None and (torch.isnan(t).any() or torch.isposinf(t).any()):
            raise ScoreError("the model produced NaN/inf log-probabilities; refusing to store scores")
    out = scores_torch(rows)
    psi = out["persuasion"].cpu().numpy()
    ent = out["entropy"].cpu().numpy()
    res = QueryScores(persuasion=psi, entropy=ent,
                      susceptibility=float(out["susceptibility"]),
                      mixture_entropy=float(out["mixture_entropy"]),
                      mean_conditional_entropy=float(out["mean_conditional_entropy"]),
                      n_contexts=int(rows.shape[0]))
    _check_finite("persuasion", psi, ent, res.susceptibility, res.mixture_entropy,
                  res.mean_conditional_entropy)
    if prior_row is not None:
        res.prior_entropy = float(entropy_torch(prior_row))
        res.prior_kl = float(kl_torch(out["log_mixture"], prior_row))
        _check_finite("prior", res.prior_entropy, res.prior_kl)
        res.prior_topk = _topk(prior_row[None, :], topk, labels)[0]
    if prompt_topk:
        res.prompt_topk = _topk(rows, prompt_topk, labels)
    return res


def first_token(engine: Engine, contexts: Sequence[str], queries: Sequence[str], *,
                topk: int = 10, prompt_topk: int = 0, with_prior: bool = True,
                progress: Callable[[int], None] | None = None) -> list[QueryScores]:
    """Score every query against every context with the next-token distribution."""
    nc, nq = len(contexts), len(queries)
    texts = [c + q for q in queries for c in contexts]
    if with_prior:
        texts += list(queries)
    seqs = engine.encode(texts)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)]  # one context, every query
    if with_prior:
        groups.append([nq * nc + i for i in range(nq)])
    table, row_of = engine.last_logprobs(seqs, groups, progress=progress)
    tok = engine.lm.tokenizer
    cache: dict[int, str] = {}

    def label(t: int) -> str:
        if t not in cache:
            cache[t] = tok.decode([t])
        return cache[t]

    results = []
    for i in range(nq):
        rows = table[torch.tensor([row_of[i * nc + j] for j in range(nc)], device=table.device)]
        prior = table[row_of[nq * nc + i]] if with_prior else None
        results.append(_scores_from_rows(rows, prior, topk, prompt_topk, label))
    return results


def _continuation_ids(engine: Engine, prompt_ids: tuple[int, ...], prompt: str, answer: str) -> tuple[int, ...]:
    """Tokens of ``answer`` after ``prompt``: from the whole string when the prompt's tokens are a
    prefix of it (the usual case), else the answer tokenized on its own."""
    sep = "" if (not prompt or prompt[-1].isspace()) else " "
    full = engine.encode([prompt + sep + answer])[0]
    if len(full) > len(prompt_ids) and full[:len(prompt_ids)] == prompt_ids:
        return full[len(prompt_ids):]
    return tuple(engine.lm.tokenizer(sep + answer, add_special_tokens=False)["input_ids"])


def answer_set(engine: Engine, contexts: Sequence[str], queries: Sequence[str],
               candidates: Sequence[Sequence[str]], *, topk: int = 10, prompt_topk: int = 0,
               with_prior: bool = True, progress: Callable[[int], None] | None = None) -> list[QueryScores]:
    """Score every query against every context over a candidate answer set per query.

    ``candidates[i]``: the answer strings of query i (deduplicated, order kept). p(a | prompt) =
    exp(sum log p(tokens of a)) normalized over the set.
    """
    nc, nq = len(contexts), len(queries)
    texts, owner = [], []
    for i, q in enumerate(queries):
        for j, c in enumerate(contexts):
            texts.append(c + q)
            owner.append(i)
        if with_prior:
            texts.append(q)
            owner.append(i)
    seqs = engine.encode(texts)
    cands = [list(dict.fromkeys(c)) for c in candidates]
    conts = []
    for t, s, i in zip(texts, seqs, owner):
        conts.append([_continuation_ids(engine, s, t, a) for a in cands[i]])
    sums = engine.continuation_logprobs(seqs, conts, progress=progress)
    results = []
    k = 0
    for i in range(nq):
        per = nc + (1 if with_prior else 0)
        block = torch.tensor(sums[k:k + per], dtype=torch.float64)
        k += per
        logp = torch.log_softmax(block, dim=-1)
        rows, prior = logp[:nc], (logp[nc] if with_prior else None)
        names = cands[i]
        results.append(_scores_from_rows(rows, prior, topk, prompt_topk, lambda t, names=names: names[t]))
    return results


def closed_candidates() -> list[str]:
    return ["Yes", "No"]


def log_n(n: int) -> float:
    return math.log(n) if n > 0 else 0.0
