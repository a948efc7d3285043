"""One text-generation path: a token loop, one token chooser and one stop rule.

Used by memorization (``Engine.greedy``: its own prefix-block cache, greedy, no stop checks in the
loop), DynamicQA (``dynamicqa/answers.py``: sampled rows and a greedy row per prompt, the raw
logits of every step kept) and local fake generation (``fakes/llm.py``: one chat prompt, sampled
or greedy, until enough names).

- **Stop rule** (``stop_ids``): the tokenizer's and the generation config's end-of-sequence ids,
  plus, when the tokenizer has a chat template, the token that closes an assistant turn in it
  (``<|im_end|>``, ``<end_of_turn>``, ``<|eot_id|>``...), read from the template itself.
- **Choosing a token** (``Sampling``, ``choose``): greedy (temperature 0) or sampled at
  ``temperature`` with optional top-k / top-p (the filters of Hugging Face's ``generate``, in its
  order), from float32 logits, on the host with a seeded ``torch.Generator`` (the same tokens on
  any device).
- **The loop** (``decode``): a caller-supplied ``step`` extends its cache by one token per row;
  finished rows are padded; it stops when every row has stopped or ``until`` says so.
- **Prompts** (``generate``): each prompt is prefilled ALONE (no padding: no fully masked
  attention row, on which some CUDA kernels return NaN), its key/value cache right-aligned into
  one left-padded cache (pad slots zeroed and masked as keys, never queries), repeated per prompt
  and decoded together. A key does not depend on its cache column (RoPE is applied by position id
  before caching), so the layout is exact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .hfcompat import cache_arg, check_cache, output_cache

_MARKER = "ctxprior-answer-marker"


@functools.lru_cache(maxsize=16)
def end_of_turn_ids(tokenizer) -> frozenset[int]:
    """The special token right after an assistant message in the tokenizer's chat template;
    empty without a template (or when the template puts plain text there)."""
    if not getattr(tokenizer, "chat_template", None):
        return frozenset()
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": _MARKER}]
    try:
        text = tokenizer.apply_chat_template(turns, tokenize=False)
    except Exception:  # a template that refuses this conversation: no end-of-turn token known
        return frozenset()
    after = text.split(_MARKER, 1)[1] if _MARKER in text else ""
    ids = tokenizer(after, add_special_tokens=False)["input_ids"] if after else []
    special = set(tokenizer.all_special_ids) | {
        i for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items() if t.special
    }
    return frozenset(ids[:1]) & frozenset(special)


def stop_ids(tokenizer, model=None) -> frozenset[int]:
    """Token ids that end a generation: the generation config's and the tokenizer's EOS, and the
    chat template's end-of-turn token (``end_of_turn_ids``)."""
    ids: set[int] = set()
    gc = getattr(model, "generation_config", None)
    for v in (getattr(gc, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(v, int):
            ids.add(v)
        elif v:
            ids.update(int(x) for x in v)
    return frozenset(ids) | end_of_turn_ids(tokenizer)


def cut(tokens: Sequence[int], stop: frozenset[int] | set[int]) -> list[int]:
    """``tokens`` up to (excluding) the first stop token."""
    tokens = list(tokens)
    return tokens[: next((i for i, t in enumerate(tokens) if t in stop), len(tokens))]


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen: ``temperature`` 0 is greedy (argmax); else sampled from
    softmax(logits / temperature), first restricted to the ``top_k`` most likely tokens (0: all)
    and then to the smallest set of mass ``top_p`` (1: all)."""

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0

    def generator(self) -> torch.Generator:
        return torch.Generator(device="cpu").manual_seed(self.seed)


def _filtered(scores: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """``scores`` with the tokens outside top-k / top-p set to -inf (as transformers' warpers)."""
    if top_k:
        kth = torch.topk(scores, min(top_k, scores.shape[-1]))[0][..., -1, None]
        scores = scores.masked_fill(scores < kth, -float("inf"))
    if top_p < 1.0:
        srt, idx = torch.sort(scores, descending=False)
        drop = srt.softmax(dim=-1).cumsum(dim=-1) <= (1 - top_p)
        drop[..., -1:] = False  # keep at least one token
        scores = scores.masked_fill(drop.scatter(1, idx, drop), -float("inf"))
    return scores


def choose(
    logits: torch.Tensor,
    sampling: Sampling,
    generator: torch.Generator | None = None,
    greedy_rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """Next tokens [B] from float32 ``logits [B, V]``: argmax at temperature 0 (on the logits'
    device), else sampled on the host with ``generator``; ``greedy_rows [B]`` take the argmax
    whatever the temperature (every row draws, so the random stream does not depend on them)."""
    if sampling.temperature <= 0:
        return logits.argmax(-1)
    scores = _filtered(logits / sampling.temperature, sampling.top_k, sampling.top_p)
    probs = torch.softmax(scores, dim=-1)  # [B, V] the sampling distribution
    nxt = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1)
    if greedy_rows is not None:
        nxt = torch.where(greedy_rows, logits.argmax(-1).cpu(), nxt)
    return nxt


def decode(
    step: Callable[[torch.Tensor], torch.Tensor],
    logits: torch.Tensor,
    max_new_tokens: int,
    pick: Callable[[torch.Tensor], torch.Tensor],
    stop: frozenset[int] | None = None,
    pad_id: int = 0,
    keep_logits: bool = False,
    until: Callable[[torch.Tensor], bool] | None = None,
    drop: Callable[[torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The generation loop: ``pick(logits)`` chooses each row's token, ``step(tokens [B])`` feeds
    them and returns the next logits [B, V]. With ``stop``, a finished row's later tokens are
    ``pad_id`` and the loop ends when every row has stopped (one host sync per step); without it
    the loop never waits for the device. ``until(tokens [B, t])`` may end it too. Returns tokens
    [B, T] and, with ``keep_logits``, the logits each token was chosen from [B, T, V].

    ``drop(keep [b] bool)`` (with ``stop``; not with ``keep_logits`` or ``until``): stopped rows
    leave the batch -- once they are an eighth of the rows ``step`` computes, ``drop`` is told
    which rows stay (the caller cuts its cache, mask and positions to them) and ``step`` then
    takes and returns only those. The tokens are the same as without it; only the batch a row
    shares shrinks, so its float32 logits may round differently."""
    if drop is not None:
        if stop is None or keep_logits or until is not None:
            raise ValueError("decode: drop needs stop, and neither keep_logits nor until")
        box = [logits]
        del logits  # no name here holds the first logits while the loop runs
        return _decode_dropping(step, box.pop(), max_new_tokens, pick, stop, pad_id, drop), None
    toks, kept = [], []
    finished: torch.Tensor | None = None  # with stop: the rows that have stopped, and the stop ids
    stop_t: torch.Tensor | None = None
    for t in range(max_new_tokens):
        nxt = pick(logits)
        if stop is not None:
            if finished is None:
                finished = torch.zeros(nxt.shape[0], dtype=torch.bool, device=nxt.device)
                stop_t = torch.tensor(sorted(stop), device=nxt.device)
            nxt = torch.where(finished, torch.full_like(nxt, pad_id), nxt)
        toks.append(nxt)
        if keep_logits:
            kept.append(logits)
        if finished is not None and stop_t is not None:  # set above whenever stop is given
            finished |= torch.isin(nxt, stop_t)
            if bool(finished.all()):
                break
        if (until is not None and until(torch.stack(toks, 1))) or t + 1 == max_new_tokens:
            break
        logits = step(nxt)
    return torch.stack(toks, 1), (torch.stack(kept, 1) if keep_logits else None)


def _decode_dropping(step, logits, max_new_tokens, pick, stop, pad_id, drop) -> torch.Tensor:
    """``decode`` with ``drop``: tokens [B, T]."""
    dev = logits.device
    out = torch.full((logits.shape[0], max(max_new_tokens, 0)), pad_id, dtype=torch.long, device=dev)
    live = torch.arange(logits.shape[0], device=dev)  # the batch rows step computes
    done = torch.zeros(logits.shape[0], dtype=torch.bool, device=dev)  # of those, the stopped
    stop_t = torch.tensor(sorted(stop), device=dev)
    for t in range(max_new_tokens):
        nxt = torch.where(done, torch.full_like(done, pad_id, dtype=torch.long), pick(logits))
        out[live, t] = nxt
        done |= torch.isin(nxt, stop_t)
        n_done = int(done.sum())  # the one host sync of the step
        if n_done == len(live) or t + 1 == max_new_tokens:
            return out[:, : t + 1]
        if n_done * 8 >= len(live):
            keep = ~done
            drop(keep)
            live, nxt, done = live[keep], nxt[keep], done[keep]
        logits = step(nxt)
    return out[:, :0]


@dataclass
class Generated:
    tokens: torch.Tensor  # [B, T] (host), B = len(prompts) * repeat, rows of a prompt together
    logits: torch.Tensor | None  # [B, T, V] float32 raw logits (temperature 1), with keep_logits
    stop: frozenset[int]


def generate(
    lm,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    sampling: Sampling = Sampling(),
    repeat: int = 1,
    greedy_first: bool = False,
    keep_logits: bool = False,
    until: Callable[[torch.Tensor], bool] | None = None,
) -> Generated:
    """Generate from token-id ``prompts`` with a loaded model: each prompt's rows (``repeat``
    of them; with ``greedy_first`` its first row greedy, the others by ``sampling``) decode
    together until the stop rule (``stop_ids``) ends every row, ``until`` says so, or
    ``max_new_tokens``."""
    tok, model = lm.tokenizer, lm.model
    stop = stop_ids(tok, model)
    with torch.no_grad():
        cache, logits, mask = _prefill(model, prompts, lm.device)
        if repeat > 1:
            cache.batch_repeat_interleave(repeat)
            logits, mask = logits.repeat_interleave(repeat, 0), mask.repeat_interleave(repeat, 0)
        B = logits.shape[0]
        greedy_rows = (torch.arange(B) % repeat == 0) if greedy_first else None
        gen = sampling.generator()
        state = {"mask": mask}

        def step(nxt: torch.Tensor) -> torch.Tensor:
            m = state["mask"] = torch.cat([state["mask"], state["mask"].new_ones((B, 1))], dim=1)
            out = model(
                input_ids=nxt[:, None].to(lm.device),
                attention_mask=m,
                position_ids=m.sum(-1, keepdim=True) - 1,
                use_cache=True,
                **cache_arg(model, cache),
            )
            check_cache(cache, m.shape[1], "generation step")
            return out.logits[:, -1].float()

        toks, kept = decode(
            step,
            logits,
            max_new_tokens,
            lambda lg: choose(lg, sampling, gen, greedy_rows).cpu(),
            stop=stop,
            pad_id=tok.pad_token_id if tok.pad_token_id is not None else 0,
            keep_logits=keep_logits,
            until=until,
        )
    return Generated(toks, kept, stop)


def _prefill(model, prompts: Sequence[Sequence[int]], device):
    """Each prompt through the model alone; (one cache [P, heads, W, head_dim] per layer, each
    prompt right-aligned, pad slots zeroed; its last logits [P, V] float32; the mask [P, W])."""
    from transformers import DynamicCache

    caches, last = [], []
    for ids in prompts:
        cache = DynamicCache()  # full layers whatever the config says (no sliding truncation)
        out = model(
            input_ids=torch.tensor([list(ids)], device=device),
            use_cache=True,
            **cache_arg(model, cache),
        )
        check_cache(output_cache(out), len(ids), "prefill")
        caches.append(output_cache(out))
        last.append(out.logits[:, -1].float())
    lens = [len(p) for p in prompts]
    width = max(lens)
    mask = torch.tensor([[0] * (width - n) + [1] * n for n in lens], device=device)
    merged = caches[0]
    if len(caches) > 1 or lens[0] != width:
        for i, layer in enumerate(merged.layers):
            parts = [c.layers[i] for c in caches]
            layer.keys = torch.cat([_left_pad(p.keys, width) for p in parts])
            layer.values = torch.cat([_left_pad(p.values, width) for p in parts])
    return merged, torch.cat(last), mask


def _left_pad(x: torch.Tensor, width: int) -> torch.Tensor:
    """[1, heads, n, head_dim] -> [1, heads, width, head_dim], zeros in front."""
    return torch.nn.functional.pad(x, (0, 0, width - x.shape[2], 0))
