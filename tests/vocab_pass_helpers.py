"""``metrics.vocab_pass`` for one query, as the tests call the reference functions."""

from __future__ import annotations

import numpy as np
import torch

from ctxprior.scoring.metrics import vocab_pass


def one_query(lp, l0, ctx, gold: int = -1, dtype=torch.float64, chunk: int | None = None) -> dict:
    """``vocab_pass`` of one query from its rows ``lp [C, V]``, no-context row ``l0 [V]`` (None:
    ψ and χ only), context answers ``ctx [C]`` and gold answer: {key: numpy value of the query}."""
    lp = torch.as_tensor(np.asarray(lp)).to(dtype)
    c = lp.shape[0]
    table = lp if l0 is None else torch.cat([lp, torch.as_tensor(np.asarray(l0)).to(dtype)[None]])
    prior = None if l0 is None else torch.tensor([c])
    ctx_t = None if ctx is None else torch.as_tensor(np.asarray(ctx, np.int64))[None]
    kw = {} if chunk is None else {"chunk": chunk}
    out = vocab_pass(table, torch.arange(c)[None], prior, ctx_t, torch.tensor([gold]), **kw)
    return {k: v[0].numpy() for k, v in out.items()}
