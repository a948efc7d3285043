"""Sampled and greedy answers to a fact's prompts (on ``scoring.generate``, the one generation
path) and what is kept of each: answer text, log-prob sum, mean token distribution."""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any

from ..scoring.prompts import render_chat
from .config import RAW_SUFFIX


@dataclass
class Answer:
    text: str
    raw_text: str
    logprob_sum: float
    n_tokens: int
    logdist: Any  # torch [V] float64: log of the mean token distribution (over cp_tokens' steps)


def build_prompt(tokenizer, content: str, chat: bool) -> str:
    if chat:
        return render_chat(tokenizer, content)
    return content + RAW_SUFFIX


def _answer_len(tokenizer, tokens: list[int], stop_ids: Set[int]) -> tuple[int, int]:
    """(answer tokens m >= 1, generated tokens before end of sequence)."""
    text = ""
    end = len(tokens)
    m = None
    for t, tid in enumerate(tokens):
        if tid in stop_ids:
            end = t
            if m is None:
                m = t
            break
        piece = tokenizer.decode([tid])
        if m is None and "\n" in piece and text.strip():
            m = t
        text += piece
    if m is None:
        m = end
    return max(1, m), end


def generate(
    lm,
    prompts: Sequence[str],
    n: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    cp_tokens: str = "generated",
) -> tuple[list[list[Answer]], list[Answer]]:
    """For each prompt: n answers sampled at ``temperature`` (full vocabulary) and one greedy answer.

    Each prompt is encoded once (prefill), then its KV cache is repeated for its n + 1 rows
    (row 0 greedy): B = len(prompts) * (n + 1) rows decode together, one token per step.
    ``cp_tokens``: the steps each sample's mean token distribution averages, ``generated`` (every
    generated step, the end-of-sequence one included, as the released code) or ``answer`` (the
    answer tokens only).
    """
    from ..scoring.generate import Sampling
    from ..scoring.generate import generate as run

    ids = [lm.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    g = run(
        lm,
        ids,
        max_new_tokens,
        Sampling(temperature=temperature, seed=seed),
        repeat=n + 1,
        greedy_first=True,
        keep_logits=True,
    )
    return _answers(lm.tokenizer, g.tokens, g.logits, n + 1, len(prompts), g.stop, cp_tokens)


def _answers(
    tok, seqs, all_logits, r: int, n_prompts: int, stop_ids: Set[int], cp_tokens: str = "generated"
) -> tuple[list[list[Answer]], list[Answer]]:
    """Each row's answer: text, log-prob sum over its answer tokens and mean token distribution
    (float64, log space) over the steps ``cp_tokens`` names; rows grouped back per prompt
    (sampled) and the greedy row apart."""
    import torch

    sampled_out: list[list[Answer]] = [[] for _ in range(n_prompts)]
    greedy_out: list[Answer] = []
    for b in range(seqs.shape[0]):
        toks = seqs[b].tolist()
        m, end = _answer_len(tok, toks, stop_ids)
        m = min(m, len(toks))
        steps = m if cp_tokens == "answer" else min(end + 1, len(toks))  # generated: EOS step included
        logp = torch.log_softmax(
            all_logits[b, : max(m, steps)].double(), dim=-1
        )  # [max(m, steps), V] float64
        lp_sum = float(logp[:m].gather(1, seqs[b, :m, None].to(logp.device)).sum())
        logdist = torch.logsumexp(logp[:steps], dim=0) - math.log(steps)  # [V]
        a = Answer(
            tok.decode(toks[:m], skip_special_tokens=True).strip(),
            tok.decode(toks[:end], skip_special_tokens=True),
            lp_sum,
            m,
            logdist,
        )
        if b % r == 0:
            greedy_out.append(a)
        else:
            sampled_out[b // r].append(a)
    return sampled_out, greedy_out
