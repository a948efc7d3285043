"""A unit's inputs and the strings its model reads: plain data and string building, no torch.

``UnitSpec`` / ``UnitInput`` (what a worker receives), ``unit_texts`` (what an estimator reads)
and ``unit_prompts`` (the exact prompts, in the engine's order) live here, apart from ``units``
(the computation), so that planning a run and ``ctxprior runs prompts`` import neither torch nor
transformers (a raw-format run's prompts print in well under a second).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from .prompts import PromptFormat

RAW = PromptFormat()

# every table a unit may write, in the order they are written
SCORE_TABLES = (
    "persuasion",
    "reliance",
    "susceptibility",
    "prior_topk",
    "prompt_topk",
    "generation",
    "susceptibility_layer",
    "persuasion_layer",
)


@dataclass
class UnitSpec:
    unit_id: int
    relation_id: int
    query_form_id: int
    shard: int
    fact_ids: tuple[int, ...]


@dataclass
class UnitInput:
    spec: UnitSpec
    run_id: int
    template: str
    query_type: str
    # (fact_id, entity name, answer name or None)
    facts: list[tuple[int, str, str | None]]
    # (context_id, text, stated answer name or None)
    contexts: list[tuple[int, str, str | None]]
    # what joins each context to the query (the dataset's ``separator``): context + separator + query
    separator: str
    # the dataset's declared answer space (schema/answer_labels.py; empty: none declared)
    answer_labels: tuple[str, ...] = ()

    @property
    def n_prompts(self) -> int:
        return len(self.facts) * (len(self.contexts) + 1)

    @property
    def n_pairs(self) -> int:
        """The (fact, context) prompts: those a run generates after."""
        return len(self.facts) * len(self.contexts)


@dataclass
class UnitResult:
    spec: UnitSpec
    tables: dict[str, pa.Table] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    worker: str = ""
    n_prompts: int = 0
    engine: dict = field(default_factory=dict)  # device, batch_size, oom_splits, forward_calls, tokens


@dataclass(frozen=True)
class UnitTexts:
    """What a unit gives an estimator: the context texts and answers, one query text per fact,
    each fact's original answer, the query type and the dataset's declared answer space (empty:
    none)."""

    contexts: Sequence[str]
    context_answers: Sequence[str | None]
    queries: Sequence[str]
    answers: Sequence[str | None]
    query_type: str
    answer_labels: Sequence[str] = ()


def fill(template: str, entity: str, answer: str | None) -> str:
    return template.replace("{entity}", entity).replace("{answer}", answer or "")


def unit_texts(inp: UnitInput) -> UnitTexts:
    """What the estimator reads of a unit: each context followed by the dataset's separator (the
    prompt is ``context + separator + query``, rendered by the run's ``PromptFormat``), each fact's
    query and answer."""
    return UnitTexts(
        [t + inp.separator for _, t, _ in inp.contexts],
        [a for _, _, a in inp.contexts],
        [fill(inp.template, e, a) for _, e, a in inp.facts],
        [a for _, _, a in inp.facts],
        inp.query_type,
        inp.answer_labels,
    )


def first_token_texts(
    contexts: Sequence[str], queries: Sequence[str], prompt: PromptFormat = RAW, with_prior: bool = True
) -> list[str]:
    """The prompts ``first_token`` scores, in its order: every context with every query (query-major),
    then each query alone."""
    texts = [prompt(c, q) for q in queries for c in contexts]
    return texts + [prompt.prior(q) for q in queries] if with_prior else texts


def unit_prompts(inp: UnitInput, fmt: PromptFormat) -> list[tuple[int, int | None, str]]:
    """Every prompt of a unit as (fact_id, context_id or None for the no-context prompt, text):
    the strings the estimators tokenize (``PromptFormat`` over ``unit_texts``), in
    ``first_token_texts``' order (``ctxprior runs prompts``)."""
    texts = unit_texts(inp)
    strings = first_token_texts(texts.contexts, texts.queries, fmt)
    keys = [(f, c) for f, _, _ in inp.facts for c, _, _ in inp.contexts] + [
        (f, None) for f, _, _ in inp.facts
    ]
    return [(f, c, t) for (f, c), t in zip(keys, strings)]
