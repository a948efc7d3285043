"""The one text-generation path (scoring/generate.py): its stop rule, its token chooser and its
batching (a prompt decoded among others of other lengths gives what it gives alone)."""

from __future__ import annotations

import pytest
import torch
from chat_helpers import _tokenizer
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_helpers import prompts, tiny_family

from ctxprior.scoring.generate import Sampling, _filtered, choose, cut, end_of_turn_ids, generate, stop_ids

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_stop_rule_reads_the_end_of_turn_token_from_the_chat_template():
    tok = _tokenizer()
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    assert end_of_turn_ids(tok) == {im_end}
    assert stop_ids(tok) == {tok.eos_token_id, im_end}
    gemma = "{% for m in messages %}{{ '<start_of_turn>' + m['role'] + '\n' + m['content'] + '<|im_start|>\n' }}{% endfor %}"
    assert end_of_turn_ids(_tokenizer(gemma)) == {tok.convert_tokens_to_ids("<|im_start|>")}
    plain = (
        "{% for m in messages %}{{ m['content'] + '\n\n' }}{% endfor %}"  # plain text ends a turn: no token
    )
    assert end_of_turn_ids(_tokenizer(plain)) == frozenset()
    assert stop_ids(_tokenizer(None)) == {tok.eos_token_id}
    assert cut([5, 6, im_end, 7], stop_ids(tok)) == [5, 6]


def test_top_k_and_top_p_filter_as_transformers_warpers():
    from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper

    scores = torch.randn(4, 50, generator=torch.Generator().manual_seed(0))
    ref = TopPLogitsWarper(0.7)(None, TopKLogitsWarper(10)(None, scores.clone()))
    assert torch.equal(_filtered(scores, 10, 0.7), ref)
    assert torch.equal(_filtered(scores, 0, 1.0), scores)


def test_choose_is_seeded_and_greedy_rows_take_the_argmax():
    logits = torch.randn(6, 30, generator=torch.Generator().manual_seed(1))
    s = Sampling(temperature=1.5, seed=4)
    a, b = choose(logits, s, s.generator()), choose(logits, s, s.generator())
    assert torch.equal(a, b)
    rows = torch.arange(6) % 3 == 0
    g = choose(logits, s, s.generator(), rows)
    assert torch.equal(g[rows], logits.argmax(-1)[rows]) and torch.equal(g[~rows], a[~rows])
    assert torch.equal(choose(logits, Sampling()), logits.argmax(-1))


@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
def test_a_prompt_generates_the_same_tokens_alone_and_among_others(family):
    lm = tiny_family(family)
    contexts, queries = prompts()
    ids = [lm.tokenizer(t)["input_ids"] for t in (contexts[0] + queries[0], queries[1], contexts[1])]
    both = generate(lm, ids, 6, repeat=2)
    for p, one in enumerate(ids):
        alone = generate(lm, [one], 6)
        assert torch.equal(both.tokens[2 * p, : alone.tokens.shape[1]], alone.tokens[0])
        assert torch.equal(both.tokens[2 * p], both.tokens[2 * p + 1])  # greedy: both rows agree


@pytest.mark.quick
@given(
    st.lists(st.lists(st.integers(0, 5), min_size=6, max_size=6), min_size=1, max_size=12),
    st.integers(1, 6),
)
@settings(max_examples=60, deadline=None)
def test_decode_dropping_stopped_rows_gives_the_tokens_of_the_full_batch(rows, steps):
    """``decode``'s ``drop``: a step whose logits for row r at step t depend on nothing else (its
    planned token ``rows[r][t]``; 0 and 1 are stop ids) gives the same tokens [B, T] whether the
    stopped rows leave the batch or not, and ``drop`` only ever keeps rows still running."""
    from ctxprior.scoring.generate import decode

    def run(with_drop: bool) -> torch.Tensor:
        live = list(range(len(rows)))
        t = [0]

        def logits_of(idx: list[int]) -> torch.Tensor:
            out = torch.zeros((len(idx), 6))
            out[torch.arange(len(idx)), torch.tensor([rows[r][t[0]] for r in idx])] = 1.0
            return out

        def step(tokens: torch.Tensor) -> torch.Tensor:
            assert len(tokens) == len(live)
            t[0] += 1
            return logits_of(live)

        def drop(keep: torch.Tensor) -> None:
            live[:] = [r for r, k in zip(live, keep.tolist()) if k]

        return decode(
            step,
            logits_of(live),
            steps,
            lambda lg: lg.argmax(-1),
            stop=frozenset({0, 1}),
            pad_id=9,
            drop=drop if with_drop else None,
        )[0]

    assert torch.equal(run(True), run(False))
