"""The engine against one prompt at a time (tiny random Llama and GPT-NeoX as Pythia), its
vectorized planning against a naive reference, and the out-of-memory split path."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_helpers import CONTEXTS, QUERIES, _demo, _rows, one_at_a_time, prompts, tiny, tiny_family

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import answer_set, first_token
from ctxprior.scoring.prefixes import Tokens, dedupe, group_prefixes

pytestmark = pytest.mark.usefixtures("one_torch_thread")


FAMILIES = ["gpt_neox", "llama"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("batch_size,share", [(64, True), (3, True), (1, True), (4, False)])
def test_batched_shared_prefix_equals_one_prompt_at_a_time(family, batch_size, share):
    lm = tiny_family(family)
    contexts, queries = prompts()
    eng = Engine(lm, batch_size=batch_size, share_prefix=share, token_budget=batch_size * 8)
    texts = [c + q for q in queries for c in contexts] + queries
    seqs = eng.encode(texts)
    nc, nq = len(contexts), len(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    table, row_of = eng.last_logprobs(seqs, groups)
    got = table[torch.tensor(row_of)].double().numpy()
    np.testing.assert_allclose(got, one_at_a_time(lm, seqs), atol=2e-5, rtol=0)
    if share:
        assert eng.tokens_computed < sum(len(s) for s in set(seqs))


@pytest.mark.quick
@pytest.mark.parametrize("family", FAMILIES)
def test_scores_batched_equal_scores_of_lone_prompts(family):
    """ψ and χ from the engine equal the metrics on one-prompt-at-a-time log-probs."""
    from ctxprior.scoring.metrics import scores_np

    lm = tiny_family(family)
    contexts, queries = prompts()
    res = first_token(Engine(lm, batch_size=16), contexts, queries, prior_topk=3, store_topk=2)
    eng = Engine(lm)
    for q, r in zip(queries, res):
        ref = scores_np(one_at_a_time(lm, eng.encode([c + q for c in contexts])))
        np.testing.assert_allclose(r.persuasion, ref.persuasion, atol=1e-5)
        assert r.susceptibility == pytest.approx(ref.susceptibility, abs=1e-5)
        assert len(r.prompt_topk) == len(contexts) and len(r.prior_topk) == 3


@pytest.mark.parametrize("family", FAMILIES)
def test_continuations_equal_teacher_forcing_one_at_a_time(family):
    lm = tiny_family(family)
    eng = Engine(lm, batch_size=5)
    prompts_ = eng.encode(
        [
            "The capital of France is Rome.\nQ: What is the capital of France?\nA:",
            "Q: What is the capital of Spain?\nA:",
            "A",
        ]
    )
    conts = [
        [tuple(eng.encode([" Paris"])[0]), tuple(eng.encode([" Par"])[0]), (5, 6, 7)],
        [(9,), (9, 10)],
        [(3, 4)],
    ]
    got = eng.continuation_logprobs(prompts_, conts)
    with torch.inference_mode():
        for p, cs, g in zip(prompts_, conts, got):
            for c, val in zip(cs, g):
                ids = torch.tensor([tuple(p) + tuple(c)])
                lp = torch.log_softmax(lm.model(input_ids=ids).logits[0].double(), -1)
                ref = sum(float(lp[len(p) - 1 + k, t]) for k, t in enumerate(c))
                assert val == pytest.approx(ref, abs=2e-5)


@pytest.mark.quick
@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_equals_generate_one_at_a_time(family):
    lm = tiny_family(family)
    contexts, queries = prompts()
    eng = Engine(lm, batch_size=4)
    seqs = eng.encode([c + q for q in queries[:3] for c in contexts[:4]])
    groups = [[i * 4 + j for i in range(3)] for j in range(4)]
    got = eng.greedy(seqs, 5, groups=groups)
    tok = lm.tokenizer
    for s, g in zip(seqs, got):
        out = lm.model.generate(
            input_ids=torch.tensor([s]),
            max_new_tokens=5,
            do_sample=False,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        )
        assert g == tok.decode(out[0, len(s) :], skip_special_tokens=True)


@pytest.mark.quick
@pytest.mark.parametrize("share", [True, False], ids=["prefix-block", "whole-prompts"])
@pytest.mark.parametrize("arch,seed", [("llama", 3), ("gpt_neox", 0)])  # seeds whose rows differ
def test_rows_that_stop_leave_the_batch_and_the_texts_stay_those_of_generate(arch, seed, share, monkeypatch):
    """A stop token the tiny model gives at different steps in different rows (its most frequent
    greedy token, made the generation config's EOS): the stopped rows leave the batch
    (``decode``'s ``drop``: the cache's ``batch_select_indices``), and every text equals Hugging
    Face's ``generate`` of its prompt alone."""
    from transformers import DynamicCache

    lm = tiny(arch, seed=seed)
    tok, model = lm.tokenizer, lm.model
    contexts, queries = prompts()
    texts = [c + q for q in queries for c in contexts]
    seqs = Engine(lm).encode(texts)
    with torch.inference_mode():
        free = [
            model.generate(
                input_ids=torch.tensor([s]),
                max_new_tokens=12,
                do_sample=False,
                eos_token_id=None,
                pad_token_id=tok.pad_token_id,
            )[0, len(s) :].tolist()
            for s in seqs
        ]
    firsts: dict[int, set[int]] = {}
    for row in free:
        for pos, t in enumerate(row):
            firsts.setdefault(t, set()).add(row.index(t))
    eos = max(firsts, key=lambda t: (len(firsts[t]), sum(t in r for r in free)))
    assert len(firsts[eos]) >= 2  # rows stop at different steps
    model.generation_config.eos_token_id = eos
    selected = []
    select = DynamicCache.batch_select_indices
    monkeypatch.setattr(
        DynamicCache,
        "batch_select_indices",
        lambda self, idx: (selected.append(len(idx)), select(self, idx))[1],
    )
    nc = len(contexts)
    groups = [[i * nc + j for i in range(len(queries))] for j in range(nc)]
    got = Engine(lm, batch_size=64, share_prefix=share).greedy(seqs, 12, groups)
    assert selected, "no row left the batch"
    with torch.inference_mode():
        for s, g in zip(seqs, got):
            out = model.generate(
                input_ids=torch.tensor([s]),
                max_new_tokens=12,
                do_sample=False,
                eos_token_id=eos,
                pad_token_id=tok.pad_token_id,
            )
            ref = out[0, len(s) :].tolist()
            ref = ref[: ref.index(eos)] if eos in ref else ref  # the text ends before its stop token
            assert g == tok.decode(ref, skip_special_tokens=True)


@pytest.mark.quick
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("batch_size", [64, 3])
def test_one_pass_equals_the_next_token_pass_and_greedy(family, batch_size):
    """``last_logprobs_and_greedy``: the table of ``last_logprobs`` and the texts of ``greedy``
    from one prefill per prompt -- the prompts with contexts generate, the no-context prompts
    (one of them equal to a context prompt, one repeated) only score."""
    lm = tiny_family(family)
    contexts, queries = prompts()
    eng = Engine(lm, batch_size=batch_size, token_budget=batch_size * 16)
    nc, nq = len(contexts), len(queries)
    texts = [c + q for q in queries for c in contexts]
    texts += [texts[0], *queries[1:], queries[1]]  # a prior equal to a context prompt, one twice
    seqs = eng.encode(texts)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [list(range(nq * nc, len(texts)))]
    table, row_of, gens = eng.last_logprobs_and_greedy(seqs, groups, nq * nc, 6)
    ref_table, ref_row = Engine(lm, batch_size=batch_size).last_logprobs(seqs, groups)
    np.testing.assert_allclose(
        table[torch.tensor(row_of)].numpy(), ref_table[torch.tensor(ref_row)].numpy(), atol=2e-5, rtol=0
    )
    assert gens == eng.greedy(seqs[: nq * nc], 6, groups[:nc])
    assert eng.forward_calls > 0 and len(gens) == nq * nc


@pytest.mark.quick
def test_answer_set_batched_equals_batch_of_one():
    lm = tiny_family("gpt_neox")
    cands = [["Paris", "Rome", "Madrid"], ["Madrid", "Paris"], ["Lima", "Paris"]]
    a = answer_set(Engine(lm, batch_size=16), CONTEXTS, QUERIES, cands, prior_topk=2)
    b = answer_set(Engine(lm, batch_size=1, share_prefix=False), CONTEXTS, QUERIES, cands, prior_topk=2)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.persuasion, y.persuasion, atol=1e-6)
        assert x.prior_topk[0][1] == y.prior_topk[0][1]


# ---------------------------------------------------------------- out of memory


class _OOMAbove:
    """Wraps the model body: a CUDA out-of-memory error for batches over ``limit`` rows."""

    def __init__(self, body, limit):
        self.body, self.limit, self.raised = body, limit, 0
        self.__signature__ = inspect.signature(type(body).forward)  # the body's argument names

    def __call__(self, input_ids, **kw):
        if input_ids.shape[0] > self.limit:
            self.raised += 1
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated)")
        return self.body(input_ids=input_ids, **kw)


@pytest.mark.parametrize("limit", [1, 3])
def test_oom_splits_the_batch_and_loses_no_row(limit):
    lm = tiny_family("llama")
    contexts, queries = prompts()
    texts = [c + q for q in queries for c in contexts] + queries
    ref_eng = Engine(lm, batch_size=64)
    seqs = ref_eng.encode(texts)
    nc, nq = len(contexts), len(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    ref, ref_rows = ref_eng.last_logprobs(seqs, groups)

    eng = Engine(lm, batch_size=64)
    eng.body = _OOMAbove(eng.body, limit)
    done = []
    table, rows = eng.last_logprobs(seqs, groups, progress=done.append)
    assert eng.body.raised > 0 and eng.oom_splits == eng.body.raised
    assert eng.batch_size <= limit * 2
    assert sum(done) == len(set(seqs))  # every distinct prompt exactly once
    torch.testing.assert_close(table[torch.tensor(rows)], ref[torch.tensor(ref_rows)], atol=1e-5, rtol=0)


def test_oom_on_a_single_row_is_raised():
    lm = tiny_family("llama")
    eng = Engine(lm, batch_size=8)
    eng.body = _OOMAbove(eng.body, 0)
    with pytest.raises(torch.cuda.OutOfMemoryError):
        eng.last_logprobs(eng.encode(["a b c", "a b d"]), [[0, 1]])


FEW = {"max_new_tokens": 2}  # the generation path too, but 2 steps (a tiny model never stops early)


def test_oom_fails_the_unit_and_records_the_splits(db_path):
    """In a run, the splits are recorded per unit; a unit whose single row does not fit fails
    cleanly (no rows) and the run says why."""
    from ctxprior.scoring.executors import LocalExecutor
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    lm = tiny_family("llama")
    sid = _demo(db_path)

    def factory(m, c, b):
        ex = LocalExecutor(m, c, batch_size=8)
        ex.engine.body = _OOMAbove(ex.engine.body, 2)
        return ex

    with open_store(db_path) as store:
        s = score_sample(
            store, ScoreRequest.of(sample=sid, **FEW), lm=lm, executor_factory=factory, progress=False
        )
        assert s.status == "done"
        splits = store.scalar("SELECT sum(oom_splits) FROM run_unit_engine WHERE run_id = ?", [s.run_id])
        assert splits > 0
        n_rows = store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [s.run_id])
        ref = score_sample(store, ScoreRequest.of(sample=sid, fresh=True, **FEW), lm=lm, progress=False)
        assert n_rows == store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [ref.run_id])
        assert store.scalar("SELECT sum(oom_splits) FROM run_unit_engine WHERE run_id = ?", [ref.run_id]) == 0

        def single_row_oom(m, c, b):
            ex = LocalExecutor(m, c, batch_size=8)
            ex.engine.body = _OOMAbove(ex.engine.body, 0)
            return ex

        bad = score_sample(
            store,
            ScoreRequest.of(sample=sid, fresh=True, **FEW),
            lm=lm,
            executor_factory=single_row_oom,
            progress=False,
            log=lambda m: None,
        )
        assert bad.status == "failed" and "out of memory" in bad.errors[0]
        assert store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [bad.run_id]) == 0


# ---------------------------------------------------------------- planning (vectorized vs naive)


def naive_groups(seqs, groups, min_prefix):
    """The old engine's per-prompt loop, on distinct sequences."""
    lp = [0] * len(seqs)
    seen = set()
    for g in groups:
        g = [i for i in dict.fromkeys(g) if i not in seen]
        seen.update(g)
        if len(g) < 2:
            continue
        first = seqs[g[0]]
        k_max = min(len(seqs[i]) for i in g) - 1
        for i in g[1:]:
            k = 0
            while k < k_max and seqs[i][k] == first[k]:
                k += 1
            k_max = k
        if k_max >= min_prefix:
            for i in g:
                lp[i] = k_max
    return lp


seq_st = st.lists(st.integers(1, 4), min_size=1, max_size=7).map(tuple)


@settings(max_examples=200, deadline=None)
@given(st.lists(seq_st, min_size=1, max_size=12), st.data())
def test_group_prefixes_matches_the_naive_loop(seqs, data):
    seqs = list(dict.fromkeys(seqs))
    n = len(seqs)
    perm = data.draw(st.permutations(range(n)))
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    groups = [list(perm[a:b]) for a, b in zip([0] + cuts, cuts + [n]) if b > a]
    lp, gid = group_prefixes(Tokens.pack(seqs), groups, 1)
    assert lp.tolist() == naive_groups(seqs, groups, 1)
    assert all((g >= 0) == (k > 0) for g, k in zip(gid.tolist(), lp.tolist()))


@settings(max_examples=200, deadline=None)
@given(st.lists(seq_st, min_size=1, max_size=20))
def test_dedupe_matches_a_dict(seqs):
    first, row_of = dedupe(Tokens.pack(seqs))
    uniq = list(dict.fromkeys(seqs))
    assert [seqs[i] for i in first.tolist()] == uniq
    assert [uniq[r] for r in row_of.tolist()] == seqs


# ---------------------------------------------------------------- commits overlap compute


def test_next_unit_computes_while_the_last_one_commits(db_path, monkeypatch):
    """The local executor computes unit k + 1 while the driver commits unit k; rows are the same
    as committed one after the other. (No outcome labels: units that generate may compute in
    packs, ``test_small_units_generate_in_packs``.)"""
    import threading
    import time

    from ctxprior.scoring import units
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs import score
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    lm = tiny_family("llama")
    sid = _demo(db_path)
    events = []
    real_write, real_units = score.write_unit, units.run_units_checked

    def slow_write(store, run_id, res):
        events.append(("commit start", res.spec.unit_id, time.perf_counter()))
        time.sleep(0.3)
        real_write(store, run_id, res)
        events.append(("commit end", res.spec.unit_id, time.perf_counter()))

    def traced_units(engine, inps, *a, **kw):
        events.append(
            ("compute start", inps[0].spec.unit_id, time.perf_counter(), threading.current_thread().name)
        )
        return real_units(engine, inps, *a, **kw)

    monkeypatch.setattr(score, "write_unit", slow_write)
    monkeypatch.setattr("ctxprior.scoring.executors.local.run_units_checked", traced_units)
    with open_store(db_path) as store:
        s = score_sample(
            store,
            ScoreRequest.of(sample=sid, shard_size=2, outcome_rule="none"),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "done" and s.units_total >= 3
        starts = {e[1]: e[2] for e in events if e[0] == "compute start"}
        commits = [(e[1], e[2]) for e in events if e[0] == "commit start"]
        ends = {e[1]: e[2] for e in events if e[0] == "commit end"}
        overlapped = [u for u, t in commits if u + 1 in starts and starts[u + 1] < ends[u]]
        assert len(overlapped) >= s.units_total - 2
        assert all(e[3] == "ctxprior-compute" for e in events if e[0] == "compute start")
        monkeypatch.undo()
        ref = score_sample(
            store,
            ScoreRequest.of(sample=sid, fresh=True, shard_size=2, outcome_rule="none"),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        a, b = _rows(store, s.run_id), _rows(store, ref.run_id)
        assert [r[:3] for r in a[0]] == [r[:3] for r in b[0]]
        np.testing.assert_allclose([r[3] for r in a[0]], [r[3] for r in b[0]], atol=1e-9)


def test_prefetched_prompts_are_the_ones_encoded_and_equal_a_direct_encode():
    """``prefetch`` tokenizes in the background with a copy of the tokenizer; ``encode`` of the same
    texts takes that result (other texts are tokenized directly, the prefetch kept)."""
    lm = tiny_family("llama")
    eng = Engine(lm, batch_size=8)
    contexts, queries = prompts()
    texts = [c + q for q in queries for c in contexts]
    direct = eng.encode(texts)
    eng.prefetch(texts)
    assert eng.encode(texts[:3]) == direct[:3] and len(eng._prefetched) == 1  # not consumed
    assert eng.encode(texts) == direct and not eng._prefetched


def test_the_local_executor_prefetches_the_next_unit(db_path, monkeypatch):
    """While unit k computes, unit k + 1's prompts are tokenizing: every unit after the first is
    encoded from a prefetch, and the scores equal those of a run without it. (No outcome labels:
    small units that generate compute in packs, and a pack prefetches the next pack's first.)"""
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    sid = _demo(db_path, entities=4, contexts=12)
    lm = tiny()
    taken = []
    real_encode = Engine.encode

    def encode(self, texts):
        taken.append(tuple(texts) in self._prefetched)
        return real_encode(self, texts)

    monkeypatch.setattr(Engine, "encode", encode)

    def run():
        with open_store(db_path) as store:
            s = score_sample(
                store,
                ScoreRequest.of(sample=sid, model="tiny", shard_size=1, outcome_rule="none"),
                lm=lm,
                progress=False,
                log=lambda m: None,
            )
            return s.units_total, _rows(store, s.run_id)

    units, rows = run()
    assert units >= 4 and not taken[0] and taken.count(True) == units - 1
    monkeypatch.setattr(Engine, "prefetch", lambda self, texts: None)
    assert run()[1] == rows


def test_small_units_generate_in_packs(db_path, monkeypatch):
    """Units of a few (fact, context) prompts (``units.packs``) decode their outcome generations
    together, in one greedy call per pack: the rows equal those of the same units computed one at
    a time, a unit's seconds and forward passes are its share of the pack, and a unit that fails
    in a pack fails alone (the pack's other units are computed again, one by one)."""
    from ctxprior.scoring import estimators, units
    from ctxprior.scoring.executors import local
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    sid = _demo(db_path, entities=2, contexts=6)
    lm = tiny()
    calls = []
    real_greedy = Engine.greedy

    def greedy(self, seqs, *a, **kw):
        calls.append(len(seqs))
        return real_greedy(self, seqs, *a, **kw)

    monkeypatch.setattr(Engine, "greedy", greedy)

    def run(store):
        s = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", shard_size=1, max_new_tokens=3, fresh=True),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        gens = store.query(
            "SELECT query_form_id, fact_id, context_id, text, label FROM generation WHERE run_id = ? "
            "ORDER BY 1, 2, 3",
            [s.run_id],
        )
        rel = store.query(
            "SELECT fact_id, context_id, outcome, choice, p_context_answer FROM reliance WHERE run_id = ? "
            "ORDER BY 1, 2",
            [s.run_id],
        )
        cost = store.query(
            "SELECT forward_calls FROM run_unit_engine WHERE run_id = ? ORDER BY unit_id", [s.run_id]
        )
        return s, (_rows(store, s.run_id), gens, rel), [c[0] for c in cost]

    with open_store(db_path) as store:
        packed, rows, cost = run(store)
        assert packed.status == "done" and packed.units_total >= 4
        assert calls == [6 * packed.units_total]  # 6 contexts x 1 fact per unit, one call
        assert all(c > 0 for c in cost)
        calls.clear()
        monkeypatch.setattr(local.LocalExecutor, "_packs", lambda self, inputs: ([i] for i in inputs))
        alone, rows_alone, _ = run(store)
        assert calls == [6] * alone.units_total
        assert rows == rows_alone
        monkeypatch.undo()
        monkeypatch.setattr(Engine, "greedy", greedy)

        real_tables = units._unit_tables
        bad = rows[1][0][:2]  # the first unit's (query form, fact)

        def fails_on_one(engine, inp, *a):
            if (inp.spec.query_form_id, inp.facts[0][0]) == bad:
                raise estimators.ScoreError("non-finite persuasion score (NaN/inf)")
            return real_tables(engine, inp, *a)

        monkeypatch.setattr(units, "_unit_tables", fails_on_one)
        calls.clear()
        s, (_, gens, _), _ = run(store)
        assert s.status == "failed" and s.units_failed == 1
        assert gens == [g for g in rows[1] if g[:2] != bad]
        assert calls[0] == 6 * s.units_total and len(calls) == 1 + s.units_total  # the pack, then alone
