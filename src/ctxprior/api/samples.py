"""``wh.samples``: draw the paper's sample design from a dataset, and list the samples."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sampling.draw import SAMPLE_OPTIONS
from .core import Noun
from .typecheck import checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


@checked_methods
class Samples(Noun):
    """``wh.samples``: the samples drawn from the datasets (what ``wh.runs.score`` scores)."""

    name = "samples"

    def list(self) -> pd.DataFrame:
        """One row per sample: id, dataset, design, seed, relations, entities, contexts.

        Command: ``ctxprior sample``.
        """
        from ..sqlfiles import read_sql

        return self._wh.sql(read_sql("ctxprior.sampling", "sql/samples.sql"))

    @declared_keywords(SAMPLE_OPTIONS)
    def draw(self, dataset: str, **options: Any) -> int:
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
        from ..sampling.draw import check_sample, draw_sample

        check_sample(dataset=dataset, **{**options, "relations": tuple(options["relations"] or ())})
        if options["design"] == "fixed":
            from ..sampling.fixed import draw_fixed_sample

            with self._wh.connect(write=True) as store:
                return draw_fixed_sample(store, dataset, options["items"], options["seed"])
        o = dict(options)
        with self._wh.connect(write=True) as store:
            return draw_sample(
                store,
                dataset,
                relations=o.pop("relations") or None,
                n_entities=o.pop("entities"),
                n_contexts=o.pop("contexts"),
                context_types=list(o.pop("context_types")),
                **o,
            )
