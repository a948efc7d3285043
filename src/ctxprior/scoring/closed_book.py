"""Closed-book greedy answers: each query q(e) asked with no context, in the run's prompt format,
answered greedily by ``Engine.greedy`` (`ctxprior covariates known`; ``covariates/known.py``
judges them)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from .engine import Engine
from .models import LoadedModel
from .prompts import format_for
from .units import fill


def closed_book_answers(
    lm: LoadedModel,
    prompts: Sequence[tuple[int, int, str, str, str | None]],
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

    fmt = format_for(
        lm.tokenizer,
        SimpleNamespace(
            prompt_format=config.get("prompt_format", "raw"), prompt_template=config.get("prompt_template")
        ),
    )
    engine = Engine(lm, batch_size=batch_size)
    texts = [fmt.prior(fill(t, e, a)) for _, _, t, e, a in prompts]
    out: list[str] = []
    bar = tqdm(total=len(texts), desc="closed-book answers", unit="q", disable=None if progress else True)
    for i in range(0, len(texts), chunk):
        part = texts[i : i + chunk]
        out += engine.greedy(engine.encode(part), max_new_tokens)
        bar.update(len(part))
    bar.close()
    return out
