"""Single-call flex attention (``scoring/flex.py``) equals the gather path and one prompt at a
time, for every family it is declared for, in float32 and float64 (flex_attention runs eagerly on
CPU); it copies no prefix cache and concatenates nothing per layer (the profiler's op list); the
families it is not exact for keep the gather path.

Tiny random models built from configs (``families_helpers.FAMILIES``). The prompts: contexts of
different token lengths (prefixes of different lengths in one batch), queries whose entities
differ in length (ragged suffixes), batch sizes 64 and 3 (a prefix with one row in a batch,
batches that cut a prefix's rows; 1 for one family), and prompts without a prefix. Eager
flex_attention costs ~20 ms a call on CPU, so the batch-of-one case runs for Llama only.
"""

from __future__ import annotations

import pytest
import torch
from families_helpers import CONTEXTS, FAMILIES, QUERIES, build, naive_last

from ctxprior.scoring import flex
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import first_token

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FLEX = [n for n in FAMILIES if build(n).model.config.model_type in flex.FAMILIES]
# the engine returns float32 log-probs: in float64 their rounding (~5e-7 at |log p| ~ 5) bounds the
# difference; the float64 hidden states are compared at 1e-10 (test_per_layer_states_...)
TOL = {torch.float32: 2e-5, torch.float64: 1e-6}


def _lm(name: str, dtype: torch.dtype, window: int | None = None):
    lm = build(name, window=window)
    lm.model.to(dtype)
    return lm


def _texts():
    texts = [c + q for q in QUERIES for c in CONTEXTS] + QUERIES + ["Lima", "Zorblax Quentaria?"]
    nc, nq = len(CONTEXTS), len(QUERIES)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    return texts, groups  # the last two texts are in no group: no prefix


def _table(eng: Engine, seqs, groups) -> torch.Tensor:
    t, r = eng.last_logprobs(seqs, groups)
    return t[torch.tensor(r)].double()


def test_the_declared_families_are_tested_and_the_others_are_not_flex():
    declared = {build(n).model.config.model_type for n in FLEX}
    assert declared == set(flex.FAMILIES)
    for name in ["gemma2", "bloom", "mpt", "falcon", "gpt_neo"]:
        eng = Engine(build(name), attention="flex")
        assert eng.attention == "gather", name
    # auto is the gather path until a GPU measures flex attention faster
    assert Engine(build("llama")).attention == "gather"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", FLEX)
def test_flex_equals_gather_and_one_prompt_at_a_time(name, dtype):
    lm = _lm(name, dtype)
    texts, groups = _texts()
    ref_eng = Engine(lm, batch_size=64, attention="gather")
    seqs = ref_eng.encode(texts)
    ref = _table(ref_eng, seqs, groups)
    alone = naive_last(lm, seqs)
    tol = TOL[dtype]
    for bs in (64, 3, 1) if name == "llama" else (64, 3):
        eng = Engine(lm, batch_size=bs, token_budget=bs * 16, attention="flex")
        assert eng.attention == "flex"
        got = _table(eng, seqs, groups)
        assert eng.flex_rows == len(set(seqs))  # every row, prefix or not, ran by flex attention
        torch.testing.assert_close(got, ref, atol=tol, rtol=0)
        torch.testing.assert_close(got, alone, atol=tol, rtol=0)


@pytest.mark.parametrize("name", ["llama", "gpt_neox", "gemma3_text", "gpt2"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_psi_chi_and_continuations_equal_the_gather_path(name, dtype):
    lm = _lm(name, dtype)
    a = first_token(Engine(lm, batch_size=5, attention="flex"), CONTEXTS, QUERIES, prior_topk=3)
    b = first_token(Engine(lm, batch_size=64, attention="gather"), CONTEXTS, QUERIES, prior_topk=3)
    tol = TOL[dtype]
    for x, y in zip(a, b):
        torch.testing.assert_close(
            torch.as_tensor(x.persuasion), torch.as_tensor(y.persuasion), atol=tol, rtol=0
        )
        assert x.susceptibility == pytest.approx(y.susceptibility, abs=tol)
        assert [t[0] for t in x.prior_topk] == [t[0] for t in y.prior_topk]
    eng = Engine(lm, batch_size=4, attention="flex")
    seqs = eng.encode(CONTEXTS)
    conts = [[tuple(eng.encode([" " + w])[0]) for w in ("Paris", "Rome", "Madrid Lima")] for _ in seqs]
    got = eng.continuation_logprobs(seqs, conts)
    ref = Engine(lm, batch_size=64, attention="gather").continuation_logprobs(seqs, conts)
    assert eng.flex_rows > 0
    for g, r in zip(got, ref):
        assert g == pytest.approx(r, abs=tol * 10)


def test_generation_by_a_flex_engine_keeps_the_gather_path():
    """Greedy generation grows its cache step by step, which flex's block room does not hold: a
    flex engine generates through the gather path (no row by flex) and gives the same tokens."""
    lm = _lm("llama", torch.float64)
    texts, groups = _texts()
    eng = Engine(lm, batch_size=8, attention="flex")
    seqs = eng.encode(texts)
    got = eng.greedy(seqs, max_new_tokens=3, groups=groups)
    assert eng.flex_rows == 0
    assert got == Engine(lm, batch_size=8, attention="gather").greedy(seqs, max_new_tokens=3, groups=groups)


@pytest.mark.parametrize("name", ["llama", "gpt_neox"])
def test_per_layer_states_equal_the_gather_path(name):
    lm = _lm(name, torch.float64)
    texts, groups = _texts()
    eng = Engine(lm, batch_size=3, attention="flex")
    seqs = eng.encode(texts)
    t1, r1, h1 = eng.last_logprobs_by_layer(seqs, groups)
    t2, r2, h2 = Engine(lm, batch_size=64, attention="gather").last_logprobs_by_layer(seqs, groups)
    torch.testing.assert_close(t1[r1], t2[r2], atol=1e-6, rtol=0)
    torch.testing.assert_close(h1[:, r1], h2[:, r2], atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", ["gemma3_text", "mistral"])
def test_a_window_shorter_than_the_rows_keeps_the_gather_path(name):
    lm = _lm(name, torch.float32, window=8)
    texts, groups = _texts()
    eng = Engine(lm, batch_size=8, attention="flex")
    seqs = eng.encode(texts)
    got = _table(eng, seqs, groups)
    assert eng.flex_rows == 0
    torch.testing.assert_close(got, naive_last(lm, seqs), atol=2e-5, rtol=0)


@pytest.mark.parametrize("name", ["llama", "gpt_neox", "gemma3_text"])
def test_rotary_without_concatenation_is_bit_identical(name):
    mods = flex._rope_modules(build(name).model)
    assert mods and all(flex._rope_ok(m.apply_rotary_pos_emb) for m in mods)


def test_an_engine_out_of_memory_in_flex_attention_halves_the_batch(monkeypatch):
    """Out of memory in a flex attention call: the engine halves its batch (``oom_splits``),
    stays on flex attention, and its table equals an undisturbed run's."""
    lm = _lm("llama", torch.float32)
    texts, groups = _texts()
    ref_eng = Engine(lm, batch_size=64, attention="flex")
    seqs = ref_eng.encode(texts)
    ref = _table(ref_eng, seqs, groups)
    attend, calls = flex._flex, []

    def once(*args):
        calls.append(1)
        if len(calls) == 3:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return attend(*args)

    monkeypatch.setattr(flex, "_flex", once)
    eng = Engine(lm, batch_size=64, attention="flex")
    got = _table(eng, seqs, groups)
    assert eng.oom_splits == 1 and eng.batch_size == 32 and eng.attention == "flex"
    assert eng.flex_rows >= len(set(seqs))
    torch.testing.assert_close(got, ref, atol=TOL[torch.float32], rtol=0)


def test_the_name_outside_an_engine_pass_is_plain_sdpa():
    """A forward pass of a model whose config names flex attention outside the engine (no
    batch active): transformers' SDPA with its mask, padding included."""
    lm = _lm("llama", torch.float64)
    ids = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    with torch.inference_mode():
        ref = lm.model(input_ids=ids, attention_mask=mask).logits
        flex.register()
        cfg = lm.model.config
        saved, cfg._attn_implementation = cfg._attn_implementation, flex.NAME
        try:
            got = lm.model(input_ids=ids, attention_mask=mask).logits
        finally:
            cfg._attn_implementation = saved
    torch.testing.assert_close(got[0], ref[0], atol=1e-10, rtol=0)
    torch.testing.assert_close(got[1, :2], ref[1, :2], atol=1e-10, rtol=0)


# ---------------------------------------------------------------- no copies, no concatenation


def _op_counts(name: str, times: int, attention: str) -> dict[str, int]:
    """Op counts of the suffix passes with the family's tiny config repeated ``times`` deep
    (Gemma 3's sliding + full pattern repeated whole: one rotary table per layer type)."""
    from torch.profiler import ProfilerActivity, profile

    make, cls = FAMILIES[name]
    cfg = make(None)
    types = list(getattr(cfg, "layer_types", None) or [])
    layers = (len(types) or 2) * times
    for key in ("num_hidden_layers", "n_layer"):
        if hasattr(cfg, key):
            setattr(cfg, key, layers)
    if types:
        cfg.layer_types = types * times
    torch.manual_seed(0)
    lm = build(name)
    lm = type(lm)(
        model=cls(cfg).eval(),
        tokenizer=lm.tokenizer,
        model_id=f"tiny-{name}-{layers}",
        revision=None,
        dtype="float32",
        device="cpu",
    )
    texts, groups = _texts()
    eng = Engine(lm, batch_size=64, attention=attention)
    seqs = eng.encode(texts)
    eng.last_logprobs(seqs, groups)  # warm: head check, registration, rotary probe
    each = eng._each_batch

    def marked(seqs_, groups_, run, **kw):  # the suffix passes only (the prefix pass is the model's own)
        def suffix(rows, s, e, block):
            with torch.profiler.record_function("ctxprior-suffix"):
                return run(rows, s, e, block)

        return each(seqs_, groups_, suffix, **kw)

    eng._each_batch = marked
    attend = flex._flex

    def named(*args):  # each flex attention call, as one profiler event
        with torch.profiler.record_function("ctxprior-flex-call"):
            return attend(*args)

    flex._flex = named
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            eng.last_logprobs(seqs, groups)
    finally:
        flex._flex = attend
    counts: dict[str, int] = {}
    events = prof.events()
    spans = [(e.time_range.start, e.time_range.end) for e in events if e.name == "ctxprior-suffix"]
    for e in events:
        if any(a <= e.time_range.start and e.time_range.end <= b for a, b in spans):
            counts[e.name] = counts.get(e.name, 0) + 1
    return counts


@pytest.mark.parametrize("name", ["llama", "gpt_neox", "gemma3_text", "gpt2"])
def test_no_prefix_copy_and_no_concatenation_per_layer(name):
    """Suffix passes profiled on models of one family with L and 2L layers: by flex attention the
    count of ``aten::index_select`` and of ``aten::cat`` does not grow with the layers (0 per
    layer; what remains is the embedding lookup and the rotary table, once per pass); the gather
    path's count does (the check can see them)."""
    c2, c4 = _op_counts(name, 1, "flex"), _op_counts(name, 2, "flex")
    for op in ("aten::index_select", "aten::cat"):
        assert c4.get(op, 0) - c2.get(op, 0) == 0, (op, c2.get(op, 0), c4.get(op, 0))
    assert c4["ctxprior-flex-call"] == 2 * c2["ctxprior-flex-call"] > 0  # one call per layer
    g2, g4 = _op_counts(name, 1, "gather"), _op_counts(name, 2, "gather")
    assert g4.get("aten::index_select", 0) > g2.get("aten::index_select", 0)
