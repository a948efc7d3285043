"""Naive reference estimator (what the authors' code does), kept as a baseline and a cross-check.

Per entity: the prompts ``context + query`` for every context, in padded batches of 32 (left
padding with attention mask and position ids, so padding does not change results), logits for
EVERY position, the last position's logits moved to the host, full-vocabulary softmax in float64
numpy, then the numpy reference metrics. No prefix reuse, no dedupe, no length grouping.

    from naive_scoring import naive_first_token
    results = naive_first_token(lm.model, lm.tokenizer, contexts, queries)
"""

from __future__ import annotations

import numpy as np
import torch

from ctxprior.scoring.metrics import entropy_np, kl_np, scores_np


def _log_softmax_np(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    p = np.exp(x - m)
    return np.log(p / p.sum(axis=-1, keepdims=True))


@torch.no_grad()
def _last_logprobs(model, tokenizer, texts: list[str], batch_size: int = 32) -> np.ndarray:
    device = next(model.parameters()).device
    rows = []
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    for s in range(0, len(texts), batch_size):
        enc = [tokenizer(t)["input_ids"] for t in texts[s : s + batch_size]]
        n = max(len(e) for e in enc)
        ids = torch.tensor([[pad] * (n - len(e)) + e for e in enc], device=device)
        mask = torch.tensor([[0] * (n - len(e)) + [1] * len(e) for e in enc], device=device)
        pos = (mask.cumsum(-1) - 1).clamp_min(0)
        logits = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits  # every position
        last = logits[:, -1, :].float().cpu().numpy()
        rows.append(_log_softmax_np(last))
    return np.concatenate(rows)


def naive_first_token(
    model, tokenizer, contexts: list[str], queries: list[str], batch_size: int = 32, with_prior: bool = True
) -> list[dict]:
    """Per query: persuasion [n_contexts], susceptibility, entropies, prior entropy and KL."""
    out = []
    for q in queries:
        logp = _last_logprobs(model, tokenizer, [c + q for c in contexts], batch_size)
        s = scores_np(logp, keep_mixture=True)
        r = {
            "persuasion": s.persuasion,
            "entropy": s.entropy,
            "susceptibility": s.susceptibility,
            "mixture_entropy": s.mixture_entropy,
            "mean_conditional_entropy": s.mean_conditional_entropy,
        }
        if with_prior:
            prior = _last_logprobs(model, tokenizer, [q], 1)[0]
            r["prior_entropy"] = float(entropy_np(prior))
            r["prior_kl"] = float(kl_np(s.log_mixture, prior))
        out.append(r)
    return out


if __name__ == "__main__":  # tiny smoke run
    from ctxprior.scoring.models import load_model

    lm = load_model("smollm2-135m", device="cpu")
    res = naive_first_token(
        lm.model,
        lm.tokenizer,
        ["The capital of France is Rome.\n"],
        ["Q: What is the capital of France?\nA:"],
    )
    print(res[0]["susceptibility"], res[0]["persuasion"])
