"""The fast forward-pass engine: next-token log-probs for many prompts that share prefixes.

Tricks (all exact up to float rounding; batched = one prompt at a time is tested per family):
- identical token sequences are computed once (dedupe);
- prompts of a *prefix group* (e.g. one context followed by every entity's query) share the
  key/value cache of their longest common token prefix. The shared prefix is taken from the
  token ids of the *whole* prompts (each prompt is tokenized as one string), so reuse can never
  change the tokens the model sees: when a context's own tokenization is not a prefix of the
  prompt's (a merge across the boundary), the common prefix is simply shorter; a group whose
  prompts share no prefix falls back to full prompts;
- the prefixes are computed in right-padded batches under a token budget (so every query
  position sees at least one key: no fully masked attention row, on which some CUDA kernels
  return NaN), then shifted into one key/value *block* per layer, left-padded,
  ``[n_prefix, heads, max_prefix_len + room, head_dim]``: every prefix ends at the same column,
  so a prefix and its rows' tokens are contiguous in the cache (what ALiBi by key index and
  sliding windows need; the pad slots are zeroed and masked as keys, never used as queries). The
  rows (each prompt's suffix after its prefix) are sorted by suffix length (then prefix),
  right-padded, and run in batches. Each row's position ids start after its own prefix, so a
  batch row is computed exactly like a lone prompt. Families where this is not known to be exact
  (``architectures.prefix_reuse``) run full prompts, said once on stderr;
- attention over the block takes one of two paths, ONE declared option ``Engine(attention=...)``
  whose default ``auto`` is gather on every device until a GPU run measures flex faster
  (``attention="flex"`` asks for it where ``flex.supported``): **flex** (``flex.py``): the
  block is laid out flat with room for one batch's own keys; per layer ONE ``flex_attention``
  call attends each suffix query to its row's prefix, read in place, and causally to its row's
  own keys, through a block mask built once per batch (the two softmaxes are one inside the
  kernel); nothing is gathered or concatenated, rotary runs without ``torch.cat``. **gather**
  (ALiBi, attention soft-capping, GPT-Neo, sliding windows shorter than a batch's rows, greedy
  generation): the batch's cache is ONE gather of whole block rows (``index_select`` over
  prefixes) per layer, never a loop over rows; the forward pass writes the rows' own keys into the
  block's room in place (no concatenation); SDPA with a 4-D mask. ``compile_mode`` (off by
  default) wraps the body in ``torch.compile`` with suffix widths bucketed to multiples of 8;
- only the last real position of each row goes through the output head (hidden states are
  gathered first; the head's post-processing, e.g. Gemma's logit soft-capping, is checked against
  the model's own logits once per engine, and a model where they differ is run with its own
  logits instead);
- every index array of a call goes to the device in ONE transfer (pinned memory, non-blocking
  on CUDA), and nothing in a batch loop waits for the device: log_softmax runs on the device in
  float32 (one kernel from the model-dtype logits) into the float32 table, and results stay
  there until the caller takes them in one transfer (``metrics.vocab_pass`` divides out the
  rows' float32 normalisation error);
- ``last_logprobs_by_layer`` (``--per-layer``) gathers, in the same forward pass, the residual
  stream at the last real position of every layer into one device tensor; ``lens`` reads it through
  the final norm and the head (the logit lens);
- a CUDA out-of-memory error splits the batch in two and retries (the engine's batch size stays
  halved); rows are written by index, so none is lost or duplicated. ``oom_splits`` counts them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from .architectures import dims, text_config
from .blocks import Block, block_cache, cache_layers
from .generate import cut, decode, stop_ids
from .hfcompat import cache_arg, check_cache
from .models import LoadedModel
from .prefixes import Tokens, dedupe, group_prefixes
from .sizing import auto_batch_size, block_budget, kv_bytes_per_token, logits_elements

OOM = torch.cuda.OutOfMemoryError


# ------------------------------------------------------------------ the model's output head


class Head:
    """Logits from final hidden states: the output embedding plus the family's post-processing
    (Gemma 2/3 final soft-capping, Cohere's ``logit_scale``, Granite's ``logits_scaling``).

    ``check`` compares it with the model's own last-position logits once; when they differ the
    engine asks the model for its logits instead (``exact`` False)."""

    def __init__(self, model):
        cfg = text_config(model.config)
        self.linear = model.get_output_embeddings()
        self.softcap = getattr(cfg, "final_logit_softcapping", None)
        self.scale = getattr(cfg, "logit_scale", None)
        self.divide = getattr(cfg, "logits_scaling", None)
        self.exact: bool | None = None

    def __call__(self, h: torch.Tensor) -> torch.Tensor:  # [..., hidden] -> [..., vocab]
        logits = self.linear(h)
        if self.scale:
            logits = logits * self.scale
        if self.divide:
            logits = logits / self.divide
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    @torch.inference_mode()
    def check(self, model, device) -> bool:
        if self.exact is None:
            self.exact = getattr(model, "_ctxprior_head_exact", None)
        if self.exact is None:
            vocab = self.linear.weight.shape[0]
            ids = torch.arange(1, 6, device=device).remainder(vocab).unsqueeze(0)
            try:  # both heads on the same [1, 5, hidden] states, as the model computes its logits
                ref = model(input_ids=ids).logits[:, -1].float()
                ours = self(model.base_model(input_ids=ids).last_hidden_state)[:, -1].float()
                self.exact = head_matches(ours, ref, self.linear.weight.dtype)
            except Exception:  # a family without base_model / output embeddings
                self.exact = False
            try:
                model._ctxprior_head_exact = self.exact  # once per loaded model
            except AttributeError:
                pass
        return self.exact


def head_matches(ours: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> bool:
    """Whether the engine's logits equal the model's up to a few rounding steps of ``dtype``
    (relative to the largest logit): a missing soft-cap or scale is far outside that."""
    eps = torch.finfo(dtype).eps if dtype.is_floating_point else 1e-3
    tol = max(1e-4, 4 * eps) * float(ref.abs().max())
    return bool(torch.allclose(ours, ref, rtol=0.0, atol=tol))


def final_norm(model):
    """The norm the model applies to its last hidden state before the output head (Llama, Qwen,
    Gemma, Mistral, OLMo, Phi-3: ``norm``; GPT-NeoX, OPT: ``final_layer_norm``; GPT-2, Bloom,
    Falcon: ``ln_f``), or None when none of these names is found."""
    body = getattr(model, "base_model", model)
    for owner in (body, getattr(body, "decoder", None)):
        for name in ("norm", "final_layer_norm", "ln_f", "norm_f"):
            mod = getattr(owner, name, None) if owner is not None else None
            if isinstance(mod, torch.nn.Module):
                return mod
    return None


# ------------------------------------------------------------------ the engine


@dataclass
class _Rows:
    """One call's work on the device: rows sorted by (prefix chunk, suffix length)."""

    suffix: torch.Tensor  # [R, Ls_max] right-padded suffix ids
    ls: torch.Tensor  # [R] suffix lengths
    prefix_len: torch.Tensor  # [R] prefix lengths (0: none)
    pidx: torch.Tensor  # [R] the row's prefix within its chunk's block (0 when none)
    out: torch.Tensor  # [R] where the row's result goes
    host_ls: np.ndarray  # the same, on the host (batch shapes without device syncs)
    host_pidx: np.ndarray


class Engine:
    """Runs a loaded model over token-id sequences; see the module docstring."""

    def __init__(
        self,
        lm: LoadedModel,
        batch_size: int | None = None,
        share_prefix: bool = True,
        min_prefix: int = 2,
        token_budget: int | None = None,
        attention: str = "auto",
        compile_mode: str | None = None,
    ):
        self.lm = lm
        self.model = lm.model
        self.device = torch.device(lm.device)
        self.attention = self._attention_path(attention)
        self.batch_size = int(batch_size or auto_batch_size(lm, attention=self.attention))
        self.generate_batch_size = int(batch_size or auto_batch_size(lm, generate=True))
        self.token_budget = int(token_budget or self.batch_size * 32)
        self.share_prefix = share_prefix
        self.min_prefix = min_prefix
        self.head = Head(self.model)
        self.body = self.model.base_model  # the transformer without its output head
        self.prefix_reuse = "off"
        if share_prefix:  # a family where reuse is not known to be exact runs full prompts
            from .architectures import prefix_reuse

            ok, why = prefix_reuse(self.model.config, None, full_prefix_cache=True)
            self.share_prefix, self.prefix_reuse = ok, ("shared" if ok else why)
            if not ok:
                print(f"note: {why}", file=sys.stderr)
        # torch.compile of the body (off by default: on CPU it compiled but ran slower, see
        # docs/scaling.md): "default", or a torch.compile mode ("reduce-overhead": CUDA graphs)
        self.compile = compile_mode
        if compile_mode:
            mode = None if compile_mode == "default" else compile_mode
            self.body = torch.compile(self.body, dynamic=True, mode=mode)
        self.norm = final_norm(self.model)
        self._pool: ThreadPoolExecutor | None = None  # see prefetch
        self._tokenizer_copy = None
        self._prefetched: dict[tuple[str, ...], Future] = {}
        self.forward_calls = 0
        self.tokens_computed = 0
        self.oom_splits = 0
        self.flex_rows = 0  # rows run by flex attention

    def _attention_path(self, attention: str) -> str:
        """``attention``: ``auto`` (the default: the gather path on every device until a GPU run
        measures flex attention faster; ``benchmarks/gpu.py`` measures both on the same unit),
        ``flex`` (single-call flex attention where verified exact, see ``flex.supported``, on any
        device; a family that falls back is said on stderr) or ``gather`` (one ``index_select``
        of block rows per layer, SDPA with a 4-D mask). Returns the path."""
        if attention not in ("auto", "flex", "gather"):
            raise ValueError(f"attention must be auto, flex or gather, not {attention!r}")
        if attention == "gather":
            return "gather"
        if attention == "auto":
            return "gather"  # auto: flex attention is not yet measured faster on any device
        from . import flex

        ok, why = flex.supported(self.model.config)
        if not ok:
            print(f"note: {why}", file=sys.stderr)
        return "flex" if ok else "gather"

    @property
    def head_path(self) -> str:
        """``engine``: the engine applies the output head to the last real positions only;
        ``model``: the head could not be reproduced, so the model's own logits of every position
        are used (slower; no ``--per-layer``). Recorded per unit in ``run_unit_engine.head``."""
        return "engine" if self.head.check(self.model, self.device) else "model"

    # -------------------------------------------------------------- host -> device
    def encode(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        """Token ids of each text, tokenized whole (with the tokenizer's special tokens); the
        result of a ``prefetch`` of the same texts when there is one."""
        pending = self._prefetched.pop(tuple(texts), None) if self._prefetched else None
        return pending.result() if pending is not None else _encode(self.lm.tokenizer, texts)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Tokenize ``texts`` in a background thread (fast tokenizers release the GIL), with a copy
        of the tokenizer (a fast tokenizer is not safe to share between threads), so that the next
        unit's prompts are ready when the device finishes this one."""
        import copy

        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="ctxprior-tokenize")
            self._tokenizer_copy = copy.deepcopy(self.lm.tokenizer)
        while len(self._prefetched) >= 2:  # the unit computing now and the next one, at most
            self._prefetched.pop(next(iter(self._prefetched)))
        texts = tuple(texts)
        self._prefetched[texts] = self._pool.submit(_encode, self._tokenizer_copy, texts)

    def to_device(self, *arrays: np.ndarray) -> list[torch.Tensor]:
        """int64 host arrays -> device tensors in one (pinned, non-blocking) transfer."""
        flat = np.concatenate([np.ascontiguousarray(a, np.int64).reshape(-1) for a in arrays])
        t = torch.from_numpy(flat)
        if self.device.type == "cuda":
            t = t.pin_memory().to(self.device, non_blocking=True)
        out, s = [], 0
        for a in arrays:
            out.append(t[s : s + a.size].view(a.shape))
            s += a.size
        return out

    # -------------------------------------------------------------- the two kinds of pass
    def _prefix_block(self, tok: Tokens, room: int, flex: bool = False) -> Block:
        """Key/value cache of every prefix: per layer (K, V) [P, heads, width + room, head_dim].
        ``tok`` holds the prefixes right-padded to ``width``; in the block each prefix ENDS at
        column ``width``, where its rows' own tokens begin, so prefix and suffix are contiguous in
        the cache (what ALiBi by key index and sliding windows need). Pad slots are zeroed and
        masked; ``room`` slots at the end let a batch's gather hold its own new tokens too.
        ``flex``: the block is laid out flat for flex attention (``flex.flat_block``), ``room``
        columns after every prefix for one batch's own keys."""
        order = np.argsort(tok.lengths, kind="stable")
        width = tok.ids.shape[1]
        block: list[tuple[torch.Tensor, torch.Tensor]] = []
        flat: list[tuple[torch.Tensor, torch.Tensor]] = []
        ids_d, lens_d = self.to_device(tok.ids, tok.lengths)
        n, s = len(order), 0
        while s < n:
            e = min(n, s + self.batch_size)
            e = min(e, s + max(1, self.token_budget // int(tok.lengths[order[e - 1]])))
            idx = order[s:e]
            wb = int(tok.lengths[idx].max())
            try:
                layers = self._prefix_batch(ids_d[:, :wb], idx, wb, tok.lengths[idx])  # wb <= width
            except OOM:
                if e - s == 1:
                    raise
                self._split()
                continue
            if not block:
                block, flat = self._new_block(layers, len(order), width, room, flex)
            (rows,) = self.to_device(idx)
            for (bk, bv), (k, v) in zip(block, layers):
                bk[rows, :, width - wb : width] = k
                bv[rows, :, width - wb : width] = v
            s = e
        return Block(block, width, lens_d, flat or None, len(order))

    @staticmethod
    def _new_block(layers, prefixes: int, width: int, room: int, flex: bool):
        """Zeroed (block layers, flat layers) shaped like a prefix batch's ``layers``: a gather
        block ``[P, heads, width + room, d]`` (no flat layers), or flex's flat layers and their
        ``[P, heads, width, d]`` views."""
        if flex:
            from .flex import flat_block

            pairs = [
                (flat_block(k, prefixes, width, room), flat_block(v, prefixes, width, room))
                for k, v in layers
            ]
            return [(k[1], v[1]) for k, v in pairs], [(k[0], v[0]) for k, v in pairs]
        shape = [(prefixes, k.shape[1], width + room, k.shape[-1]) for k, _ in layers]
        return [(k.new_zeros(sh), v.new_zeros(sh)) for (k, v), sh in zip(layers, shape)], []

    def _prefix_batch(self, ids_d: torch.Tensor, idx: np.ndarray, width: int, lengths: np.ndarray):
        """One batch of prefixes through the body, RIGHT-padded so that every query position sees
        at least one key (a pad position attends to its row's real tokens: no fully masked
        attention row, on which some CUDA kernels return NaN); per layer (K, V) [B, heads, W,
        head_dim] shifted so that each prefix ends at column W, the pad slots zeroed. A key or
        value does not depend on its cache column (RoPE is applied by position id before
        caching), so the shift is exact."""
        from transformers import DynamicCache

        rows, lens = self.to_device(idx, lengths)
        ids = ids_d[rows]  # [B, W], real tokens first
        col = torch.arange(width, device=self.device)[None, :]
        self.forward_calls += 1
        self.tokens_computed += int(lengths.sum())
        cache = DynamicCache()  # full layers whatever the config says (no sliding truncation)
        self.body(
            input_ids=ids,
            attention_mask=(col < lens[:, None]).long(),
            position_ids=col.expand(len(idx), width),
            use_cache=True,
            **cache_arg(self.body, cache),
        )
        check_cache(cache, width, "prefix pass")
        shift = width - lens[:, None]  # [B, 1] left padding of each prefix in the block
        src = (col - shift).remainder(width)[:, None, :, None]  # [B, 1, W, 1] right-aligned -> source
        pad = (col < shift)[:, None, :, None]

        def aligned(x: torch.Tensor) -> torch.Tensor:
            return x.gather(2, src.expand(-1, x.shape[1], -1, x.shape[3])).masked_fill_(pad, 0)

        return [(aligned(k), aligned(v)) for k, v in cache_layers(cache)]

    def _forward_rows(
        self,
        rows: _Rows,
        s: int,
        e: int,
        block: Block | None,
        keep_cache: bool = False,
        hidden: bool = False,
    ):
        """One batch of rows: (hidden [B, Ls, hidden] or logits when the head is not exact,
        the mask, the cache, and with ``hidden`` the residual stream of every layer -- the
        model's ``hidden_states``, else None). Its prefix cache is one gather of the block per
        layer (whole contiguous rows, with the block's room for the batch's new tokens)."""
        from transformers import DynamicCache

        ls_w = self._suffix_width(rows, s, e)
        prefix_w = block.width if block is not None else 0
        ids = rows.suffix[s:e, :ls_w]  # [B, Ls]
        prefix_len = rows.prefix_len[s:e]
        if not keep_cache and self._flex_fits(block, prefix_w + ls_w):
            return self._forward_flex(rows, s, e, block, ids, hidden)
        cols = torch.arange(prefix_w + ls_w, device=self.device)[None, :]
        mask = torch.where(
            cols < prefix_w,
            cols >= prefix_w - prefix_len[:, None],  # prefix: right-aligned
            cols - prefix_w < rows.ls[s:e, None],
        ).long()  # [B, Lp + Ls]
        pos = prefix_len[:, None] + torch.arange(ls_w, device=self.device)[None, :]
        cache = DynamicCache() if keep_cache else None
        if block is not None and prefix_w:
            cache = block_cache(block.layers, rows.pidx[s:e], prefix_w, keep=keep_cache)
        self.forward_calls += 1
        self.tokens_computed += int(rows.host_ls[s:e].sum())
        exact = self.head.check(self.model, self.device)
        fwd = self.body if exact else self.model
        out = fwd(
            input_ids=ids,
            attention_mask=mask,
            position_ids=pos,
            use_cache=keep_cache or prefix_w > 0,
            output_hidden_states=hidden,
            **cache_arg(fwd, cache),
        )
        if cache is not None:
            check_cache(cache, prefix_w + ls_w, "suffix pass")
        states = out.last_hidden_state if exact else out.logits
        return states, mask, cache, out.hidden_states if hidden else None

    def _suffix_width(self, rows: _Rows, s: int, e: int) -> int:
        """The padded suffix width of the batch ``s:e``: its longest suffix, bucketed to multiples
        of 8 when compiled (fewer shapes to compile; right padding is exact)."""
        ls_w = int(rows.host_ls[s:e].max())
        if self.compile:
            ls_w = min(-(-ls_w // 8) * 8, rows.suffix.shape[1])
        return ls_w

    def _pads_between(self, longest: int) -> bool:
        """Whether generating rows of different suffix lengths may share a batch: pad slots then
        lie between a row's prompt and its new tokens, which is exact where attention reads
        positions from the position ids (the families of ``flex.supported``: no ALiBi by key index)
        and every sliding window covers the ``longest`` row; elsewhere a batch holds one length."""
        from . import flex

        return flex.supported(self.model.config)[0] and flex.window_fits(self.model.config, longest)

    def _flex_fits(self, block: Block | None, longest: int) -> bool:
        """Whether a batch runs by flex attention: the engine's path, a block built for it (or no
        prefix), and every sliding window covering the batch's rows."""
        from .flex import window_fits

        if self.attention != "flex" or (block is not None and block.flat is None):
            return False
        return window_fits(self.model.config, longest)

    def _forward_flex(self, rows: _Rows, s: int, e: int, block: Block | None, ids, hidden: bool):
        """``_forward_rows`` by single-call flex attention (``flex.py``): the rows' prefixes are
        read in place in the flat block, their own keys written into its room, no mask built
        beyond the batch's one block mask."""
        from . import flex

        ls_w = ids.shape[1]
        prefix = block if block is not None and block.width else None
        batch = flex.Batch.build(
            prefix, rows.pidx[s:e], rows.host_pidx[s:e], rows.prefix_len[s:e], e - s, ls_w, self.device
        )
        width = prefix.width if prefix is not None else 0
        cache = flex.make_cache(batch, dims(self.model.config).layers, width)
        pos = rows.prefix_len[s:e, None] + torch.arange(ls_w, device=self.device)[None, :]
        self.forward_calls += 1
        self.tokens_computed += int(rows.host_ls[s:e].sum())
        self.flex_rows += e - s
        exact = self.head.check(self.model, self.device)
        fwd = self.body if exact else self.model
        with flex.active(self.model, batch):
            out = fwd(
                input_ids=ids,
                attention_mask=None,
                position_ids=pos,
                use_cache=True,
                output_hidden_states=hidden,
                **cache_arg(fwd, cache),
            )
        check_cache(cache, width + ls_w, "suffix pass (flex)")
        states = out.last_hidden_state if exact else out.logits
        return states, None, cache, out.hidden_states if hidden else None

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        return self.head(states) if self.head.exact else states

    def _split(self) -> None:
        """After a CUDA out-of-memory error: free the cached blocks and halve the batch size."""
        self.oom_splits += 1
        self.batch_size = max(1, self.batch_size // 2)
        self.generate_batch_size = max(1, self.generate_batch_size // 2)
        self.token_budget = max(1, self.token_budget // 2)
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    # -------------------------------------------------------------- planning
    def _layout(self, tok: Tokens, prefix_len: np.ndarray, gid: np.ndarray, out_rows: np.ndarray):
        """Chunks of prefixes (their key/value blocks bounded by ``block_budget``), each with its
        rows sorted by suffix length: [(prefix Tokens or None, _Rows)]."""
        groups = np.unique(gid[gid >= 0])
        per_token = kv_bytes_per_token(self.lm)
        width = int(prefix_len.max()) if len(prefix_len) else 0
        per_chunk = max(1, block_budget(self.lm) // max(1, per_token * max(width, 1)))
        chunks = [None] + [groups[i : i + per_chunk] for i in range(0, len(groups), per_chunk)]
        plans = []
        for chunk in chunks:
            sel = np.flatnonzero(gid < 0) if chunk is None else np.flatnonzero(np.isin(gid, chunk))
            if not len(sel):
                continue
            pre = None
            pidx = np.zeros(len(sel), np.int64)
            if chunk is not None:
                first = np.unique(gid[sel], return_index=True)[1]  # one row per group
                ref = sel[first]
                w = int(prefix_len[ref].max())
                cols = np.arange(w)[None, :]
                pre = Tokens(
                    np.where(cols < prefix_len[ref, None], tok.ids[ref, :w], 0), prefix_len[ref]
                )  # right-padded
                pidx = np.searchsorted(gid[ref], gid[sel])
            prefix_lens = prefix_len[sel]
            ls = tok.lengths[sel] - prefix_lens
            # within a suffix length, rows by prefix (flex attention: a batch's rows read a short
            # run of the block's prefixes, few of the block mask's blocks), else by prefix length
            order = np.lexsort((pidx, ls) if self.attention == "flex" else (prefix_lens, ls))
            sel, prefix_lens, ls, pidx = sel[order], prefix_lens[order], ls[order], pidx[order]
            cols = np.arange(int(ls.max()))[None, :]
            src = np.minimum(prefix_lens[:, None] + cols, tok.ids.shape[1] - 1)
            suffix = np.where(cols < ls[:, None], tok.ids[sel[:, None], src], 0)
            d_suffix, d_ls, d_prefix_len, d_pidx, d_out = self.to_device(
                suffix, ls, prefix_lens, pidx, out_rows[sel]
            )
            plans.append((pre, _Rows(d_suffix, d_ls, d_prefix_len, d_pidx, d_out, ls, pidx)))
        return plans

    def _batches(self, rows: _Rows, new_tokens: int = 0, budget: int | None = None, mixed: bool = False):
        """[(start, end)] over the sorted rows: at most batch_size rows and ``budget`` (default
        token_budget) new tokens. Rows that generate tokens (``new_tokens``) are batched by exact
        suffix length, so the generated tokens follow the prompt with no padding between, unless
        ``mixed`` (``_pads_between``: the pad slots are masked and positions come from the
        position ids, so a row's padding changes nothing it computes)."""
        n, s = len(rows.host_ls), 0
        while s < n:
            e = min(n, s + (self.generate_batch_size if new_tokens else self.batch_size))
            if new_tokens and not mixed:
                e = min(e, int(np.searchsorted(rows.host_ls, rows.host_ls[s], side="right")))
            width = int(rows.host_ls[e - 1]) + new_tokens
            e = min(e, s + max(1, (budget or self.token_budget) // max(width, 1)))
            yield s, e
            s = e

    def _each_batch(
        self,
        seqs: Sequence[tuple[int, ...]] | Tokens,
        groups,
        run: Callable,
        new_tokens: int = 0,
        cap: np.ndarray | None = None,
        min_prefix: int | None = None,
        budget: Callable[[], int] | None = None,
        out_rows: np.ndarray | None = None,
    ) -> None:
        """Plan ``seqs`` (prefix groups, see ``group_prefixes``), then ``run(rows, start, end,
        block)`` for every batch; an out-of-memory batch is split in two and retried. ``rows.out``
        names each row's place in the caller's tables: its index in ``seqs``, or ``out_rows[i]``."""
        tok = seqs if isinstance(seqs, Tokens) else Tokens.pack(seqs)
        groups = groups if self.share_prefix else None
        prefix_len, gid = group_prefixes(
            tok, groups, self.min_prefix if min_prefix is None else min_prefix, cap
        )
        out = np.arange(len(tok.lengths)) if out_rows is None else out_rows
        for pre, rows in self._layout(tok, prefix_len, gid, out):
            room = int(rows.host_ls.max()) + new_tokens
            mixed = bool(new_tokens) and self._pads_between(
                (pre.ids.shape[1] if pre is not None else 0) + room
            )
            pending = list(self._batches(rows, new_tokens, budget() if budget else None, mixed))[::-1]
            block = None
            if pre is not None:
                flex = not new_tokens and self._flex_fits(None, pre.ids.shape[1] + room)
                if flex:  # the room holds one batch's own keys, row after row
                    room = max((e - s) * self._suffix_width(rows, s, e) for s, e in pending)
                block = self._prefix_block(pre, room, flex=flex)
            while pending:
                s, e = pending.pop()
                try:
                    run(rows, s, e, block)
                except OOM:
                    if e - s == 1:
                        raise
                    self._split()
                    pending += [((s + e) // 2, e), (s, (s + e) // 2)]
            del block

    # -------------------------------------------------------------- public API
    @torch.inference_mode()
    def last_logprobs(
        self,
        seqs: Sequence[tuple[int, ...]],
        groups: Sequence[Sequence[int]] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[torch.Tensor, list[int]]:
        """Next-token log-probs after each sequence.

        Returns (table [n_unique, V] float32 on the device, row index per input sequence).
        ``groups``: lists of input indices whose sequences should share a KV prefix.
        """
        table, row_of, _ = self._last(seqs, groups, progress, layers=False)
        return table, row_of

    @torch.inference_mode()
    def last_logprobs_by_layer(
        self,
        seqs: Sequence[tuple[int, ...]],
        groups: Sequence[Sequence[int]] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[torch.Tensor, list[int], torch.Tensor]:
        """``last_logprobs`` plus the residual stream at each sequence's last real position before
        every layer but the output: ``hidden [L, n_unique, hidden]`` (model dtype, on the device;
        entry 0 is the embeddings, entry l the output of block l). The stream after the last block
        is the final hidden state the table comes from; ``lens`` reads the others."""
        self.lens_ready()
        return self._last(seqs, groups, progress, layers=True)

    @staticmethod
    def _distinct(seqs, groups):
        """(the distinct sequences as Tokens, each input's distinct row, the groups over distinct rows)."""
        tok = Tokens.pack(seqs)
        first, row_of = dedupe(tok)
        ugroups = [row_of[np.asarray(g, np.int64)].tolist() for g in groups] if groups else None
        return Tokens(tok.ids[first], tok.lengths[first]), row_of, ugroups

    def _last(self, seqs, groups, progress, layers: bool):
        utok, row_of, ugroups = self._distinct(seqs, groups)
        table = self._table(len(utok.lengths))
        hidden: list[torch.Tensor] = []  # [L, n_unique, hidden], allocated at the first batch
        self._each_batch(utok, ugroups, self._last_run(table, progress, hidden if layers else None))
        if layers and not hidden:  # no sequence at all
            hidden.append(torch.empty((0, 0, 0), device=self.device))
        return table, row_of.tolist(), hidden[0] if layers else None

    def _table(self, n: int) -> torch.Tensor:
        vocab = self.model.get_output_embeddings().weight.shape[0]
        return torch.empty((n, vocab), dtype=torch.float32, device=self.device)

    def _last_run(self, table: torch.Tensor, progress, hidden: list | None) -> Callable:
        """The batch step of the next-token pass: each row's log-probs into ``table[rows.out]``
        (and with ``hidden``, a list, the residual stream of every layer into ``hidden[0]``)."""

        def run(rows: _Rows, s: int, e: int, block) -> None:
            states, _, _, hs = self._forward_rows(rows, s, e, block, hidden=hidden is not None)
            at = (torch.arange(e - s, device=self.device), rows.ls[s:e] - 1)
            last = states[at]  # [B, H|V]
            table[rows.out[s:e]] = torch.log_softmax(self._logits(last), -1, dtype=torch.float32)
            if hidden is not None:
                if not hidden:
                    hidden.append(last.new_empty((len(hs) - 1, len(table), last.shape[-1])))
                hidden[0][:, rows.out[s:e]] = torch.stack([h[at] for h in hs[:-1]])
            if progress:
                progress(e - s)

        return run

    # -------------------------------------------------------------- logit lens
    def lens_ready(self) -> None:
        """Raise ValueError when the logit lens cannot be read exactly like the model's output: no
        final norm found, or a head the engine cannot apply itself (see ``Head``)."""
        if self.norm is None:
            raise ValueError(
                f"per-layer scores: no final norm found on {type(self.model).__name__} "
                "(looked for norm, final_layer_norm, ln_f, norm_f)"
            )
        if not self.head.check(self.model, self.device):
            raise ValueError(
                f"per-layer scores: {type(self.model).__name__}'s output head could not "
                "be reproduced from its final hidden state"
            )

    def lens(self, h: torch.Tensor) -> torch.Tensor:
        """The logit lens: log-probs (float64) of the next token read from residual-stream states
        ``h [..., hidden]`` through the model's final norm and output head."""
        return torch.log_softmax(self.head(self.norm(h)).to(torch.float64), dim=-1)

    @torch.inference_mode()
    def continuation_logprobs(
        self,
        prompts: Sequence[tuple[int, ...]],
        continuations: Sequence[Sequence[tuple[int, ...]]],
        progress: Callable[[int], None] | None = None,
        last: torch.Tensor | None = None,
    ) -> list[list[float]]:
        """Sum of token log-probs of each continuation after its prompt (teacher forcing).

        ``continuations[i]`` are token-id tuples scored after ``prompts[i]``. The prompt minus its
        last token is the shared prefix of its continuations; each continuation runs as a suffix of
        (last prompt token + continuation tokens). Returns float64 sums (python floats), taken
        from the device in one transfer. ``last`` (a float32 ``[prompts, vocab]`` tensor on the
        device): filled with the next-token log-probs after each prompt (the distribution of the
        continuations' first token over the whole vocabulary), read from the same pass at the
        prompt's last position of its first continuation's row; a prompt without continuations
        keeps its row as given.
        """
        seqs: list[tuple[int, ...]] = []
        groups: list[list[int]] = []
        sizes: list[int] = []
        for p, conts in zip(prompts, continuations):
            groups.append(list(range(len(seqs), len(seqs) + len(conts))))
            seqs += [tuple(p) + tuple(c) for c in conts]
            sizes.append(len(conts))
        n_prompt = np.repeat(np.fromiter(map(len, prompts), np.int64, len(prompts)), sizes)
        sums = torch.zeros(len(seqs), dtype=torch.float64, device=self.device)
        # per row: its prompt's index, or -1 unless it is its prompt's first continuation
        owner = np.repeat(np.arange(len(prompts), dtype=np.int64), sizes)
        head = np.zeros(len(seqs), bool)
        firsts = np.cumsum([0, *sizes])[:-1]
        head[firsts[np.asarray(sizes, np.int64) > 0]] = True
        start_d, owner_d = self.to_device(n_prompt, np.where(head, owner, -1))
        vocab = self.model.get_output_embeddings().weight.shape[0]

        def run(rows: _Rows, s: int, e: int, block) -> None:
            states, _, _, _ = self._forward_rows(rows, s, e, block)
            lp = torch.log_softmax(self._logits(states).to(torch.float64), dim=-1)  # [B, Ls, V]
            # suffix column j predicts column j + 1; targets are the continuation's tokens
            col = torch.arange(lp.shape[1], device=self.device)[None, :]
            tgt = torch.roll(rows.suffix[s:e, : lp.shape[1]], -1, dims=1)
            first = start_d[rows.out[s:e]] - rows.prefix_len[s:e]  # suffix column of the first target
            use = (col + 1 >= first[:, None]) & (col + 1 < rows.ls[s:e, None])
            picked = lp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
            sums[rows.out[s:e]] = torch.where(use, picked, 0.0).sum(-1)
            if last is not None:
                mine = owner_d[rows.out[s:e]]
                at = (mine >= 0).nonzero()[:, 0]
                last[mine[at]] = lp[at, first[at] - 1].to(torch.float32)
            if progress:
                progress(e - s)

        # the shared prefix stops before the prompt's last token, whose logits score the first
        # continuation token; float64 log-softmax of every position bounds the batch's tokens
        self._each_batch(
            seqs,
            [g for g in groups if len(g) >= 2],
            run,
            cap=n_prompt - 1,
            min_prefix=1,
            budget=lambda: max(1, min(self.token_budget, logits_elements(self.lm) // vocab)),
        )
        flat = sums.cpu().tolist()
        out, k = [], 0
        for n in sizes:
            out.append(flat[k : k + n])
            k += n
        return out

    @torch.inference_mode()
    def greedy(
        self,
        seqs: Sequence[tuple[int, ...]],
        max_new_tokens: int = 8,
        groups: Sequence[Sequence[int]] | None = None,
    ) -> list[str]:
        """Greedy continuation text of each sequence: up to ``max_new_tokens`` argmax steps on the
        device (the one generation loop, ``generate.decode``, with its stop rule: a batch ends when
        every row has given a stop token, ``generate.stop_ids``; one host sync per step), cut at
        the first stop token. ``groups`` share a KV prefix as in ``last_logprobs``."""
        utok, row_of, ugroups = self._distinct(seqs, groups)
        out = self._tokens_out(len(utok.lengths), max_new_tokens)
        if max_new_tokens > 0 and len(utok.lengths):
            self._each_batch(utok, ugroups, self._greedy_run(out, None, None), new_tokens=max_new_tokens)
        return self._texts(out, row_of)

    @torch.inference_mode()
    def last_logprobs_and_greedy(
        self,
        seqs: Sequence[tuple[int, ...]],
        groups: Sequence[Sequence[int]],
        n_generate: int,
        max_new_tokens: int,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[torch.Tensor, list[int], list[str]]:
        """``last_logprobs`` of every sequence and ``greedy`` of the first ``n_generate``, with one
        prefill per prompt: a generating prompt's next-token log-probs are read from its
        generation's first forward pass (the same tokens; only the batches differ, so a value can
        move in its last float32 bits), not from a second pass over it. A group shares its prefix
        within each of the two parts (a group across both is split). Returns (table, row per
        input sequence, the generated texts of the first ``n_generate``)."""
        utok, row_of, ugroups = self._distinct(seqs, groups)
        n = len(utok.lengths)
        table, out = self._table(n), self._tokens_out(n, max_new_tokens)
        gen = np.zeros(n, bool)
        gen[row_of[:n_generate]] = True
        for rows, keep in ((np.flatnonzero(gen), True), (np.flatnonzero(~gen), False)):
            if not len(rows):
                continue
            local = np.full(n, -1, np.int64)
            local[rows] = np.arange(len(rows))
            sub_groups = [m for g in ugroups or () if len(m := local[g][local[g] >= 0].tolist())]
            sub = Tokens(utok.ids[rows], utok.lengths[rows])
            if keep:
                run = self._greedy_run(out, table, progress)
                self._each_batch(sub, sub_groups, run, new_tokens=max_new_tokens, out_rows=rows)
            else:
                self._each_batch(sub, sub_groups, self._last_run(table, progress, None), out_rows=rows)
        return table, row_of.tolist(), self._texts(out, row_of[:n_generate])

    def _tokens_out(self, n: int, max_new_tokens: int) -> torch.Tensor:
        """[n, max_new_tokens] generated tokens, all pad (the smallest stop id) until written."""
        pad = min(stop_ids(self.lm.tokenizer, self.model), default=0)
        return torch.full((n, max(max_new_tokens, 0)), pad, dtype=torch.long, device=self.device)

    def _texts(self, out: torch.Tensor, row_of: np.ndarray) -> list[str]:
        """The text of ``out[r]`` for each r of ``row_of``, cut at the first stop token."""
        stop, tok = stop_ids(self.lm.tokenizer, self.model), self.lm.tokenizer
        rows = np.unique(row_of)
        got = out[torch.as_tensor(rows, device=out.device)].cpu().tolist()
        texts = {r: tok.decode(cut(g, stop), skip_special_tokens=True) for r, g in zip(rows.tolist(), got)}
        return [texts[r] for r in row_of.tolist()]

    def _greedy_run(self, out: torch.Tensor, first: torch.Tensor | None, progress) -> Callable:
        """The batch step of greedy generation: each row's tokens into ``out[rows.out]`` (a row
        that stopped is padded after its stop token); with ``first``, the prefill's next-token
        log-probs into ``first[rows.out]``, as ``_last_run`` writes them."""
        stop = stop_ids(self.lm.tokenizer, self.model)
        pad = min(stop, default=0)  # a finished row's later tokens: cut away with the stop token
        max_new_tokens = out.shape[1]

        def run(rows: _Rows, s: int, e: int, block) -> None:
            states, mask, cache, _ = self._forward_rows(rows, s, e, block, keep_cache=True)
            b = e - s
            logits = [self._logits(states[torch.arange(b, device=self.device), rows.ls[s:e] - 1])]
            del states  # the suffix's states, and below its first logits (popped), held by no name here
            if first is not None:
                first[rows.out[s:e]] = torch.log_softmax(logits[0], -1, dtype=torch.float32)
            at = {"pos": rows.prefix_len[s:e] + rows.ls[s:e], "mask": mask}  # next position, the mask so far
            fwd = self.body if self.head.exact else self.model

            def drop(keep: torch.Tensor) -> None:  # rows that stopped leave the batch
                idx = keep.nonzero()[:, 0]
                at["pos"], at["mask"] = at["pos"][idx], at["mask"][idx]
                cache.batch_select_indices(idx)

            def step(tokens: torch.Tensor) -> torch.Tensor:
                at["mask"] = torch.cat([at["mask"], at["mask"].new_ones((len(tokens), 1))], dim=1)
                self.forward_calls += 1
                o = fwd(
                    input_ids=tokens[:, None],
                    attention_mask=at["mask"],
                    position_ids=at["pos"][:, None],
                    use_cache=True,
                    **cache_arg(fwd, cache),
                )
                check_cache(cache, at["mask"].shape[1], "greedy step")
                at["pos"] = at["pos"] + 1
                return self._logits(o.last_hidden_state[:, -1] if self.head.exact else o.logits[:, -1])

            toks = decode(
                step,
                logits.pop(),
                max_new_tokens,
                lambda lg: lg.argmax(-1),
                stop=stop,
                pad_id=pad,
                drop=drop if stop and hasattr(cache, "batch_select_indices") else None,
            )[0]
            out[rows.out[s:e], : toks.shape[1]] = toks
            if progress:
                progress(e - s)

        return run


def _encode(tokenizer, texts: Sequence[str]) -> list[tuple[int, ...]]:
    return [tuple(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
