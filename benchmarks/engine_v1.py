"""The scoring engine as it was before the GPU rewrite (issue 18), kept as the baseline of
benchmarks/engine_overhead.py. Not used by ctxprior itself.



Tricks (all exact up to float rounding):
- only the last position's logits are computed (``logits_to_keep=1``);
- identical token sequences are computed once (dedupe);
- the tokens being computed (each prompt's suffix after its shared prefix) are batched by length,
  so they are never padded; the shared prefixes of a batch may differ in length and are
  left-padded in the key/value cache with masked slots (zero attention weight; each row's
  position ids start after its own prefix), so a batch row is computed exactly like a lone
  prompt (batched = unbatched is tested);
- prompts of a *prefix group* (e.g. one context followed by every entity's query) share the
  key/value cache of their longest common token prefix. The shared prefix is taken from the
  token ids of the *whole* prompts (each prompt is tokenized as one string), so reuse can never
  change the tokens the model sees: when a context's own tokenization is not a prefix of the
  prompt's (a merge across the boundary), the common prefix is simply shorter; a group whose
  prompts share no prefix falls back to full prompts.
- log_softmax runs on the device in float64.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import torch

from ctxprior.scoring.models import LoadedModel


def _cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):  # transformers 4.x DynamicCache
        return list(zip(cache.key_cache, cache.value_cache))
    return [(k, v) for k, v in cache]  # legacy tuples


def _make_cache(layers: list[tuple[torch.Tensor, torch.Tensor]]):
    from transformers import DynamicCache

    try:
        return DynamicCache(layers)
    except TypeError:  # transformers 4.x
        return DynamicCache.from_legacy_cache(tuple(layers))


def auto_batch_size(lm: LoadedModel) -> int:
    """Prompts per forward pass: 32 on CPU; on CUDA, scaled to the free memory."""
    if lm.device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(lm.device))
        vocab = lm.model.config.vocab_size
        # the float32 logits row + float64 log_softmax dominate at the last position
        per_row = vocab * 16 + 4 * lm.model.config.hidden_size * 64 * 8
        return int(max(8, min(1024, free * 0.5 // per_row)))
    return 32


class Engine:
    """Runs a loaded model over token-id sequences; see the module docstring."""

    def __init__(
        self,
        lm: LoadedModel,
        batch_size: int | None = None,
        share_prefix: bool = True,
        min_prefix: int = 2,
        prefix_chunk: int = 64,
    ):
        self.lm = lm
        self.model = lm.model
        self.device = torch.device(lm.device)
        self.batch_size = int(batch_size or auto_batch_size(lm))
        self.share_prefix = share_prefix
        self.min_prefix = min_prefix
        self.prefix_chunk = prefix_chunk
        self.forward_calls = 0
        self.tokens_computed = 0

    # -------------------------------------------------------------- tokenization
    def encode(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        tok = self.lm.tokenizer
        return [tuple(ids) for ids in tok(list(texts), add_special_tokens=True)["input_ids"]]

    # -------------------------------------------------------------- forward helpers
    @torch.inference_mode()
    def _prefix_kv(self, prefixes: list[tuple[int, ...]]) -> dict[tuple[int, ...], list]:
        """KV cache per prefix: {prefix: [(k [H, L, D], v [H, L, D]) per layer]}."""
        out: dict[tuple[int, ...], list] = {}
        by_len: dict[int, list] = defaultdict(list)
        for p in prefixes:
            by_len[len(p)].append(p)
        for length, group in by_len.items():
            for i in range(0, len(group), self.batch_size):
                chunk = group[i : i + self.batch_size]
                ids = torch.tensor(chunk, dtype=torch.long, device=self.device)
                attn = torch.ones_like(ids)
                pos = torch.arange(length, device=self.device).unsqueeze(0).expand_as(ids)
                self.forward_calls += 1
                self.tokens_computed += ids.numel()
                res = self.model(
                    input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1
                )
                layers = _cache_layers(res.past_key_values)
                for j, p in enumerate(chunk):
                    out[p] = [(k[j], v[j]) for k, v in layers]
        return out

    @torch.inference_mode()
    def _run_rows(
        self,
        items: list[tuple[tuple[int, ...], tuple[int, ...]]],
        kv: dict,
        emit: Callable[[list[int], torch.Tensor], None],
        positions: str = "last",
    ) -> None:
        """items = [(prefix, suffix)]; emit(item indices, float32 logits [B, S, V] or [B, V]).

        Items are grouped by suffix length (no padding of the tokens being computed); prefixes of
        different lengths in one batch are left-padded in the KV cache and masked out, which is
        exact (masked keys get zero attention weight; positions come from each row's own prefix).
        Short suffixes are batched more widely (a token budget of batch_size x 32).
        """
        groups: dict[int, list[int]] = defaultdict(list)
        for i, (pre, suf) in enumerate(items):
            groups[len(suf)].append(i)
        for ls, idx in sorted(groups.items()):
            idx = sorted(idx, key=lambda i: len(items[i][0]))
            width = max(self.batch_size, min(8 * self.batch_size, (self.batch_size * 32) // max(ls, 1)))
            for s in range(0, len(idx), width):
                chunk = idx[s : s + width]
                ids = torch.tensor([items[i][1] for i in chunk], dtype=torch.long, device=self.device)
                b = ids.shape[0]
                lps = [len(items[i][0]) for i in chunk]
                maxlp = max(lps)
                past = None
                attn = torch.ones((b, maxlp + ls), dtype=torch.long, device=self.device)
                if maxlp:
                    first = next(kv[items[i][0]] for i in chunk if items[i][0])
                    layers = []
                    for li, (k0, v0) in enumerate(first):
                        h, _, d = k0.shape
                        k = k0.new_zeros((b, h, maxlp, d))
                        v = v0.new_zeros((b, h, maxlp, v0.shape[-1]))
                        for j, i in enumerate(chunk):
                            lp = lps[j]
                            if lp:
                                pk, pv = kv[items[i][0]][li]
                                k[j, :, maxlp - lp :] = pk
                                v[j, :, maxlp - lp :] = pv
                        layers.append((k, v))
                    for j, lp in enumerate(lps):
                        attn[j, : maxlp - lp] = 0
                    past = _make_cache(layers)
                pos = torch.tensor(lps, device=self.device).unsqueeze(1) + torch.arange(
                    ls, device=self.device
                ).unsqueeze(0)
                self.forward_calls += 1
                self.tokens_computed += ids.numel()
                res = self.model(
                    input_ids=ids,
                    attention_mask=attn,
                    position_ids=pos,
                    past_key_values=past,
                    use_cache=past is not None,
                    logits_to_keep=1 if positions == "last" else 0,
                )
                logits = res.logits
                emit(chunk, logits[:, -1, :] if positions == "last" else logits)

    def _plan(self, seqs: list[tuple[int, ...]], groups: Sequence[Sequence[int]] | None):
        """Split each sequence into (shared prefix, suffix) using its prefix group."""
        prefix_of: dict[int, tuple[int, ...]] = {}
        if self.share_prefix and groups:
            for g in groups:
                g = [i for i in g]
                if len(g) < 2:
                    continue
                first = seqs[g[0]]
                lcp = min(len(seqs[i]) for i in g) - 1  # every suffix keeps >= 1 token
                for i in g[1:]:
                    s = seqs[i]
                    k = 0
                    while k < lcp and s[k] == first[k]:
                        k += 1
                    lcp = k
                if lcp >= self.min_prefix:
                    for i in g:
                        prefix_of.setdefault(i, first[:lcp])
        return [(prefix_of.get(i, ()), seqs[i][len(prefix_of.get(i, ())) :]) for i in range(len(seqs))]

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
        uniq: dict[tuple[int, ...], int] = {}
        row_of = [uniq.setdefault(tuple(s), len(uniq)) for s in seqs]
        useqs = list(uniq)
        ugroups = None
        if groups:
            ugroups = [sorted({row_of[i] for i in g}) for g in groups]
        plan = self._plan(useqs, ugroups)
        vocab = self.model.get_output_embeddings().weight.shape[0]
        table = torch.empty((len(useqs), vocab), dtype=torch.float32, device=self.device)

        def emit(chunk, logits):
            lp = torch.log_softmax(logits.to(torch.float64), dim=-1)
            table[torch.tensor(chunk, device=self.device)] = lp.to(torch.float32)
            if progress:
                progress(len(chunk))

        # process prefix groups in chunks so that the KV memory stays bounded
        by_prefix: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for i, (pre, _) in enumerate(plan):
            by_prefix[pre].append(i)
        prefixes = [p for p in by_prefix if p]
        if () in by_prefix:
            idx = by_prefix[()]
            items = [plan[i] for i in idx]
            self._run_rows(items, {}, lambda c, lg: emit([idx[j] for j in c], lg))
        for s in range(0, len(prefixes), self.prefix_chunk):
            chunk = prefixes[s : s + self.prefix_chunk]
            kv = self._prefix_kv(chunk)
            idx = [i for p in chunk for i in by_prefix[p]]
            items = [plan[i] for i in idx]
            self._run_rows(items, kv, lambda c, lg, idx=idx: emit([idx[j] for j in c], lg))
            del kv
        return table, row_of

    @torch.inference_mode()
    def continuation_logprobs(
        self,
        prompts: Sequence[tuple[int, ...]],
        continuations: Sequence[Sequence[tuple[int, ...]]],
        progress: Callable[[int], None] | None = None,
    ) -> list[list[float]]:
        """Sum of token log-probs of each continuation after its prompt (teacher forcing).

        ``continuations[i]`` are token-id tuples scored after ``prompts[i]``. The prompt minus its
        last token is computed once (KV prefix); each continuation runs as a suffix of
        (last prompt token + continuation tokens). Returns float64 sums (python floats).
        """
        items: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        owner: list[tuple[int, int]] = []
        for i, (p, conts) in enumerate(zip(prompts, continuations)):
            p = tuple(p)
            pre, last = (p[:-1], p[-1:]) if len(p) > 1 else ((), p)
            for j, c in enumerate(conts):
                items.append((pre, last + tuple(c)))
                owner.append((i, j))
        out = [[0.0] * len(c) for c in continuations]
        prefixes = sorted({pre for pre, _ in items if pre})
        by_prefix: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for k, (pre, _) in enumerate(items):
            by_prefix[pre].append(k)

        def emit_for(idx):
            def emit(chunk, logits):
                lp = torch.log_softmax(logits.to(torch.float64), dim=-1)  # [B, S, V]
                for row, j in enumerate(chunk):
                    k = idx[j]
                    suf = items[k][1]
                    tgt = torch.tensor(suf[1:], device=self.device)
                    val = lp[row, torch.arange(len(suf) - 1, device=self.device), tgt].sum()
                    i, jj = owner[k]
                    out[i][jj] = float(val)
                if progress:
                    progress(len(chunk))

            return emit

        if () in by_prefix:
            idx = by_prefix[()]
            self._run_rows([items[k] for k in idx], {}, emit_for(idx), positions="all")
        for s in range(0, len(prefixes), self.prefix_chunk):
            chunk = prefixes[s : s + self.prefix_chunk]
            kv = self._prefix_kv(chunk)
            idx = [k for p in chunk for k in by_prefix[p]]
            self._run_rows([items[k] for k in idx], kv, emit_for(idx), positions="all")
            del kv
        return out

    @torch.inference_mode()
    def greedy(self, seqs: Sequence[tuple[int, ...]], max_new_tokens: int = 8) -> list[str]:
        """Greedy continuation text of each sequence (length-grouped batches, no padding)."""
        tok = self.lm.tokenizer
        uniq: dict[tuple[int, ...], int] = {}
        row_of = [uniq.setdefault(tuple(s), len(uniq)) for s in seqs]
        useqs = list(uniq)
        texts = [""] * len(useqs)
        by_len: dict[int, list[int]] = defaultdict(list)
        for i, s in enumerate(useqs):
            by_len[len(s)].append(i)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        for length, idx in sorted(by_len.items()):
            for s in range(0, len(idx), self.batch_size):
                chunk = idx[s : s + self.batch_size]
                ids = torch.tensor([useqs[i] for i in chunk], dtype=torch.long, device=self.device)
                out = self.model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    pad_token_id=pad,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                )
                self.forward_calls += max_new_tokens
                for j, i in enumerate(chunk):
                    texts[i] = tok.decode(out[j, length:], skip_special_tokens=True)
        return [texts[r] for r in row_of]


# ------------------------------------------------------------------ the scoring step as it was
def scores_v1(table, row_of, nc: int, nq: int, with_prior: bool = True):
    """The estimator's per-query loop as it was: one index tensor and several host syncs per
    query (``.cpu()``, ``float()``), returning (persuasion [nq, nc], chi [nq], prior KL [nq])."""
    import numpy as np
    from vocab_pass import kl_torch  # a sibling module: benchmarks/ is on the path of their scripts

    from ctxprior.scoring.metrics import scores_torch

    psi, chi, pkl = [], [], []
    for i in range(nq):
        rows = table[torch.tensor([row_of[i * nc + j] for j in range(nc)], device=table.device)]
        prior = table[row_of[nq * nc + i]] if with_prior else None
        if torch.isnan(rows).any() or torch.isposinf(rows).any():
            raise RuntimeError("NaN/inf")
        out = scores_torch(rows)
        psi.append(out["persuasion"].cpu().numpy())
        chi.append(float(out["susceptibility"]))
        if prior is not None:
            pkl.append(float(kl_torch(out["log_mixture"], prior)))
    return np.stack(psi), np.array(chi), np.array(pkl)
