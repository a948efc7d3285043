"""The one text-generation path (scoring/generate.py): its stop rule, its token chooser and its
batching (a prompt decoded among others of other lengths gives what it gives alone)."""

from __future__ import annotations

import pytest
import torch
from chat_helpers import _tokenizer
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
