"""Single-call prefix attention: per layer ONE ``flex_attention`` call over the prefix block and
the batch's own keys, with a block mask built once per batch.

The engine keeps every prefix's key/value cache once per layer. For this path the block of a
chunk's prefixes is laid out flat, ``[1, kv_heads, P * W + room, head_dim]`` (prefix ``p`` owns
columns ``p*W .. p*W + W``, left-padded, ending at column ``(p + 1) * W``), and the ``room`` after
the prefixes holds one batch's own keys: each layer's ``update`` writes the batch's suffix keys
there (``B * Ls`` columns, row after row; the same write the gather path makes into its gathered
copy) and nothing else is copied: no prefix is gathered, nothing is concatenated. The batch's
queries are laid out the same way, ``[1, heads, B * Ls, head_dim]``, and one ``flex_attention``
call attends each query to

- its row's own prefix, read in place in the block: columns ``[p*W + W - prefix_len, (p + 1)*W)``
  of the row's prefix ``p`` (its left padding masked), and
- its row's own keys, causally: columns ``[S + r*Ls, S + q]`` (``S``: where the room starts,
  ``r``: the row, ``q``: the flat query index),

so the two softmaxes (over the prefix and over the suffix) are one softmax inside the kernel: no
log-sum-exp merge. The mask (``mask_mod``) reads two per-row index tensors; the
``BlockMask`` is built once per batch and shared by every layer. A right-padded query sees its
row's keys up to itself (never a fully masked row); no real query sees a pad key. Grouped-query
heads go through ``enable_gqa`` (no key repeated).

On CPU ``flex_attention`` runs eagerly (an unfused implementation that materialises the scores:
exact, slow; the point on CPU is exactness, ``tests/test_flex.py``). On CUDA the call is compiled
(``torch.compile(flex_attention, dynamic=True)``, the fused kernel that skips the masked blocks)
and so is the block mask; its speed against the gather path is what ``benchmarks/gpu.py``
measures (``flex_vs_gather``). ``Engine(attention="auto")`` stays gather until a GPU has.

It hooks into transformers through its ``AttentionInterface`` (the name ``ctxprior_flex``, set
on the model's config only for the engine's suffix passes, ``active``; outside an engine pass the
name is plain SDPA) and a cache layer (``FlexLayer``). With it active, rotary embeddings of the
families whose ``apply_rotary_pos_emb`` we reproduce bit for bit (checked on a probe,
``_rope_ok``) are applied without ``torch.cat``.

Exact (equal to the gather path to float rounding) for the families in ``FAMILIES``, whose
layers attend with a plain causal softmax; not used (the gather path runs) for ALiBi (BLOOM,
MPT, Falcon), attention-logit soft-capping (Gemma 2), GPT-Neo's local layers, sliding windows
shorter than a batch's prefix + suffix (checked per chunk), nor for generation (``greedy``), which
keeps the gather path's growing cache.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

from .architectures import sliding_window, text_config

NAME = "ctxprior_flex"

# model types whose attention goes through transformers' AttentionInterface as a plain causal
# softmax over (prefix, suffix): single-call attention verified exact (tests/test_flex.py)
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

_LOCAL = threading.local()


def supported(config: Any) -> tuple[bool, str]:
    """Whether single-call attention is exact for this model (before any per-call window check)."""
    cfg = text_config(config)
    mtype = getattr(config, "model_type", None) or "unknown"
    if mtype not in FAMILIES:
        return False, f"{mtype}: flex attention not verified for this family; gather path"
    if getattr(cfg, "attn_logit_softcapping", None):
        return False, f"{mtype}: attention-logit soft-capping; gather path"
    if getattr(cfg, "alibi", False) or getattr(cfg, "position_embedding_type", "") == "alibi":
        return False, f"{mtype}: ALiBi; gather path"
    return True, f"{mtype}: flex attention (prefix read in place, one call per layer)"


def window_fits(config: Any, longest: int) -> bool:
    """Whether every sliding window (if any) covers a row of ``longest`` tokens (prefix + suffix),
    so that a window never cuts a key and the plain causal softmax is exact."""
    w = sliding_window(config)
    return w is None or longest <= w


# ------------------------------------------------------------------ the flat block


def flat_block(k: torch.Tensor, prefixes: int, width: int, room: int):
    """A zeroed flat layer ``[1, kv_heads, prefixes * width + room, d]`` shaped like ``k`` (a
    prefix batch's ``[B, kv_heads, W, d]``) and its view ``[prefixes, kv_heads, width, d]`` (prefix
    ``p`` at columns ``p*width ..``), which the engine fills like a gather block."""
    heads, d = k.shape[1], k.shape[-1]
    n = prefixes * width + room
    flat = k.new_zeros((1, heads, n, d))
    view = flat.as_strided((prefixes, heads, width, d), (width * d, n * d, d, 1))
    return flat, view


# ------------------------------------------------------------------ a batch's state


@dataclass
class Batch:
    """What one batch's attention needs beyond its own queries and keys."""

    layers: list[tuple[torch.Tensor, torch.Tensor]] | None  # flat (K, V) per layer; None: no prefix
    start: int  # the first block column the batch reads (its lowest prefix's)
    room: int  # the column where the batch's own keys go (S, absolute)
    rows: int
    width: int  # Ls
    mask: Any  # the BlockMask, every layer's
    longest: int  # prefix + suffix width of the batch (sliding-window guard)

    @classmethod
    def build(cls, block, pidx, host_pidx, prefix_len, rows: int, ls_w: int, device):
        """``block``: the chunk's ``blocks.Block`` (flat; None: rows without a prefix); ``pidx``,
        ``prefix_len``: the rows' prefixes in it and their lengths (device), ``host_pidx`` the same
        prefixes on the host (the batch's first column without a device sync)."""
        n = rows * ls_w
        if block is None:
            lo_key = hi_key = torch.zeros(rows, dtype=torch.long, device=device)
            layers, start, room, width = None, 0, 0, 0
        else:
            width = block.width
            layers, room = block.flat, block.prefixes * width
            start = int(host_pidx.min()) * width
            hi_key = (pidx + 1) * width - start
            lo_key = hi_key - prefix_len
        s = room - start  # the batch's own keys, relative to ``start``
        # the mask's scalars as tensors: a compiled mask is not specialised to their values
        s_t, w_t = torch.tensor([s, ls_w], device=device).unbind()

        def mask_mod(b, h, q, k):
            r = q // w_t
            own = (k >= s_t + r * w_t) & (k <= s_t + q)
            return own | ((k >= lo_key[r]) & (k < hi_key[r]))

        bm = _block_mask(mask_mod, n, s + n, device)
        return cls(layers, start, room, rows, ls_w, bm, width + ls_w)


def _block_mask(mask_mod, q_len: int, kv_len: int, device):
    """The batch's ``BlockMask``: eager on CPU; compiled on CUDA, where the eager version would
    materialise the whole ``[queries, keys]`` mask."""
    from torch.nn.attention.flex_attention import create_block_mask

    make = _compiled_mask() if torch.device(device).type == "cuda" else create_block_mask
    return make(mask_mod, None, None, q_len, kv_len, device=device)


@functools.cache
def _compiled_mask():
    from torch.nn.attention.flex_attention import create_block_mask

    return torch.compile(create_block_mask, dynamic=True)


class FlexLayer(DynamicLayer):
    """One layer of a flex batch's cache: ``update`` writes the suffix's keys and values into the
    block's room (or, without a prefix, lays them out flat) and returns the flat
    ``[1, kv_heads, columns, d]`` keys and values the batch's attention reads."""

    def __init__(self, flat: tuple[torch.Tensor, torch.Tensor] | None, batch: Batch, width: int):
        super().__init__()
        self.flat, self.batch, self.width, self.seen = flat, batch, width, 0
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        self.seen = key_states.shape[-2]
        b, heads, ls, d = key_states.shape
        if self.flat is None:
            return _flat(key_states), _flat(value_states)
        room, end = self.batch.room, self.batch.room + b * ls
        out = []
        for x, f in zip((key_states, value_states), self.flat):
            f[0, :, room:end].view(heads, b, ls, d).copy_(x.transpose(0, 1))
            out.append(f[:, :, self.batch.start : end])
        return out[0], out[1]

    def get_seq_length(self, *args) -> int:
        return self.width + self.seen

    def get_mask_sizes(self, *args, **kwargs) -> tuple[int, int]:
        q = args[0] if args and isinstance(args[0], int) else 0
        return self.width + q, 0


def _flat(x: torch.Tensor) -> torch.Tensor:
    """``[B, heads, L, d]`` -> ``[1, heads, B * L, d]`` (row after row)."""
    b, heads, n, d = x.shape
    return x.transpose(0, 1).reshape(1, heads, b * n, d)


def make_cache(batch: Batch, n_layers: int, width: int):
    """A ``DynamicCache`` of ``FlexLayer``s for one batch."""
    from transformers import DynamicCache

    cache = DynamicCache()
    flats = batch.layers if batch.layers is not None else [None] * n_layers
    cache.layers = [FlexLayer(f, batch, width) for f in flats]
    return cache


# ------------------------------------------------------------------ attention


@functools.cache
def _compiled():
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=True)


def _flex(q, k, v, mask, scale: float):
    from torch.nn.attention.flex_attention import flex_attention

    gqa = q.shape[1] != k.shape[1]
    if q.device.type == "cuda":
        return _compiled()(q, k, v, block_mask=mask, scale=scale, enable_gqa=gqa)
    with warnings.catch_warnings():  # eager on CPU: exact, unfused (said in the module docstring)
        warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
        return flex_attention(q, k, v, block_mask=mask, scale=scale, enable_gqa=gqa)


def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' attention interface: ``query [B, H, Ls, d]``, the flat ``key``/``value``
    ``[1, kv_heads, columns, d]`` (from ``FlexLayer.update``) -> ``([B, Ls, H, d], None)``."""
    batch: Batch | None = getattr(_LOCAL, "batch", None)
    if batch is None:  # not an engine pass: transformers' own SDPA
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    if kwargs.get("softcap") or kwargs.get("s_aux") is not None:
        raise ValueError("flex attention: soft-capping / attention sinks are not supported")
    window = kwargs.get("sliding_window")
    if window and batch.longest > window:
        raise ValueError(f"flex attention: a {window}-token window is shorter than the batch's rows")
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    b, heads, ls, d = query.shape
    out = _flex(_flat(query), key, value, batch.mask, scale)  # [1, H, B * Ls, d]
    return out.view(heads, b, ls, d).permute(1, 2, 0, 3).contiguous(), None


def _mask(*args, **kwargs):
    """The mask interface for ``NAME``: none during an engine pass (the block mask is the
    attention's own), else SDPA's, so the name stays correct for any other caller."""
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
    """Within: ``model``'s attention is single-call flex attention over ``batch``, and its rotary
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
