"""The engine's own output head holds in 16-bit (issue 26): its self-check compares like with like,
so a model in bfloat16 or float16 keeps the fast head path (and ``--per-layer``), and the run
records which path it took."""

from __future__ import annotations

import pytest
import torch

from ctxprior.scoring.engine import Engine, Head
from ctxprior.scoring.models import LoadedModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _wide(family: str, dtype: torch.dtype) -> LoadedModel:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    common = dict(vocab_size=8192, hidden_size=2048, intermediate_size=256, num_hidden_layers=1)
    if family == "gpt_neox":
        model = GPTNeoXForCausalLM(GPTNeoXConfig(num_attention_heads=16, rotary_pct=0.25, **common))
    else:
        model = LlamaForCausalLM(LlamaConfig(num_attention_heads=16, num_key_value_heads=4, **common))
    return LoadedModel(
        model=model.to(dtype).eval(),
        tokenizer=None,
        model_id=f"wide-{family}",
        revision=None,
        dtype=str(dtype).replace("torch.", ""),
        device="cpu",
    )


@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_head_check_holds_in_16_bit(family, dtype):
    lm = _wide(family, dtype)
    assert Head(lm.model).check(lm.model, "cpu") is True
    eng = Engine(lm, batch_size=4)
    assert eng.head_path == "engine"
    eng.lens_ready()  # --per-layer is allowed


def test_a_head_that_differs_is_caught():
    """A post-processing step the engine does not know (here a scale) fails the check, in 16-bit too."""
    lm = _wide("llama", torch.bfloat16)
    head = Head(lm.model)
    head.scale = 1.5
    assert head.check(lm.model, "cpu") is False
