"""Cascade attention: suffix queries attend to their prefix's keys and values in place.

The engine keeps every prefix's key/value cache once, in a left-padded block per layer
``[P, kv_heads, W, head_dim]`` (``engine.Block``). The gather path copies one block row per batch
row in every layer (``index_select``) and attends through SDPA with a materialised 4-D mask. This
path copies no prefix and builds no mask. A batch's rows (sorted by suffix length, then by
prefix) use the prefixes ``p_lo .. p_hi``, a contiguous SLICE of the block (a view). Per layer
the attention is split in two exact parts:

1. **prefix part**: the batch's queries are laid out per prefix, ``[G, kv_heads, n_rep * J * Ls,
   head_dim]`` (G = p_hi - p_lo + 1 prefixes, J = the most rows one prefix has in the batch;
   grouped-query heads are stacked on the query axis, so no key is repeated), and attend to the
   block slice with no causal mask (every suffix token sees its whole prefix) and only the
   prefixes' left padding masked (a ``[G, 1, 1, W]`` bias);
2. **suffix part**: each row's queries attend causally to the row's own keys (right padding
   needs no mask: a real position never sees a later one);

and the two partial softmaxes are merged exactly with their log-sum-exps:
``o = o_suf + (o_pre - o_suf) * sigmoid(lse_pre - lse_suf)``. A row without a prefix runs the
suffix part only. On CPU both parts run in ATen's flash kernel for CPU (it returns the
log-sum-exp); on CUDA in the memory-efficient kernel when it takes the shapes, else in a float32
matmul-softmax (either is exact; which one ran is counted in ``KERNELS``).

It hooks into transformers through its ``AttentionInterface`` (the name ``ctxprior_cascade``,
set on the model's config only for the engine's suffix passes, ``active``) and a cache layer
(``CascadeLayer``) whose ``update`` returns the suffix's own keys and values unchanged (no copy,
no concatenation) and holds the prefix view. With it active, rotary embeddings of the families
whose ``apply_rotary_pos_emb`` we reproduce bit for bit (checked on a probe, ``_rope_for``) are
applied without ``torch.cat`` (halves written into one output).

Exact (equal to the gather path to float rounding, tests/test_cascade.py) for the families in
``FAMILIES`` whose layers attend with a plain causal softmax; not used (the gather path runs) for
ALiBi (BLOOM, MPT, Falcon), attention-logit soft-capping (Gemma 2), GPT-Neo's local layers, and
sliding windows shorter than a batch's prefix + suffix (checked per chunk), nor for generation
(``greedy``), which keeps the gather path's growing cache.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers.cache_utils import DynamicLayer

from .architectures import sliding_window, text_config

NAME = "ctxprior_cascade"

# model types whose attention goes through transformers' AttentionInterface as a plain causal
# softmax over (prefix, suffix): cascade attention verified exact (tests/test_cascade.py)
FAMILIES: frozenset[str] = frozenset(
    {
        "llama",
        "mistral",
        "qwen2",
        "qwen3",
        "gemma",
        "gemma3_text",
        "gpt_neox",
        "gpt2",
        "phi3",
        "olmo",
        "olmo2",
        "olmo3",
        "granite",
        "smollm3",
        "starcoder2",
        "stablelm",
        "phi",
        "cohere",
        "cohere2",
        "opt",
    }
)

KERNELS: Counter = (
    Counter()
)  # which attention kernel ran (``cpu-flash``, ``cuda-efficient``, ``math``), eager only


def _count(kernel: str) -> None:
    if not torch.compiler.is_compiling():  # a counter in a compiled graph would be a guard
        KERNELS[kernel] += 1


_LOCAL = threading.local()


def supported(config: Any) -> tuple[bool, str]:
    """Whether cascade attention is exact for this model (before any per-call window check)."""
    cfg = text_config(config)
    mtype = getattr(config, "model_type", None) or "unknown"
    if mtype not in FAMILIES:
        return False, f"{mtype}: cascade attention not verified for this family; gather path"
    if getattr(cfg, "attn_logit_softcapping", None):
        return False, f"{mtype}: attention-logit soft-capping; gather path"
    if getattr(cfg, "alibi", False) or getattr(cfg, "position_embedding_type", "") == "alibi":
        return False, f"{mtype}: ALiBi; gather path"
    return True, f"{mtype}: cascade attention (prefix stored once, no mask)"


def window_fits(config: Any, longest: int) -> bool:
    """Whether every sliding window (if any) covers a row of ``longest`` tokens (prefix + suffix),
    so that a window never cuts a key and the plain causal softmax is exact."""
    w = sliding_window(config)
    return w is None or longest <= w


# ------------------------------------------------------------------ a batch's state


@dataclass
class Batch:
    """What the attention of one batch needs beyond its own queries and keys."""

    layers: list[tuple[torch.Tensor, torch.Tensor]] | None  # per layer (K, V) [G, kv_heads, W, d] views
    bias: torch.Tensor | None  # [G, 1, 1, W] 0 / -inf: the prefixes' left padding
    g: torch.Tensor | None  # [B] the row's prefix in the slice
    j: torch.Tensor | None  # [B] the row's slot among its prefix's rows
    groups: int
    slots: int  # J
    identity: bool  # rows are the slice's prefixes in order, one each: no query layout
    longest: int  # prefix + suffix width of the batch (sliding-window guard)

    @classmethod
    def build(cls, block, pidx: np.ndarray, ls_w: int, to_device, dtype):
        """``block``: the chunk's ``engine.Block`` (None: rows without a prefix); ``pidx`` the batch
        rows' prefixes in it (host); ``to_device`` the engine's one-transfer copy."""
        if block is None:
            return cls(None, None, None, None, 0, 0, True, ls_w)
        lo, hi = int(pidx.min()), int(pidx.max()) + 1
        g = pidx - lo
        order = np.argsort(g, kind="stable")
        first = np.searchsorted(g[order], g[order], side="left")
        j = np.empty_like(g)
        j[order] = np.arange(len(g)) - first
        slots = int(j.max()) + 1
        identity = slots == 1 and hi - lo == len(g) and bool((g == np.arange(len(g))).all())
        width, plen = block.width, block.lengths
        assert plen is not None, "a cascade block knows its prefixes' lengths"
        layers = [(k[lo:hi, :, :width], v[lo:hi, :, :width]) for k, v in block.layers]
        cols = torch.arange(width, device=plen.device)
        keep = cols[None, :] >= width - plen[lo:hi, None]
        bias = torch.zeros(keep.shape, dtype=dtype, device=keep.device).masked_fill_(~keep, float("-inf"))
        gd, jd = (None, None) if identity else to_device(g, j)
        return cls(layers, bias[:, None, None, :], gd, jd, hi - lo, slots, identity, width + ls_w)


class CascadeLayer(DynamicLayer):
    """One layer of a cascade batch's cache: ``update`` returns the suffix's own keys and values
    unchanged (nothing copied or concatenated); ``prefix`` is the block slice they attend to."""

    def __init__(self, prefix: tuple[torch.Tensor, torch.Tensor] | None, width: int):
        super().__init__()
        self.prefix, self.width, self.seen = prefix, width, 0
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        self.seen = key_states.shape[-2]
        return key_states, value_states

    def get_seq_length(self, *args) -> int:
        return self.width + self.seen

    def get_mask_sizes(self, *args, **kwargs) -> tuple[int, int]:
        q = args[0] if args and isinstance(args[0], int) else 0
        return self.width + q, 0


def make_cache(batch: Batch, n_layers: int, width: int):
    """A ``DynamicCache`` of ``CascadeLayer``s for one batch."""
    from transformers import DynamicCache

    cache = DynamicCache()
    if batch.layers is None:
        cache.layers = [CascadeLayer(None, width) for _ in range(n_layers)]
    else:
        cache.layers = [CascadeLayer(p, width) for p in batch.layers]
    return cache


# ------------------------------------------------------------------ attention


# out of memory: the engine halves its batch and retries (Engine._split); never a kernel's refusal
OOM = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)


def _attend(q, k, v, bias, causal: bool, scale: float):
    """(output [B, H, Lq, d], log-sum-exp [B, H, Lq] float32/float64) of softmax attention."""
    if q.device.type == "cpu":
        _count("cpu-flash")
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, causal, attn_mask=bias, scale=scale
        )
    if q.device.type == "cuda":
        return _fast_or_math(q, k, v, bias, causal, scale)
    return _math(q, k, v, bias, causal, scale)


def _fast_or_math(q, k, v, bias, causal: bool, scale: float):
    """The memory-efficient kernel where it was checked to take these dtypes on this device, else
    the float32 math path. A kernel that refuses shapes (``RuntimeError``) is not used again on
    that dtype and device; out of memory is raised as it is (the engine's batch halves, the kernel
    stays: the math path would need more memory, not less)."""
    key = (q.dtype, str(q.device))
    if _efficient_ok(*key):
        try:
            return _efficient(q, k, v, bias, causal, scale)
        except OOM:
            raise
        except RuntimeError:
            _efficient_ok.cache_clear()
            _BROKEN.add(key)
    return _math(q, k, v, bias, causal, scale)


_BROKEN: set = set()  # (dtype, device) where the memory-efficient kernel refused shapes


def _efficient(q, k, v, bias, causal: bool, scale: float):
    b = None if bias is None else bias.expand(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    o, lse, _, _ = torch.ops.aten._scaled_dot_product_efficient_attention(
        q, k, v, b, True, 0.0, causal, scale=scale
    )
    _count("cuda-efficient")
    return o, lse[..., : q.shape[2]]


@functools.cache
def _efficient_ok(dtype: torch.dtype, device: str) -> bool:
    """Whether the memory-efficient kernel gives the math version's output and log-sum-exp on a
    probe (a left-padding bias; causal): checked once per dtype and device, like ``Head.check``."""
    if (dtype, device) in _BROKEN:
        return False
    g = torch.Generator(device=device).manual_seed(0)
    q = torch.randn(3, 2, 40, 64, generator=g, device=device).to(dtype)
    k = torch.randn(3, 2, 48, 64, generator=g, device=device).to(dtype)
    v = torch.randn(3, 2, 48, 64, generator=g, device=device).to(dtype)
    keep = torch.arange(48, device=device)[None, :] >= torch.tensor([[0], [5], [47]], device=device)
    bias = torch.zeros(keep.shape, dtype=dtype, device=device).masked_fill_(~keep, float("-inf"))[
        :, None, None
    ]
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    try:
        probes = [(q, k, v, bias, False), (q, k[:, :, :40], v[:, :, :40], None, True)]
        for pq, pk, pv, pb, causal in probes:
            o1, l1 = _efficient(pq, pk, pv, pb, causal, 0.125)
            o2, l2 = _math(pq, pk, pv, pb, causal, 0.125)
            same = torch.allclose(o1.float(), o2.float(), atol=tol) and torch.allclose(
                l1.float(), l2.float(), atol=tol
            )
            if not same:
                return False
    except OOM:
        raise  # not the kernel's answer: asked again once memory is free (no cache of a failure)
    except RuntimeError:
        return False
    return True


def _math(q, k, v, bias, causal: bool, scale: float):
    """Softmax attention by matmuls, in float32 (float64 for float64 inputs)."""
    _count("math")
    acc = torch.float64 if q.dtype == torch.float64 else torch.float32
    s = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias
    if causal:
        s.masked_fill_(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu_(1), float("-inf"))
    lse = torch.logsumexp(s, -1)
    return torch.matmul(torch.exp(s - lse[..., None]), v.to(acc)).to(q.dtype), lse


def _expand_kv(x: torch.Tensor, heads: int) -> torch.Tensor:
    n_rep = heads // x.shape[1]
    if n_rep == 1:
        return x
    b, h, n, d = x.shape
    return x[:, :, None].expand(b, h, n_rep, n, d).reshape(b, heads, n, d)


def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' attention interface: ``query [B, H, Ls, d]``, the suffix's ``key``/``value``
    ``[B, kv_heads, Ls, d]`` (from ``CascadeLayer.update``) -> ``([B, Ls, H, d], None)``."""
    batch: Batch | None = getattr(_LOCAL, "batch", None)
    if batch is None:  # not an engine pass: transformers' own SDPA
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    if kwargs.get("softcap") or kwargs.get("s_aux") is not None:
        raise ValueError("cascade attention: soft-capping / attention sinks are not supported")
    window = kwargs.get("sliding_window")
    if window and batch.longest > window:
        raise ValueError(f"cascade attention: a {window}-token window is shorter than the batch's rows")
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    b, heads, ls, d = query.shape
    o_suf, lse_suf = _attend(query, _expand_kv(key, heads), _expand_kv(value, heads), None, True, scale)
    if batch.layers is None:
        return o_suf.transpose(1, 2).contiguous(), None
    pk, pv = batch.layers[module.layer_idx]
    kv_heads, gr, slots = pk.shape[1], batch.groups, batch.slots
    if batch.identity:
        q_pre = query.reshape(gr, kv_heads, -1, d)
    else:
        grid = query.new_zeros((gr, heads, slots, ls, d))
        grid.permute(0, 2, 1, 3, 4)[batch.g, batch.j] = query
        q_pre = grid.view(gr, kv_heads, -1, d)
    o_pre, lse_pre = _attend(q_pre, pk, pv, batch.bias, False, scale)
    if batch.identity:
        o_pre, lse_pre = o_pre.reshape(b, heads, ls, d), lse_pre.reshape(b, heads, ls)
    else:
        o_pre = o_pre.reshape(gr, heads, slots, ls, d).permute(0, 2, 1, 3, 4)[batch.g, batch.j]
        lse_pre = lse_pre.reshape(gr, heads, slots, ls).permute(0, 2, 1, 3)[batch.g, batch.j]
    w = torch.sigmoid(lse_pre - lse_suf).unsqueeze(-1)
    out = torch.lerp(o_suf.to(w.dtype), o_pre.to(w.dtype), w).to(query.dtype)
    return out.transpose(1, 2).contiguous(), None


def _mask(*args, **kwargs):
    """The mask interface for ``NAME``: none during an engine pass (the attention needs none),
    else SDPA's, so the name stays correct for any other caller."""
    if getattr(_LOCAL, "batch", None) is not None:
        return None
    from transformers.masking_utils import sdpa_mask

    return sdpa_mask(*args, **kwargs)


@functools.cache
def register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, attention)
    AttentionMaskInterface.register(NAME, _mask)


# ------------------------------------------------------------------ rotary without torch.cat


def _rotate_into(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """``x * cos + rotate_half(x) * sin`` on the first ``cos.shape[-1]`` features, the rest passed
    through, written into one output tensor (no concatenation). Same operations per element as
    transformers' version: the result is bit for bit the same."""
    rot = cos.shape[-1]
    half = rot // 2
    out = torch.empty(x.shape, dtype=torch.result_type(x, cos), device=x.device)
    x1, x2 = x[..., :half], x[..., half:rot]
    out[..., :half] = x1 * cos[..., :half] - x2 * sin[..., :half]
    out[..., half:rot] = x2 * cos[..., half:] + x1 * sin[..., half:]
    if rot < x.shape[-1]:
        out[..., rot:] = x[..., rot:]
    return out


def rope(q, k, cos, sin, unsqueeze_dim=1):
    """Drop-in for transformers' ``apply_rotary_pos_emb`` (Llama and GPT-NeoX forms)."""
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return _rotate_into(q, cos, sin), _rotate_into(k, cos, sin)


@functools.cache
def _rope_ok(fn) -> bool:
    """Whether ``rope`` equals ``fn`` bit for bit on probes (full and half rotary, float32)."""
    g = torch.Generator().manual_seed(0)
    tried = 0
    for rot in (8, 4):
        q, k = torch.randn(2, 4, 5, 8, generator=g), torch.randn(2, 2, 5, 8, generator=g)
        ang = torch.randn(2, 5, rot // 2, generator=g)
        emb = torch.cat([ang, ang], -1)
        try:
            ref = fn(q, k, emb.cos(), emb.sin())
        except Exception:
            continue
        tried += 1
        got = rope(q, k, emb.cos(), emb.sin())
        if not all(torch.equal(a, b) for a, b in zip(ref, got)):
            return False
    return tried > 0


def _rope_modules(model) -> list:
    mods = {sys.modules[type(m).__module__] for m in model.modules()}
    return [m for m in mods if callable(getattr(m, "apply_rotary_pos_emb", None))]


@contextlib.contextmanager
def active(model, batch: Batch):
    """Within: ``model``'s attention is cascade attention over ``batch``, and its rotary
    embeddings are applied without concatenation where that is bit-identical."""
    register()
    cfg = text_config(model.config)
    configs = {id(c): c for c in (model.config, cfg)}.values()
    saved = [(c, c._attn_implementation) for c in configs]
    patched = []
    for m in _rope_modules(model):
        fn = m.apply_rotary_pos_emb
        if fn is not rope and _rope_ok(fn):
            patched.append((m, fn))
            m.apply_rotary_pos_emb = rope
    _LOCAL.batch = batch
    try:
        for c, _ in saved:
            c._attn_implementation = NAME
        yield
    finally:
        _LOCAL.batch = None
        for c, impl in saved:
            c._attn_implementation = impl
        for m, fn in patched:
            m.apply_rotary_pos_emb = fn
