"""``wh.runs``: score a sample (a persuasion run), resume or cancel any run, list the runs."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..options import check_options
from ..scoring.options import CANCEL_OPTIONS, RESUME_OPTIONS, SCORE_OPTIONS
from ..storage.runs import sigterm_interrupts as _sigterm_interrupts
from .core import Noun, Run, _per_layer, _stderr
from .typecheck import checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


def score_options() -> tuple:
    """The declared options of :meth:`Runs.score` (``ctxprior.scoring.options.Option``: name,
    flag, help, default, type, choices, validity), from which its keywords and ``ctxprior score``'s
    options are made."""
    return SCORE_OPTIONS


@checked_methods
class Runs(Noun):
    """``wh.runs``: the runs of the warehouse (persuasion runs from :meth:`score`, dynamic runs from
    ``wh.dynamic.score``)."""

    name = "runs"

    def list(self) -> pd.DataFrame:
        """One row per run: kind, model, status, units done/total, prompts/s, first error."""
        import pandas as pd

        return pd.DataFrame(self.records())

    def records(self) -> builtins.list[dict[str, Any]]:
        """The rows of :meth:`list` as dicts, without pandas (``None`` where a value is missing).

        Command: ``ctxprior runs``."""
        from ..storage.runs import list_runs

        with self._wh.connect() as store:
            return list_runs(store)

    def most_susceptible(self, run: int, n: int = 5, least: bool = False) -> pd.DataFrame:
        """The ``n`` (entity, query form) rows of a run with the highest χ (``least=True``: lowest)."""
        from ..scoring.options import MOST_SUSCEPTIBLE_OPTIONS
        from ..sqlfiles import body, read_sql

        check_options(MOST_SUSCEPTIBLE_OPTIONS, {"run": run, "n": n})
        top = body(read_sql("ctxprior.analyses", "sql/most_susceptible.sql"))
        return self._wh.sql(top.format(direction="ASC" if least else "DESC"), [int(run), int(n)])

    def prompts(self, run: int, limit: int | None = None) -> pd.DataFrame:
        """The exact strings persuasion run ``run``'s model read, one row per prompt (``limit``:
        the first N), rebuilt by the code that built the engine's inputs: run_id, unit_id,
        query_form_id, fact_id, context_id (NULL for the prompt without context), context_type
        ('none' there) and prompt; the first four join the score rows.

        Command: ``ctxprior runs prompts``."""
        from ..scoring.options import PROMPTS_OPTIONS
        from ..scoring.runs.prompts import run_prompts

        check_options(PROMPTS_OPTIONS, {"run": run, "limit": limit})
        with self._wh.connect() as store:
            return run_prompts(store, int(run), None if limit is None else int(limit))

    @declared_keywords(SCORE_OPTIONS, model=Any, per_layer=str | bool | None)
    def score(
        self,
        sample: int | None = None,
        *,
        progress: bool = True,
        log: Callable[[str], None] | None = _stderr,
        **options: Any,
    ) -> Run:
        """Score a sample: ψ per (query form, entity, context), χ per (query form, entity).

        ``model``: an alias (``smollm2-135m``), a Hugging Face id or folder, a ``.gguf`` file, or a
        model already loaded with :func:`ctxprior.load_model`. Rerunning the same call continues an
        unfinished run (``resume=RUN`` names one; ``fresh=True`` starts anew). Ctrl-C (or
        ``ctxprior runs cancel``) keeps the finished units. ``executor="ray"`` computes units on
        Ray workers. ``prompt_format="chat"`` wraps each prompt in the model's chat template
        ([Chat models](scoring.md#chat-models)); ``per_layer="chi"`` (or True) / ``"psi"`` adds the
        logit-lens scores of every layer ([Per-layer scores](scoring.md#per-layer-scores)).
        The keywords after ``sample`` are the options of ``ctxprior score``
        ([Scoring](scoring.md#options)), made from their one declaration
        (``SCORE_OPTIONS`` in ``scoring/options.py``, :func:`score_options`) with its defaults, and
        checked alike: a bad value is the command's one-line ``UserError``, raised before anything
        is written.
        """
        from ..scoring.executors import executor_factory
        from ..scoring.models import LoadedModel
        from ..scoring.options import ScoreRequest
        from ..scoring.runs.score import score_sample

        if sample is None and options["resume"] is None:
            raise UserError("--sample: give the sample to score (see `ctxprior info`), or --resume RUN")
        options["per_layer"] = _per_layer(options["per_layer"])
        check_options(SCORE_OPTIONS, {"sample": sample, **options})  # the CLI's checks, first
        model = options["model"]
        lm = model if isinstance(model, LoadedModel) else None
        request = ScoreRequest.of(**{**options, "sample": sample, "model": lm.model_id if lm else model})
        if request.resume is not None:
            from ..scoring.runs.manage import stored_device_dtype
            from ..storage.runs import refuse_if_driven

            with self._wh.connect() as store:
                refuse_if_driven(store, request.resume)  # before the model loads: one driver per run
                if request.device == "auto" and request.dtype == "auto":
                    device, dtype = stored_device_dtype(store, request.resume)
                    request = request.replace(device=device, dtype=dtype)
        factory = executor_factory(self._wh.path, request)
        with self._wh.connect(write=True, brief=True) as store, _sigterm_interrupts():
            s = score_sample(
                store,
                request,
                lm=lm,
                executor_factory=factory,
                progress=progress,
                log=log or (lambda m: None),
            )
        return Run.of(s)

    @declared_keywords(RESUME_OPTIONS)
    def resume(
        self,
        run: int,
        *,
        progress: bool = True,
        log: Callable[[str], None] | None = _stderr,
        **options: Any,
    ) -> Run:
        """Continue run ``run`` of any kind (persuasion or dynamic) with its stored model and options,
        after a crash, kill or cancel; ends with exactly the rows of an uninterrupted run
        (``ctxprior runs resume``). The executor options (``RESUME_OPTIONS`` in
        ``scoring/options.py``) apply to persuasion runs (a dynamic run computes in this process).
        Returns a :class:`Run` for either kind (for a dynamic run its units are facts;
        ``wh.dynamic.score(resume=run)`` returns the ``DynamicRun`` with its means)."""
        from ..storage.runs import refuse_if_driven, run_kind

        check_options(RESUME_OPTIONS, {"run": run, **options})  # before the warehouse is opened
        with self._wh.connect() as store:
            kind = run_kind(store, run)
            refuse_if_driven(store, run)  # one driver per run: a live one is never joined by a second
        if kind == "dynamic":
            if options["executor"] != "local":
                raise UserError(
                    f"--executor {options['executor']}: run {run} is a dynamic run; it resumes in "
                    "this process (--executor local)"
                )
            return Run.of(self._wh.dynamic.score(resume=run, progress=progress, log=log))
        return self.score(resume=run, progress=progress, log=log, **options)

    @declared_keywords(CANCEL_OPTIONS)
    def cancel(
        self, run: int, *, log: Callable[[str], None] | None = _stderr, **options: Any
    ) -> tuple[str | None, str]:
        """Stop a running run of any kind (SIGTERM to its driver on this host, only when that process
        is proven to be the run's driver, never to a PID an imported row merely names; finished units
        are kept) and mark it cancelled; :meth:`resume` continues it. Returns (status before, status
        after): a run that was already done or cancelled is left as it is (what ``ctxprior runs
        cancel`` prints).

        Command: ``ctxprior runs cancel``."""
        check_options(CANCEL_OPTIONS, {"run": run, **options})
        self._wh._need_write()
        runs = self.list()
        before = runs.set_index("run_id")["status"].get(run) if len(runs) else None
        if before in ("done", "cancelled"):
            return before, before
        return before, self._stop(run, timeout=options["timeout"], log=log)

    def _stop(self, run: int, timeout: float, log: Callable[[str], None] | None = _stderr) -> str:
        """Cancel ``run`` (:meth:`cancel`'s work); returns its status afterwards."""
        from ..storage.runs import cancel_run

        if not self._wh.writable:
            raise UserError(
                f"{self._wh.path} was opened read-only; use ctxprior.open({self._wh.path!r}, write=True)"
            )
        return cancel_run(self._wh.path, run, timeout=timeout, wait=self._wh.wait, log=log)
