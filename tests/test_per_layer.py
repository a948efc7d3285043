"""Per-layer scores (logit lens, ``--per-layer``): the last layer is today's χ exactly, every layer
equals a naive one-prompt-at-a-time logit lens, the tables and the view, the CLI and the API."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ctxprior.scoring.engine import Engine, final_norm
from ctxprior.scoring.estimators import first_token
from ctxprior.scoring.metrics import scores_np

from test_engine import prompts, tiny_family
from test_scoring import tiny

ARCHS = ["llama", "gpt_neox", "gpt2"]


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _lm(arch):
    return tiny("gpt2") if arch == "gpt2" else tiny_family(arch)


@torch.inference_mode()
def naive_lens(lm, texts) -> np.ndarray:
    """[layers + 1, prompts, V]: each prompt alone through the model's own forward; layer l < L is
    the final norm and output head applied to hidden_states[l] at the last position, layer L the
    model's logits."""
    norm, head = final_norm(lm.model), lm.model.get_output_embeddings()
    out = []
    for t in texts:
        ids = torch.tensor([lm.tokenizer(t)["input_ids"]])
        o = lm.model(input_ids=ids, output_hidden_states=True)
        layers = [head(norm(h[0, -1])) for h in o.hidden_states[:-1]] + [o.logits[0, -1]]
        out.append(torch.stack([torch.log_softmax(x.double(), -1) for x in layers]).numpy())
    return np.stack(out, axis=1)


@pytest.mark.parametrize("arch", ARCHS)
def test_last_layer_equals_the_final_scores_exactly(arch):
    lm = _lm(arch)
    contexts, queries = prompts()
    plain = first_token(Engine(lm, batch_size=5), contexts, queries, topk=3)
    layered = first_token(Engine(lm, batch_size=5), contexts, queries, topk=3, per_layer="psi")
    n_layers = lm.model.config.num_hidden_layers + 1
    for p, r in zip(plain, layered):
        assert r.by_layer["susceptibility"].shape == (n_layers,)
        assert r.by_layer["persuasion"].shape == (n_layers, len(contexts))
        assert r.by_layer["susceptibility"][-1] == p.susceptibility          # exactly, not approx
        assert r.by_layer["mixture_entropy"][-1] == p.mixture_entropy
        assert r.by_layer["mean_conditional_entropy"][-1] == p.mean_conditional_entropy
        np.testing.assert_array_equal(r.by_layer["persuasion"][-1], p.persuasion)
        assert r.susceptibility == p.susceptibility                          # the final scores unchanged
        np.testing.assert_array_equal(r.persuasion, p.persuasion)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("batch_size", [64, 3])
def test_every_layer_equals_a_naive_logit_lens(arch, batch_size):
    lm = _lm(arch)
    contexts, queries = prompts()
    res = first_token(Engine(lm, batch_size=batch_size), contexts, queries, topk=0, per_layer="psi")
    for q, r in zip(queries, res):
        ref = naive_lens(lm, [c + q for c in contexts])
        for layer in range(ref.shape[0]):
            s = scores_np(ref[layer])
            assert r.by_layer["susceptibility"][layer] == pytest.approx(s.susceptibility, rel=1e-3, abs=1e-8)
            np.testing.assert_allclose(r.by_layer["persuasion"][layer], s.persuasion, rtol=1e-3, atol=1e-8)
            assert r.by_layer["mixture_entropy"][layer] == pytest.approx(s.mixture_entropy, abs=1e-5)
    # the layers differ (the lens is not the output at every depth)
    assert len(set(res[0].by_layer["susceptibility"].tolist())) == len(res[0].by_layer["susceptibility"])


def test_chi_only_keeps_no_persuasion_by_layer():
    lm = tiny()
    contexts, queries = prompts()
    r = first_token(Engine(lm), contexts, queries, per_layer="chi")[0]
    assert set(r.by_layer) == {"susceptibility", "mixture_entropy", "mean_conditional_entropy"}
