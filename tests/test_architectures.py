"""Shared-prefix KV reuse is exact for every model family in ``scoring.architectures.EXACT``,
the families where it is not are detected, and full prompts are exact for them.

Each family is a tiny random model built from a config (float32). Reference: each prompt run
alone, in full, without a cache. The contexts differ in token length, so prefixes of different
lengths are left-padded in one batch of the shared-prefix engine.
"""

from __future__ import annotations

import pytest
import torch
import transformers as T
from families_helpers import (
    ANSWERS,
    ATOL,
    CONTEXTS,
    FAMILIES,
    QUERIES,
    SLIDING,
    _common,
    build,
    naive_continuation,
    naive_last,
    prompts,
)

from ctxprior.scoring.architectures import EXACT, RECURRENT, prefix_reuse, sliding_window
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import answer_set, first_token
from ctxprior.scoring.hfcompat import cache_arg, output_cache
from ctxprior.scoring.models import LoadedModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def assert_first_token_equal(a, b):
    for x, y in zip(a, b):
        torch.testing.assert_close(
            torch.as_tensor(x.persuasion), torch.as_tensor(y.persuasion), atol=ATOL, rtol=0
        )
        assert x.susceptibility == pytest.approx(y.susceptibility, abs=ATOL)
        assert x.prior_entropy == pytest.approx(y.prior_entropy, abs=ATOL)


def shared_engine_matches_single(lm: LoadedModel) -> None:
    shared = Engine(lm, batch_size=32, share_prefix=True)
    single = Engine(lm, batch_size=1, share_prefix=False)
    seqs = single.encode(prompts())
    nc, nq = len(CONTEXTS), len(QUERIES)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    t1, r1 = single.last_logprobs(seqs)
    t2, r2 = shared.last_logprobs(seqs, groups)
    ref = naive_last(lm, seqs).float()
    torch.testing.assert_close(t1[r1], ref, atol=ATOL, rtol=0)
    torch.testing.assert_close(t2[r2], ref, atol=ATOL, rtol=0)
    assert shared.tokens_computed < single.tokens_computed  # the prefixes were shared
    assert_first_token_equal(
        first_token(Engine(lm, batch_size=32), CONTEXTS, QUERIES),
        first_token(Engine(lm, batch_size=1, share_prefix=False), CONTEXTS, QUERIES),
    )


def continuations_match_naive(lm: LoadedModel) -> None:
    """The answer-set path (prompt minus its last token as a KV prefix, multi-token suffixes)."""
    eng = Engine(lm, batch_size=32)
    seqs = eng.encode(CONTEXTS)
    conts = [[tuple(eng.encode([" " + a])[0]) for a in ANSWERS[0]] for _ in seqs]
    got = eng.continuation_logprobs(seqs, conts)
    for s, cs, g in zip(seqs, conts, got):
        for c, v in zip(cs, g):
            assert v == pytest.approx(naive_continuation(lm, s, c), abs=1e-4)
    assert len(answer_set(eng, CONTEXTS, QUERIES, ANSWERS)) == len(QUERIES)


# ---------------------------------------------------------------- every exact family


@pytest.mark.parametrize("name", list(FAMILIES))
def test_shared_prefix_equals_one_prompt_at_a_time(name):
    lm = build(name)
    longest = max(len(s) for s in Engine(lm).encode(prompts()))
    ok, why = prefix_reuse(lm.model.config, longest)
    assert ok, why
    assert "\n" not in why
    shared_engine_matches_single(lm)
    continuations_match_naive(lm)


def test_every_family_in_the_table_is_tested():
    tested = {build(name).model.config.model_type for name in FAMILIES}
    assert tested == set(EXACT)


def test_every_family_in_the_table_has_its_row_in_the_docs():
    """docs/architectures.md says why each ``EXACT`` family is exact: a row naming its model type
    and class (the third place a new family touches, docs/architecture.md "Where to add")."""
    from conftest import ROOT

    rows = [ln for ln in (ROOT / "docs" / "architectures.md").read_text().splitlines() if ln.startswith("| ")]
    for mtype, (_, cls) in EXACT.items():
        assert any(f"(`{mtype}`" in r or f", `{mtype}`" in r for r in rows if cls in r), mtype


def test_gpt_neox_is_partial_rotary_and_qwen2_has_biases():
    neox = build("gpt_neox").model.config
    rot = getattr(neox, "rotary_pct", None) or neox.rope_parameters["partial_rotary_factor"]
    assert rot < 1
    qwen = build("qwen2").model
    assert qwen.model.layers[0].self_attn.q_proj.bias is not None


# ---------------------------------------------------------------- sliding windows


@pytest.mark.parametrize("name", SLIDING)
def test_short_sliding_window_is_detected_and_full_prompts_are_exact(name):
    """A window (8 tokens) shorter than the prompts (16-57 tokens): prefix_reuse says no for a
    window-sized cache; full prompts equal the naive reference; and the engine, whose prefix
    caches keep every key with prefix and suffix contiguous, is exact with shared prefixes too.
    (The engine before the GPU rewrite raised a key/value shape mismatch here: the cache
    transformers builds for a sliding layer keeps only the last window - 1 keys.)"""
    lm = build(name, window=8)
    assert sliding_window(lm.model.config) == 8
    seqs = Engine(lm).encode(prompts())
    longest = max(len(s) for s in seqs)
    ok, why = prefix_reuse(lm.model.config, longest)
    assert not ok and "sliding-window layers (8 tokens)" in why and "\n" not in why
    assert prefix_reuse(lm.model.config, 8)[0]
    assert not prefix_reuse(lm.model.config)[0]  # unknown lengths: not trusted
    ref = naive_last(lm, seqs).float()
    for eng in (Engine(lm, batch_size=32, share_prefix=False), Engine(lm, batch_size=1, share_prefix=False)):
        table, rows = eng.last_logprobs(seqs)
        torch.testing.assert_close(table[rows], ref, atol=ATOL, rtol=0)
    nc, nq = len(CONTEXTS), len(QUERIES)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)]
    # the engine keeps every key of a prefix and keeps prefix and suffix contiguous: exact at any window
    assert prefix_reuse(lm.model.config, longest, full_prefix_cache=True)[0]
    eng = Engine(lm, batch_size=32, share_prefix=True)
    assert eng.share_prefix and eng.prefix_reuse == "shared"
    table, rows = eng.last_logprobs(seqs, groups)
    torch.testing.assert_close(table[rows], ref, atol=ATOL, rtol=0)
    assert eng.tokens_computed < sum(len(s) for s in set(seqs))


def test_a_family_not_verified_runs_full_prompts_and_says_so(capsys, db_path):
    """A model type outside the table: the engine runs full prompts (exact), prints one note, and
    every unit of a run records why in run_unit_engine.prefix_reuse."""
    lm = build("llama")
    lm.model.config.model_type = "mystery"
    seqs = Engine(lm).encode(prompts())
    capsys.readouterr()
    eng = Engine(lm, batch_size=8)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: mystery: prefix reuse not verified")
    assert not eng.share_prefix and eng.prefix_reuse.startswith("mystery: prefix reuse not verified")
    nc, nq = len(CONTEXTS), len(QUERIES)
    table, rows = eng.last_logprobs(seqs, [[i * nc + j for i in range(nq)] for j in range(nc)])
    torch.testing.assert_close(table[rows], naive_last(lm, seqs).float(), atol=ATOL, rtol=0)
    assert eng.tokens_computed == sum(len(s) for s in dict.fromkeys(seqs))

    from scoring_helpers import _demo

    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    sid = _demo(db_path)
    with open_store(db_path) as store:
        s = score_sample(store, ScoreRequest.of(sample=sid), lm=lm, progress=False, log=lambda m: None)
        reasons = {
            r[0] for r in store.query("SELECT prefix_reuse FROM run_unit_engine WHERE run_id = ?", [s.run_id])
        }
    assert len(reasons) == 1 and next(iter(reasons)).startswith("mystery: prefix reuse not verified")


def test_real_gemma3_window_is_exact_on_short_prompts():
    lm = build("gemma3_text", window=512)  # Gemma-3-270M's window
    assert prefix_reuse(lm.model.config, 512)[0]
    assert not prefix_reuse(lm.model.config, 513)[0]


@torch.inference_mode()
def left_padded_reuse(lm: LoadedModel, pairs, cache_factory) -> torch.Tensor:
    """The engine's trick written out with transformers alone: each prefix's cache from
    ``cache_factory()``, prefixes left-padded (masked) in one batch, suffixes (equal lengths) run
    on it with positions after each row's own prefix. Next-token log-probs [n, V] (float64)."""
    caches = [
        output_cache(
            lm.model(input_ids=torch.tensor([p]), use_cache=True, **cache_arg(lm.model, cache_factory()))
        )
        for p, _ in pairs
    ]
    lps = [len(p) for p, _ in pairs]
    maxlp, ls = max(lps), len(pairs[0][1])
    layers = []
    for li in range(len(caches[0].layers)):
        ks, vs = [], []
        for c, lp in zip(caches, lps):
            k, v = c.layers[li].keys, c.layers[li].values
            assert k.shape[-2] == lp, f"layer {li} kept {k.shape[-2]} of the prefix's {lp} keys"
            ks.append(torch.nn.functional.pad(k, (0, 0, maxlp - lp, 0)))
            vs.append(torch.nn.functional.pad(v, (0, 0, maxlp - lp, 0)))
        layers.append((torch.cat(ks), torch.cat(vs)))
    attn = torch.ones((len(pairs), maxlp + ls), dtype=torch.long)
    for j, lp in enumerate(lps):
        attn[j, : maxlp - lp] = 0
    pos = torch.tensor(lps).unsqueeze(1) + torch.arange(ls).unsqueeze(0)
    out = lm.model(
        input_ids=torch.tensor([s for _, s in pairs]),
        attention_mask=attn,
        position_ids=pos,
        use_cache=True,
        **cache_arg(lm.model, T.DynamicCache(layers)),
    )
    return torch.log_softmax(out.logits[:, -1].double(), -1)


@pytest.mark.parametrize("name", SLIDING)
def test_sliding_window_is_exact_when_the_prefix_cache_keeps_every_key(name):
    """An 8-token window, prefixes of 13-54 tokens. The cache transformers builds from the config
    keeps only the last window - 1 keys of a sliding layer (the root of today's crash); a
    config-less ``DynamicCache()`` keeps every key, the window is applied by the attention mask
    alone, and left-padded prefix reuse is exact: ``prefix_reuse(..., full_prefix_cache=True)``."""
    lm = build(name, window=8)
    assert prefix_reuse(lm.model.config, 10_000, full_prefix_cache=True)[0]
    seqs = Engine(lm).encode(prompts())
    pairs = [(s[:-3], s[-3:]) for s in seqs]
    with pytest.raises(AssertionError, match="kept 7 of"):
        left_padded_reuse(lm, pairs, lambda: None)  # the model's own (config-built) cache
    got = left_padded_reuse(lm, pairs, T.DynamicCache)
    torch.testing.assert_close(got.float(), naive_last(lm, seqs).float(), atol=ATOL, rtol=0)


# ---------------------------------------------------------------- not exact / not verified


def test_recurrent_chunked_and_unknown_types_run_full_prompts():
    assert "mamba" in RECURRENT
    cases = [(T.MambaConfig(), "recurrent"), (T.PretrainedConfig(), "not verified")]
    if hasattr(T, "Llama4TextConfig"):
        cases.append((T.Llama4TextConfig(num_hidden_layers=4), "chunked attention"))
    for cfg, word in cases:
        ok, why = prefix_reuse(cfg, 32)
        assert not ok and word in why and "\n" not in why and "full prompts" in why


def test_qwen2_sliding_window_only_when_enabled():
    off = T.Qwen2Config(**_common(), sliding_window=8, use_sliding_window=False)
    on = T.Qwen2Config(**_common(), sliding_window=8, use_sliding_window=True, max_window_layers=1)
    assert sliding_window(off) is None and prefix_reuse(off, 100)[0]
    assert sliding_window(on) == 8 and not prefix_reuse(on, 100)[0]


# ---------------------------------------------------------------- float16


def test_auto_dtype_picks_bfloat16_for_families_that_overflow_float16(tmp_path):
    from ctxprior.scoring.architectures import float16_safe
    from ctxprior.scoring.models import _auto_dtype

    for name in ("gemma3_text", "llama"):
        build(name).model.config.save_pretrained(tmp_path / name)
    assert not float16_safe(build("gemma3_text").model.config) and float16_safe(build("llama").model.config)
    assert _auto_dtype(str(tmp_path / "gemma3_text"), "auto", torch.float16) == torch.bfloat16
    assert _auto_dtype(str(tmp_path / "llama"), "auto", torch.float16) == torch.float16
    assert _auto_dtype(str(tmp_path / "gemma3_text"), "float16", torch.float16) == torch.float16  # asked for
    assert _auto_dtype(str(tmp_path / "gemma3_text"), "auto", torch.float32) == torch.float32  # CPU


@pytest.mark.parametrize("name", ["mpt", "mistral", "gpt_neo"])
def test_greedy_with_shared_prefixes_equals_generate(name):
    """Greedy generations (the memorization labels) on shared prefixes equal model.generate on
    each prompt alone, also for ALiBi by key index and an 8-token sliding window."""
    lm = build(name, window=8) if name in SLIDING else build(name)
    eng = Engine(lm, batch_size=4)
    seqs = eng.encode(prompts())
    nc, nq = len(CONTEXTS), len(QUERIES)
    got = eng.greedy(seqs[: nc * nq], 4, groups=[[i * nc + j for i in range(nq)] for j in range(nc)])
    tok = lm.tokenizer
    with torch.inference_mode():
        for s, g in zip(seqs[: nc * nq], got):
            out = lm.model.generate(
                input_ids=torch.tensor([s]),
                attention_mask=torch.ones(1, len(s), dtype=torch.long),
                max_new_tokens=4,
                do_sample=False,
                pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id,
            )
            assert g == tok.decode(out[0, len(s) :], skip_special_tokens=True)
