"""``wh.samples``: draw the paper's sample design from a dataset, and list the samples."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .core import Noun
from .typecheck import checked_methods


@checked_methods
class Samples(Noun):
    """``wh.samples``: the samples drawn from the datasets (what ``wh.runs.score`` scores)."""

    name = "samples"

    def list(self) -> pd.DataFrame:
        """One row per sample: id, dataset, design, seed, relations, entities, contexts.

        Command: ``ctxprior sample``.
        """
        from ..sqlfiles import read_sql

        return self._wh.sql(read_sql("ctxprior.ingest", "sql/samples.sql"))

    def draw(
        self,
        dataset: str,
        *,
        entities: int | None = None,
        contexts: int | None = None,
        context_types: Sequence[str] = ("base", "assertive", "negation"),
        seed: int = 11,
        relations: Sequence[str] | None = None,
        design: str = "paper",
        answer_sampling: str = "authors",
        templates_per_type: int | None = None,
        fakes: str = "random",
        real_entities: str = "fixed",
        items: int | None = None,
    ) -> int:
        """Draw the paper's sample design (App. C) from ``dataset``; returns the sample id.

        ``design="fixed"``: every item of a fixed-context dataset (``ingest("table", ...)`` or a
        preset) with exactly its own passages, the first ``items`` (default all); ``entities``,
        ``contexts`` and the other design options do not apply to it.

        ``fakes``: ``random`` (the authors' code: a seeded random choice among the relation's
        fakes) or ``paired`` (the fakes at the positions of the selected real entities, the same
        for every seed). ``real_entities``: ``fixed`` (top by degree, else one random draw that
        does not depend on ``seed``) or ``per-seed`` (without degrees, a new draw per seed); see
        [Departures](departures.md#dataset-building-and-sampling-du-et-al-2024).

        ``answer_sampling``: ``authors`` (the paper's code: the full answer list, without
        replacement) or ``distinct`` (uniform over distinct answers); see
        [Datasets and samples](datasets.md#sampling-answers-and-namesakes). ``design="all"``
        renders every template once per entity (the case studies; ``templates_per_type`` keeps a
        seeded choice of that many templates per context type). ``entities`` / ``contexts`` default
        to the paper design's 100 / 600; with ``design="all"``, every entity.

        >>> sid = ctxprior.open("demo.duckdb", write=True).samples.draw("demo", relations=["capital"], entities=2, contexts=6)

        Command: ``ctxprior sample``.
        """
        from ..ingest.sampling import check_sample, draw_sample

        check_sample(
            dataset=dataset,
            entities=entities,
            contexts=contexts,
            context_types=context_types,
            seed=seed,
            design=design,
            answer_sampling=answer_sampling,
            templates_per_type=templates_per_type,
            fakes=fakes,
            real_entities=real_entities,
            relations=tuple(relations or ()),
            items=items,
        )
        if design == "fixed":
            from ..ingest.fixed_sample import draw_fixed_sample

            with self._wh.connect(write=True) as store:
                return draw_fixed_sample(store, dataset, items, seed)
        with self._wh.connect(write=True) as store:
            return draw_sample(
                store,
                dataset,
                relations=relations or None,
                n_entities=entities,
                n_contexts=contexts,
                context_types=list(context_types),
                seed=seed,
                design=design,
                answer_sampling=answer_sampling,
                templates_per_type=templates_per_type,
                fakes=fakes,
                real_entities=real_entities,
            )
