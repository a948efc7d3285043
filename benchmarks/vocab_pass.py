"""The vocabulary pass before and after issue 41 (item 4): bytes moved per vocabulary entry per
prompt, peak temporary memory, same-run CPU time, and how far apart the two paths' values are.

From one batch of last-position logits ``[queries × (contexts + 1), vocab]`` (random, model dtype):

- **old**: the engine's float64 log-softmax rounded into the float32 table, the rows gathered into
  ``[queries, contexts, vocab]``, then per query ``metrics.scores_torch`` (float64 copy of the rows,
  probabilities kept) and the old ``reliance_torch`` (``OldReliance`` below, kept here as the
  float64 reference it was), prior entropy and KL;
- **new**: the float32 log-softmax into the table, then ``metrics.vocab_pass`` (float32 terms a
  chunk of the vocabulary at a time, float64 per-row sums, no gathered copy).

Bytes moved are counted, not timed: every tensor op's inputs and outputs (``ByteCount``, a torch
dispatch mode), divided by the prompts and the vocabulary; a cache would move fewer. The peak
is the largest sum of live tensors the ops allocated (``PeakBytes``).

    python benchmarks/vocab_pass.py [--queries 4] [--contexts 15] [--vocab 49152] [--dtype bfloat16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import functools
import time
import weakref

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ctxprior.scoring.metrics import LN2, scores_torch, vocab_pass

GATHERS = ("aten::index", "aten::gather", "aten::index_select")


def kl_torch(logp, logq):
    """KL(p ‖ q) over the last axis in float64 (the old path's prior KL; ``engine_v1`` uses it too)."""
    lp = logp.to(torch.float64)
    lq = logq.to(torch.float64)
    p = lp.exp()
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    return torch.where(p > 0, p * (lp - lq), zero).sum(-1).clamp_min(0.0)


def entropy_torch(logp):
    """H(p) over the last axis in float64 (the old path's prior entropy)."""
    lp = logp.to(torch.float64)
    p = lp.exp()
    zero = torch.zeros((), dtype=torch.float64, device=lp.device)
    return -torch.where(p > 0, p * lp, zero).sum(-1)


def _nbytes(ts) -> int:
    return sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor) and t.dim() > 0)


class ByteCount(TorchDispatchMode):
    """Bytes every tensor op reads (its distinct tensor inputs) and writes (its outputs); a view
    moves nothing, a gather reads what it writes (and its indices)."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.is_view:
            return out
        ins = {id(t): t for t in tree_flatten((args, kwargs or {}))[0] if isinstance(t, torch.Tensor)}
        outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and id(t) not in ins]
        if func.name() in GATHERS:
            idx = [t for t in ins.values() if not t.is_floating_point()]
            self.bytes += 2 * _nbytes(outs) + _nbytes(idx)
        else:
            self.bytes += _nbytes(ins.values()) + _nbytes(outs)
        return out


class PeakBytes(TorchDispatchMode):
    """The peak of the bytes held by the storages tensor ops allocate inside it (a CPU stand-in for
    ``torch.cuda.max_memory_allocated``; storages made before it or outside tensor ops, e.g. the
    model's weights, do not count). ``flex_attention`` (a higher-order operator) is run by its
    eager implementation with this mode on, so its score temporaries count too (and, while the
    mode is on, without its Dynamo wrapper, which cannot enter a dispatch mode)."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}
        self.now = self.peak = 0
        self._flex_debug: bool | None = None

    def __enter__(self):
        import torch.nn.attention.flex_attention as fa

        _see_inside_flex_attention()
        self._flex_debug, fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = (
            fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG,
            True,
        )
        return super().__enter__()

    def __exit__(self, *exc):
        import torch.nn.attention.flex_attention as fa

        fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = bool(self._flex_debug)
        return super().__exit__(*exc)

    def _free(self, key: int) -> None:
        self.now -= self.live.pop(key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        ins = {
            t.untyped_storage().data_ptr()
            for t in tree_flatten((args, kwargs or {}))[0]
            if isinstance(t, torch.Tensor)
        }
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            st = t.untyped_storage()
            key = st.data_ptr()
            if key and key not in self.live and key not in ins:
                self.live[key] = st.nbytes()
                self.now += st.nbytes()
                self.peak = max(self.peak, self.now)
                weakref.finalize(st, self._free, key)
        return out


@functools.cache
def _see_inside_flex_attention() -> None:
    """Register ``PeakBytes``'s rule for the flex_attention operator: its dense implementation,
    run with the mode on (each tensor op inside it counted)."""
    from torch._C import DispatchKey
    from torch._higher_order_ops.flex_attention import flex_attention as hop

    dense = hop.py_kernels[DispatchKey.CompositeExplicitAutograd]

    @hop.py_impl(PeakBytes)
    def _dense(mode, *args, **kwargs):
        with mode:
            return dense(*args, **kwargs)


def _old_reliance(lp, p, prior, context_answer, gold_answer, entropy):
    """The device reliance measures as they were before the vocabulary pass (float64 throughout)."""
    l0 = prior.to(torch.float64)
    p0 = l0.exp()
    h0 = entropy_torch(l0)
    m = (p + p0) * 0.5
    h_m = -torch.special.xlogy(m, m).sum(-1)
    top0 = l0.argmax()
    ctx = context_answer.clamp_min(0)
    nan = torch.full((), float("nan"), dtype=torch.float64)
    p_ctx = torch.where(context_answer >= 0, p.gather(1, ctx[:, None])[:, 0], nan)
    kth = torch.topk(lp, 10, dim=-1).values[..., -1]
    keep = lp >= torch.minimum(kth, lp.max(-1).values + float(np.log(0.01)))[..., None]
    keep0 = l0 >= torch.minimum(torch.topk(l0, 10).values[-1], l0.max() + float(np.log(0.01)))
    keep = keep | keep0[None, :]
    zero = torch.zeros((), dtype=torch.float64)
    z_c = torch.where(keep, p, zero).sum(-1)
    h_c = z_c.log() - torch.where(keep, torch.special.xlogy(p, p), zero).sum(-1) / z_c
    k = keep.to(torch.float64)
    z_0 = k @ p0
    h_00 = z_0.log() - (k @ torch.special.xlogy(p0, p0)) / z_0
    return {
        "shift": (-entropy - p @ l0.nan_to_num(neginf=0.0)).clamp_min(0.0),
        "jsd": (h_m - 0.5 * (entropy + h0)).clamp(0.0, LN2),
        "confidence_gain": h_00 - h_c,
        "confidence_gain_vocab": h0 - entropy,
        "p_context_answer": p_ctx,
        "p_prior_answer": p.index_select(1, top0.reshape(1))[:, 0],
        "answer_top": lp.argmax(-1),
    }


def old_path(logits, q: int, c: int, ctx, gold) -> dict:
    """Before: float64 log-softmax into a float32 table, gathered rows, float64 per query."""
    table = torch.log_softmax(logits.to(torch.float64), -1).to(torch.float32)
    idx = torch.arange(q * (c + 1))
    rows, prior = table[idx[: q * c]].view(q, c, -1), table[idx[q * c :]]
    parts: dict[str, list] = {}
    for i in range(q):
        out = scores_torch(rows[i], keep_probs=True)
        p = out.pop("probs")
        out.update(_old_reliance(rows[i].to(torch.float64), p, prior[i], ctx[i], gold[i], out["entropy"]))
        out["prior_entropy"] = entropy_torch(prior[i])
        out["prior_kl"] = kl_torch(out.pop("log_mixture"), prior[i])
        for k, v in out.items():
            parts.setdefault(k, []).append(v)
    return {k: torch.stack(v) for k, v in parts.items()}


def new_path(logits, q: int, c: int, ctx, gold) -> dict:
    """After: float32 log-softmax into the table, one vocabulary pass."""
    table = torch.log_softmax(logits, -1, dtype=torch.float32)
    rows = torch.arange(q * c).view(q, c)
    return vocab_pass(table, rows, torch.arange(q * c, q * (c + 1)), ctx, gold)


def measure(fn, *args) -> tuple[int, int, dict]:
    """(bytes moved, peak bytes allocated, the values) of one call."""
    with torch.inference_mode():
        with ByteCount() as count:
            fn(*args)
        with PeakBytes() as peak:
            out = fn(*args)
    return count.bytes, peak.peak, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=4)
    ap.add_argument("--contexts", type=int, default=15)
    ap.add_argument("--vocab", type=int, default=49152)  # SmolLM2's
    ap.add_argument("--dtype", default="bfloat16", help="the logits' dtype (the model's)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    q, c, v = args.queries, args.contexts, args.vocab
    g = torch.Generator().manual_seed(0)
    logits = (torch.randn((q * (c + 1), v), generator=g) * 3).to(getattr(torch, args.dtype))
    ctx = torch.randint(-1, v, (q, c), generator=g)
    gold = torch.randint(0, v, (q,), generator=g)
    prompts = q * (c + 1)
    print(f"{q} queries x ({c} contexts + no-context) = {prompts} prompts x vocab {v}, {args.dtype} logits")
    res = {}
    for name, fn in (("old", old_path), ("new", new_path)):
        moved, peak, out = measure(fn, logits, q, c, ctx, gold)
        res[name] = out
        print(
            f"{name}: {moved / (prompts * v):6.1f} B moved per vocabulary entry per prompt, peak {peak / 2**20:7.1f} MiB"
        )
    best = {"old": float("inf"), "new": float("inf")}
    with torch.inference_mode():
        for _ in range(args.repeats):
            for name, fn in (("old", old_path), ("new", new_path)):
                t0 = time.perf_counter()
                fn(logits, q, c, ctx, gold)
                best[name] = min(best[name], time.perf_counter() - t0)
    print(
        f"CPU time (best of {args.repeats}, same run): old {best['old'] * 1e3:.1f} ms, new {best['new'] * 1e3:.1f} ms, ratio old/new {best['old'] / best['new']:.2f}x"
    )
    diff = {
        k: float(np.nanmax(np.abs(res["new"][k].double().numpy() - res["old"][k].double().numpy())))
        for k in res["old"]
        if k != "answer_top"
    }
    print("max |new - old|: " + ", ".join(f"{k} {d:.1e}" for k, d in diff.items()))
    print(f"answer_top equal: {bool((res['new']['answer_top'] == res['old']['answer_top']).all())}")


if __name__ == "__main__":
    main()
