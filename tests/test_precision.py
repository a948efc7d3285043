"""The dtype `auto` picks: float16 on CUDA (chosen from the measured deviation of ψ and χ from
float32, docs/scoring.md#precision; it was bfloat16), float32 elsewhere; every run records it."""

from __future__ import annotations

import pytest
import torch

from ctxprior.errors import UserError
from ctxprior.scoring.models import default_dtype_name, resolve_dtype


@pytest.mark.parametrize(
    "device, expect", [("cuda", "float16"), ("cuda:1", "float16"), ("cpu", "float32"), ("mps", "float32")]
)
def test_auto_dtype(device, expect):
    assert default_dtype_name(device) == expect
    assert resolve_dtype("auto", device) is getattr(torch, expect)


def test_explicit_dtype_wins_and_bad_one_is_refused():
    assert resolve_dtype("bfloat16", "cuda") is torch.bfloat16
    assert resolve_dtype("float32", "cuda") is torch.float32
    with pytest.raises(UserError, match="--dtype half"):
        resolve_dtype("half", "cpu")
