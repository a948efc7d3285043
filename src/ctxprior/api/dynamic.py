"""``wh.dynamic``: the DynamicQA path: a sample of facts, sampled answers and their scores, the tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..dynamicqa.options import SCORE_DYNAMIC_OPTIONS
from ..storage.runs import sigterm_interrupts as _sigterm_interrupts
from .core import Noun, _stderr
from .typecheck import checked_methods, declared_keywords


@checked_methods
class Dynamic(Noun):
    """``wh.dynamic``: DynamicQA facts scored by sampled answers, semantic entropy and Coherent
    Persuasion (see [DynamicQA](dynamicqa.md))."""

    name = "dynamic"

    def sample(
        self,
        dataset: str = "dynamicqa",
        partitions: str | Sequence[str] | None = None,
        limit: int | None = None,
    ) -> dict:
        """A sample of DynamicQA facts for :meth:`score` (the first ``limit`` facts per partition,
        their original and counter-memory snippets as contexts); an identical existing sample is
        reused. Returns ``{"sample_id", "facts", "contexts"}`` (``ctxprior sample-dynamic``)."""
        from ..dynamicqa.options import SAMPLE_DYNAMIC_OPTIONS
        from ..dynamicqa.sample import make_sample, parse_partitions, sample_counts
        from ..options import check_options

        check_options(SAMPLE_DYNAMIC_OPTIONS, {"dataset": dataset, "limit": limit})
        partitions = parse_partitions(partitions)
        with self._wh.connect(write=True) as store:
            sid = make_sample(store, dataset, partitions, limit)
            n_facts, n_contexts = sample_counts(store, sid)
        return {"sample_id": sid, "facts": n_facts, "contexts": n_contexts}

    @declared_keywords(SCORE_DYNAMIC_OPTIONS)
    def score(
        self,
        *,
        partitions: str | Sequence[str] | None = None,
        progress: bool = True,
        log: Callable[[str], None] | None = _stderr,
        **options: Any,
    ):
        """Sampled answers, semantic entropy and Coherent Persuasion for DynamicQA facts
        (``ctxprior score-dynamic``; options as there). Rerunning the same call continues an
        unfinished run (``resume=RUN`` continues run RUN with its stored options); Ctrl-C or
        ``ctxprior runs cancel`` keeps the finished facts. Returns a ``DynamicRun``: ``id``,
        ``status``, facts as ``units_done`` / ``units_total``, ``mean_cp``, ``mean_se_with_context``."""
        from ..dynamicqa.config import DynamicConfig
        from ..dynamicqa.run import run_dynamic
        from ..dynamicqa.sample import parse_partitions
        from ..options import by_name

        resume = options.pop("resume")
        cfg = DynamicConfig(partitions=parse_partitions(partitions), **options)  # validate's first check
        cfg.validate()
        by_name(SCORE_DYNAMIC_OPTIONS)["resume"].check(resume)
        with self._wh.connect(write=True, brief=True) as store, _sigterm_interrupts():
            return run_dynamic(
                store,
                None if resume is not None else cfg,
                resume=resume,
                progress=progress,
                echo=log or (lambda m: None),
            )

    def analyze(self, runs: Sequence[int] | None = None) -> str:
        """DynamicQA Tables 1-3 analogues per run (default: every dynamic run with scores), stored in
        ``dynamicqa_summary`` / ``dynamicqa_regression``; returns the printed text
        (``ctxprior analyze-dynamic``)."""
        from ..dynamicqa.analyses import analyze_dynamicqa
        from ..dynamicqa.options import ANALYZE_DYNAMIC_OPTIONS
        from ..options import check_options

        check_options(ANALYZE_DYNAMIC_OPTIONS, {"runs": tuple(runs or ())})

        with self._wh.connect(write=True, threads=1) as store:  # stored numbers: one thread (one_thread)
            return analyze_dynamicqa(store, list(runs) if runs else None)
