"""Independent, literal ports of the sources' code for the reliance measures, written for the tests
(never imported by ctxprior): each reads a plain transformers forward pass, not ctxprior's engine.

- CK-PLUG (Bi et al. 2025), github.com/byronBBL/CK-PLUG (commit 4af30ea),
  ``transformers-4.49/src/transformers/generation/utils.py``: ``relative_top_filter`` (both
  distributions' log-softmax thresholds, max + log(relative_top) lowered to the
  ``min_tokens_to_keep``-th largest; a token is masked, on the raw logits, to ``filter_value``
  only where it is below both) and the lines of ``_ck_decoding`` after it: float32 logits of the
  last position, ``relative_top = 0.01``, ``min_tokens_to_keep = select_top`` (10 in every
  ``eval_*.py``), softmax, ``entropy = -sum(p * log(p + 1e-9))`` and ``IG = entropy_student -
  entropy`` (the student: the prompt without the context).
- DRUID / CUB (Hagström et al. 2025), github.com/copenlu/context-utilisation-for-RAG,
  ``src/get_model_predictions/get_model_predictions.py``: ``probs = softmax(logits of the first
  generated position)``, read at ``tok_id``, the first id of ``tokenizer.encode(tok)`` and, where a
  leading space adds no token, of ``" " + tok`` (``logit_ixs``); CUB's App. C eq. 1 on those
  probabilities (the paper's formula: the code that computes it is not in the repository).
"""

from __future__ import annotations

import numpy as np
import torch


def relative_top_filter(scores, scores_student, relative_top=0.1, filter_value=-1e10, min_tokens_to_keep=1):
    """CK-PLUG's ``relative_top_filter`` (a method there; ``self`` dropped), line by line."""
    scores_normalized = scores.log_softmax(dim=-1)
    scores_student_normalized = scores_student.log_softmax(dim=-1)
    sorted_logits, _ = torch.sort(scores_normalized, descending=True)
    sorted_logits_student, _ = torch.sort(scores_student_normalized, descending=True)
    min_thresh = sorted_logits[..., min_tokens_to_keep - 1]
    probs_max = torch.max(scores_normalized, dim=-1).values
    probs_thresh = probs_max + np.log(relative_top)
    probs_thresh = torch.min(min_thresh, probs_thresh)
    probs_thresh = probs_thresh.unsqueeze(-1)

    min_thresh_student = sorted_logits_student[..., min_tokens_to_keep - 1]
    probs_max_student = torch.max(scores_student_normalized, dim=-1).values
    probs_thresh_student = probs_max_student + np.log(relative_top)
    probs_thresh_student = torch.min(min_thresh_student, probs_thresh_student)
    probs_thresh_student = probs_thresh_student.unsqueeze(-1)

    mask = (scores_normalized < probs_thresh) & (scores_student_normalized < probs_thresh_student)
    scores[mask] = filter_value
    scores_student[mask] = filter_value
    return scores, scores_student, mask


def ckplug_confidence_gain(logits_context: torch.Tensor, logits_no_context: torch.Tensor, select_top=10):
    """IG of ``_ck_decoding`` at the first generated position, from the two prompts' last logits."""
    next_token_logits = logits_context[None].clone().float()
    next_token_logits_student = logits_no_context[None].clone().float()
    next_token_logits, next_token_logits_student, _ = relative_top_filter(
        next_token_logits, next_token_logits_student, relative_top=0.01, min_tokens_to_keep=select_top
    )
    probs = torch.nn.functional.softmax(next_token_logits, dim=-1)
    probs_student = torch.nn.functional.softmax(next_token_logits_student, dim=-1)
    entropy = -torch.sum(probs * torch.log(probs + 1e-9), dim=-1).item()
    entropy_student = -torch.sum(probs_student * torch.log(probs_student + 1e-9), dim=-1).item()
    return entropy_student - entropy


def druid_logit_ixs(tokenizer, tokens) -> dict[str, int]:
    """``logit_ixs`` of get_model_predictions.py: each answer's first id, and its spaced form's."""
    logit_ixs = {}
    for tok in tokens:
        tok_ix = tokenizer.encode(tok, add_special_tokens=False)
        logit_ixs[tok] = tok_ix[0]
        tok_w_space_ix = tokenizer.encode(" " + tok, add_special_tokens=False)
        if len(tok_w_space_ix) == len(tok_ix):
            logit_ixs[" " + tok] = tok_w_space_ix[0]
    return logit_ixs


def druid_probs(logits: torch.Tensor) -> torch.Tensor:
    """``softmax(out[0]["logits"][0][0], dim=0)``: the first generated position's distribution."""
    return torch.nn.functional.softmax(logits, dim=0)


def cub_eq1(p_with: float, p_without: float) -> float:
    """CUB App. C, eq. 1: the scaled difference of one token's probability with and without context."""
    if p_with >= p_without:
        return 0.0 if p_without == 1 else (p_with - p_without) / (1 - p_without)
    return (p_with - p_without) / p_without


def last_logits(lm, prompt: str) -> torch.Tensor:
    """The logits after ``prompt`` by one plain forward pass of the model (no cache, no batching)."""
    ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        return lm.model(torch.tensor([ids], device=lm.model.device)).logits[0, -1].float().cpu()


def port_row(lm, prompt_context: str, prompt_none: str, answer: str | None, relevant: bool) -> dict:
    """Every ported measure of one (context, query) row: CK-PLUG's IG, and CUB's CCU with the DRUID
    code's probabilities of the context's answer (relevant) or the model's no-context argmax
    (irrelevant); ``answer`` None: the context supports none."""
    lc, l0 = last_logits(lm, prompt_context), last_logits(lm, prompt_none)
    pc, p0 = druid_probs(lc), druid_probs(l0)
    out = {"confidence_gain": ckplug_confidence_gain(lc, l0)}
    top0 = int(torch.argmax(p0))
    out["scaled_difference_memory"] = cub_eq1(float(pc[top0]), float(p0[top0]))
    if answer is not None:
        # the spaced form's first id (logit_ixs[" " + tok]): the prompts end before the answer's space
        tok_id = lm.tokenizer.encode(" " + answer, add_special_tokens=False)[0]
        out["scaled_difference"] = cub_eq1(float(pc[tok_id]), float(p0[tok_id]))
    out["ccu"] = out.get("scaled_difference") if relevant else out["scaled_difference_memory"]
    return out
