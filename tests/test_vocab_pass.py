"""The one vocabulary pass (issue 41, item 4) against the float64 references, in float32 and from
half-precision logits, and ``sizing.row_bytes`` (item 6) against the peak of what a batch
allocates on CPU (``benchmarks/vocab_pass.py``'s ``PeakBytes``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import first_token, first_token_texts
from ctxprior.scoring.metrics import entropy_np, kl_np, reliance_np, scores_np, vocab_pass
from ctxprior.scoring.models import LoadedModel
from ctxprior.scoring.sizing import row_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from naive_scoring import _last_logprobs
from scoring_helpers import CONTEXTS, QUERIES, bpe_tokenizer, tiny
from vocab_pass import PeakBytes

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _reference(table: np.ndarray, rows: np.ndarray, prior: np.ndarray, ctx: np.ndarray, gold: np.ndarray):
    """Every key of ``vocab_pass`` per query, from the float64 references on the same table."""
    out = []
    for q in range(len(rows)):
        lp, l0 = table[rows[q]], table[prior[q]]
        s = scores_np(lp, keep_mixture=True)
        ref = reliance_np(lp, l0, ctx[q], int(gold[q]))
        ref |= {"persuasion": s.persuasion, "entropy": s.entropy, "susceptibility": s.susceptibility}
        ref |= {"mixture_entropy": s.mixture_entropy, "mean_conditional_entropy": s.mean_conditional_entropy}
        out.append(ref | {"prior_entropy": entropy_np(l0), "prior_kl": kl_np(s.log_mixture, l0)})
    return out


def _max_diff(got: dict, refs: list[dict]) -> dict[str, float]:
    return {
        k: max(
            float(np.nanmax(np.abs(got[k][q].double().numpy() - np.asarray(r[k], np.float64))))
            for q, r in enumerate(refs)
        )
        for k in refs[0]
    }


def test_the_engine_table_scores_as_the_float64_path_did():
    """A tiny model: every measure from the engine's float32 table (float32 log-softmax) and the
    float32 pass within 1e-6 of the float64 references on the float64 log-softmax of the same
    model's logits (the old path); the pass in float64 on a float64 table within 1e-12."""
    lm = tiny()
    eng = Engine(lm, batch_size=8)
    nc, nq = len(CONTEXTS), len(QUERIES)
    texts = first_token_texts(CONTEXTS, QUERIES)
    table, row_of = eng.last_logprobs(eng.encode(texts))
    idx = torch.tensor(row_of)
    rows, prior = idx[: nq * nc].view(nq, nc), idx[nq * nc :]
    ctx = torch.tensor([[5, 17, -1, 5, 40]] * nq)
    gold = torch.tensor([3, -1, 9])
    at = np.arange(len(texts))
    naive = _last_logprobs(lm.model, lm.tokenizer, texts)  # float64 log-softmax, per text
    refs = _reference(naive, at[: nq * nc].reshape(nq, nc), at[nq * nc :], ctx.numpy(), gold.numpy())
    diff = _max_diff(vocab_pass(table, rows, prior, ctx, gold), refs)
    assert max(diff.values()) < 1e-6, diff
    t64 = torch.from_numpy(naive)
    diff = _max_diff(
        vocab_pass(
            t64, torch.from_numpy(at[: nq * nc].reshape(nq, nc)), torch.from_numpy(at[nq * nc :]), ctx, gold
        ),
        refs,
    )
    assert max(diff.values()) < 1e-12, diff


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_logits_stay_far_inside_the_stated_bounds(dtype):
    """From float16 / bfloat16 logits (the CUDA dtypes) the float32 pass is within 1e-5 of the
    float64 log-softmax and references on the same logits: far inside the model-dtype bounds of
    docs/scaling.md's precision paragraph (float16 ψ 5.4e-3, χ 2.6e-4), which it leaves as they were."""
    g = torch.Generator().manual_seed(0)
    q, c, v = 2, 6, 3000
    logits = (torch.randn((q * (c + 1), v), generator=g) * 3).to(dtype)
    table = torch.log_softmax(logits, -1, dtype=torch.float32)
    rows, prior = torch.arange(q * c).view(q, c), torch.arange(q * c, q * (c + 1))
    ctx, gold = torch.randint(-1, v, (q, c), generator=g), torch.tensor([4, -1])
    ref_table = torch.log_softmax(logits.double(), -1).numpy()
    refs = _reference(ref_table, rows.numpy(), prior.numpy(), ctx.numpy(), gold.numpy())
    diff = _max_diff(vocab_pass(table, rows, prior, ctx, gold), refs)
    assert max(diff.values()) < 1e-5, diff


def test_first_token_scores_are_the_pass():
    """The estimator's scores are the pass's values (no other path computes them)."""
    lm = tiny()
    eng = Engine(lm, batch_size=8)
    res = first_token(eng, CONTEXTS, QUERIES)
    nc, nq = len(CONTEXTS), len(QUERIES)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    table, row_of = eng.last_logprobs(eng.encode(first_token_texts(CONTEXTS, QUERIES)), groups)
    idx = torch.tensor(row_of)
    out = vocab_pass(table, idx[: nq * nc].view(nq, nc), idx[nq * nc :])
    for i, r in enumerate(res):
        np.testing.assert_allclose(r.persuasion, out["persuasion"][i].numpy(), atol=1e-12)
        assert r.prior_kl == pytest.approx(float(out["prior_kl"][i]), abs=1e-12)


@pytest.mark.parametrize("path", ["gather", "flex", "generate", "one-pass"])
@pytest.mark.parametrize("share", [False, True], ids=["full", "shared"])
def test_row_bytes_is_the_peak_a_batch_allocates(share, path):
    """16 rows through a model whose vocabulary dominates (32,768 entries, hidden 64, as a real
    model's does: SmolLM2's 49,152 x 8 B against 8 tokens' activations of 0.2 MB): the peak of
    the tensors the call allocates, less what it returns (the table; generation's tokens), is
    16 x ``row_bytes`` within 20 %, scoring by the gather path and by flex attention (its eager
    CPU scores counted by ``PeakBytes``) and greedy generation of 8 tokens (the suffix's
    ``new_tokens`` plus the generated), also when the table comes from generation's own prefill
    (one-pass, ``last_logprobs_and_greedy``: as generation). Measured: gather 1.00 / 0.99, flex 0.99 / 1.01, generation
    1.00 / 1.01 (full / shared prefix). Where the vocabulary does not dominate (vocabulary 512-2,048,
    prefix 40-64, suffix 24-32), generation measured 0.63-0.91 (``row_bytes`` errs high) and flex
    5-8x on CPU: eager flex_attention materialises its scores, quadratic in the batch, which the
    compiled CUDA kernel does not (``row_bytes``'s docstring)."""
    tok = bpe_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=32768,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    lm = LoadedModel(LlamaForCausalLM(cfg).eval(), tok, "tiny-vocab", None, "float32", "cpu")
    g = torch.Generator().manual_seed(1)
    prefix, new = (20, 4) if share else (0, 12)
    head = torch.randint(1, 250, (prefix,), generator=g).tolist()
    seqs = [tuple(head + torch.randint(1, 250, (new,), generator=g).tolist()) for _ in range(16)]
    eng = Engine(
        lm, batch_size=16, share_prefix=share, attention=path if path in ("gather", "flex") else "gather"
    )
    gen = 8 if path in ("generate", "one-pass") else 0

    def call() -> torch.Tensor:
        if path == "one-pass":  # the table is kept, as last_logprobs's
            return eng.last_logprobs_and_greedy(seqs, [list(range(16))], 16, gen)[0]
        if gen:
            eng.greedy(seqs, max_new_tokens=gen, groups=[list(range(16))])
            return torch.empty(0)
        return eng.last_logprobs(seqs, [list(range(16))])[0]

    with torch.inference_mode():
        call()  # warm: the head check, the rotary probe
        with PeakBytes() as peak:
            kept = call()
    measured = peak.peak - kept.numel() * kept.element_size()
    if gen:
        assert eng.forward_calls >= 2 * 2  # the suffix pass and at least one step, twice
    attention = "gather" if path == "one-pass" else path
    expect = row_bytes(
        lm, context_tokens=prefix, new_tokens=new + gen, generate=bool(gen), attention=attention
    )
    assert measured == pytest.approx(16 * expect, rel=0.2)
    assert path != "flex" or eng.flex_rows == 2 * 16
