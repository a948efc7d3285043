"""No fully masked attention row, by construction (issue 26).

Some CUDA attention kernels (cuDNN's SDPA backend, preferred on Hopper by recent torch builds)
return NaN for a query row that may attend to no key at all, and transformers 5 no longer
un-masks such rows; through the pad keys and values the NaN then reaches real rows. Here both
SDPA and the families' eager attention are replaced by versions that return NaN on every fully
masked row, and every engine path (prefix pass, suffix pass, greedy, per-layer, answer sets) must
give exactly what it gives without the emulation, finite, for GPT-NeoX and Llama in float32 and
bfloat16. The naive baseline of benchmarks/gpu.py is checked the same way.
"""

from __future__ import annotations

import copy
import functools
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from scoring_helpers import prompts, tiny_family

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import first_token
from ctxprior.scoring.models import LoadedModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _fully_masked(mask: torch.Tensor | None, q_len: int) -> torch.Tensor | None:
    """[B, 1|H, Q] True where a query row may attend to no key (bool mask: True = attend;
    float mask: additive, the dtype's minimum or -inf = masked)."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        dead = ~mask.any(-1)
    else:
        dead = (mask <= torch.finfo(mask.dtype).min / 2).all(-1)
    return dead[..., -q_len:]


def _nan_sdpa(real):
    @functools.wraps(real)
    def sdpa(query, key, value, attn_mask=None, *args, **kwargs):
        out = real(query, key, value, attn_mask, *args, **kwargs)  # [B, H, Q, D]
        dead = _fully_masked(attn_mask, query.shape[-2])
        if dead is not None and bool(dead.any()):
            out = out.masked_fill(dead[..., None].expand_as(out), float("nan"))
        return out

    return sdpa


def _nan_eager(real):
    @functools.wraps(real)
    def eager(module, query, key, value, attention_mask, *args, **kwargs):
        out, weights = real(module, query, key, value, attention_mask, *args, **kwargs)  # out [B, Q, H, D]
        dead = _fully_masked(attention_mask, query.shape[-2])
        if dead is not None and bool(dead.any()):
            rows = dead.any(1)[:, :, None, None].expand_as(out)  # [B, Q] over heads and dims
            out = out.masked_fill(rows, float("nan"))
        return out, weights

    return eager


def nan_on_masked_rows(monkeypatch) -> None:
    """From now on, SDPA and the GPT-NeoX / Llama eager attention return NaN on fully masked
    query rows."""
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.llama import modeling_llama

    monkeypatch.setattr(
        torch.nn.functional,
        "scaled_dot_product_attention",
        _nan_sdpa(torch.nn.functional.scaled_dot_product_attention),
    )
    for mod in (modeling_gpt_neox, modeling_llama):
        monkeypatch.setattr(mod, "eager_attention_forward", _nan_eager(mod.eager_attention_forward))


def test_the_emulation_bites():
    """The emulated kernel does put NaN on a left-padded row (what the engine used to run)."""
    q = k = v = torch.randn(1, 2, 4, 8)
    mask = torch.ones(4, 4, dtype=torch.bool).tril()[None, None].clone()
    mask[..., :2] = False  # left padding of 2: query rows 0 and 1 see no key
    out = _nan_sdpa(torch.nn.functional.scaled_dot_product_attention)(q, k, v, mask)
    assert torch.isnan(out[0, :, :2]).all() and torch.isfinite(out[0, :, 2:]).all()


def _model(family: str, dtype: torch.dtype, attn: str) -> LoadedModel:
    base = tiny_family(family)
    model = copy.deepcopy(base.model).to(dtype)
    model.config._attn_implementation = attn
    return LoadedModel(
        model=model,
        tokenizer=base.tokenizer,
        model_id=base.model_id,
        revision=None,
        dtype=str(dtype).replace("torch.", ""),
        device="cpu",
    )


@torch.inference_mode()
def _every_path(lm: LoadedModel) -> dict:
    """ψ, χ (first token, prefix + suffix passes), per-layer χ, greedy text and answer-set
    continuations of the same prompts."""
    contexts, queries = prompts()
    eng = Engine(lm, batch_size=4, token_budget=64)
    res = first_token(eng, contexts, queries, prior_topk=3, store_topk=0)
    seqs = eng.encode([c + q for q in queries for c in contexts])
    nc, nq = len(contexts), len(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)]
    _, _, hidden = eng.last_logprobs_by_layer(seqs, groups)
    conts = eng.continuation_logprobs(
        eng.encode(queries), [[tuple(eng.encode([" Paris", " Lima peru"])[i][1:]) for i in range(2)]] * nq
    )
    return {
        "psi": np.stack([r.persuasion for r in res]),
        "chi": np.array([r.susceptibility for r in res]),
        "layers": eng.lens(hidden).float().numpy(),
        "greedy": eng.greedy(seqs, max_new_tokens=3, groups=groups),
        "continuations": np.array(conts),
    }


@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_every_engine_path_is_unchanged_by_nan_on_masked_rows(family, dtype, attn, monkeypatch):
    lm = _model(family, dtype, attn)
    ref = _every_path(lm)
    nan_on_masked_rows(monkeypatch)
    got = _every_path(lm)
    for key in ("psi", "chi", "layers", "continuations"):
        assert np.isfinite(got[key]).all(), key
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    assert got["greedy"] == ref["greedy"]


def test_naive_baseline_is_finite_with_nan_on_masked_rows(monkeypatch):
    """benchmarks/gpu.py's naive scorer pads too: right padding, so no row is fully masked."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import gpu

    lm = _model("gpt_neox", torch.float32, "sdpa")
    contexts, queries, _, _ = gpu.unit(12, 3, lm.model.get_output_embeddings().weight.shape[0])
    ref = gpu.naive_rows(lm, contexts, queries[:1], batch_size=5)
    nan_on_masked_rows(monkeypatch)
    got = gpu.naive_rows(lm, contexts, queries[:1], batch_size=5)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_generation_path_is_unchanged_by_nan_on_masked_rows(family, attn, monkeypatch):
    """scoring.generate (DynamicQA answers, local fakes): prompts of different lengths, prefilled
    alone and decoded together from one left-padded cache, sampled and greedy rows."""
    from ctxprior.scoring.generate import Sampling, generate

    lm = _model(family, torch.float32, attn)
    contexts, queries = prompts()
    ids = [lm.tokenizer(t)["input_ids"] for t in (contexts[0] + queries[0], queries[1], contexts[1])]
    assert len({len(i) for i in ids}) == 3

    def run():
        g = generate(
            lm, ids, 5, Sampling(temperature=0.8, seed=3), repeat=3, greedy_first=True, keep_logits=True
        )
        return g.tokens, g.logits

    ref = run()
    nan_on_masked_rows(monkeypatch)
    got = run()
    assert torch.isfinite(got[1]).all()
    assert torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1])
