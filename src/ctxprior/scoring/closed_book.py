"""Closed-book answers for `ctxprior covariates known` (``covariates/known.py`` judges them): each
query q(e) asked with no context, in the run's prompt format, answered

- greedily, one answer per prompt (``closed_book_answers``: ``Engine.greedy``), or
- by sampling, n answers per prompt (``sampled_answers``: ``scoring.generate``, the one
  generation path, at a temperature over the full vocabulary, each prompt's n rows decoded
  together, ``batch`` prompts at a time, seeded per batch)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from .engine import Engine
from .models import LoadedModel
from .prompts import format_for
from .texts import fill


def _texts(lm: LoadedModel, prompts: Sequence[tuple], config: dict) -> list[str]:
    """The closed-book prompt of each (query_form_id, key, template, entity, answer), in the
    run's prompt format (``config``: the run's stored options)."""
    fmt = format_for(
        lm.tokenizer,
        SimpleNamespace(
            prompt_format=config.get("prompt_format", "raw"), prompt_template=config.get("prompt_template")
        ),
    )
    return [fmt.prior(fill(t, e, a)) for _, _, t, e, a in prompts]


def closed_book_answers(
    lm: LoadedModel,
    prompts: Sequence[tuple],
    config: dict,
    *,
    max_new_tokens: int = 16,
    batch_size: int | None = None,
    chunk: int = 256,
    progress: bool = True,
) -> list[str]:
    """The greedy answer to each (query_form_id, fact_id, template, entity, answer) prompt, in
    order; ``config`` is the run's stored options (its prompt format)."""
    from tqdm.auto import tqdm

    engine = Engine(lm, batch_size=batch_size)
    texts = _texts(lm, prompts, config)
    out: list[str] = []
    bar = tqdm(total=len(texts), desc="closed-book answers", unit="q", disable=None if progress else True)
    for i in range(0, len(texts), chunk):
        part = texts[i : i + chunk]
        out += engine.greedy(engine.encode(part), max_new_tokens)
        bar.update(len(part))
    bar.close()
    return out


def batch_seed(seed: int, first: int) -> int:
    """The seed of the batch whose first prompt is number ``first``: independent streams per batch
    (numpy's SeedSequence of (seed, first)), so a batch's samples do not depend on the others."""
    import numpy as np

    return int(np.random.SeedSequence([seed, first]).generate_state(1, np.uint64)[0] >> 1)


def sampled_answers(
    lm: LoadedModel,
    prompts: Sequence[tuple],
    config: dict,
    *,
    n: int,
    temperature: float,
    seed: int,
    max_new_tokens: int = 16,
    batch: int = 16,
    progress: bool = True,
) -> list[list[str]]:
    """``n`` answers sampled at ``temperature`` to each (query_form_id, key, template, entity,
    answer) prompt, in order, each cut at the stop rule (``generate.stop_ids``). The same seed,
    ``batch`` and model weights give the same samples on the same device."""
    from tqdm.auto import tqdm

    from .generate import Sampling, cut, generate

    tok = lm.tokenizer
    ids = Engine(lm).encode(_texts(lm, prompts, config))
    out: list[list[str]] = []
    bar = tqdm(total=len(ids), desc="closed-book samples", unit="q", disable=None if progress else True)
    for i in range(0, len(ids), batch):
        part = ids[i : i + batch]
        g = generate(
            lm,
            part,
            max_new_tokens,
            Sampling(temperature=temperature, seed=batch_seed(seed, i)),
            repeat=n,
        )
        rows = [tok.decode(cut(r, g.stop), skip_special_tokens=True) for r in g.tokens.tolist()]
        out += [rows[j * n : (j + 1) * n] for j in range(len(part))]
        bar.update(len(part))
    bar.close()
    return out
