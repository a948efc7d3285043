"""``score_sample``: one scoring run from request to committed rows, as a list of named steps.

resolve (a ``--resume`` takes the run's stored options) -> validate (before anything is written)
-> load the model -> render the prompt format (chat: the template's rendering joins the options)
-> choose the shard size and find an unfinished identical run -> open the run
row -> skip the units already done -> an executor computes the rest -> each unit committed with
its ``run_unit`` row in one transaction (``record.write_unit``) -> close the run row.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ...errors import UserError
from ...sqlfiles import read_sql
from ...storage import runs
from ...storage.store import Store
from ..device import cpu_fallback_warning, describe_model, device_line
from ..estimators import answer_candidates, auto_estimator, score_estimators
from ..executors import Executor, LocalExecutor, ModelSpec
from ..models import LoadedModel
from ..options import AUTO_ESTIMATOR, SCORE_OPTIONS, ScoreConfig, ScoreRequest, check_options
from ..prompts import format_for
from ..texts import UnitInput, UnitSpec, unit_texts
from .plan import auto_shard_size, load_inputs, plan_units, sample_row
from .record import RUN_KIND, find_resumable, refresh_counts, run_identity, write_unit


@dataclass
class RunSummary:
    run_id: int
    status: str
    units_total: int
    units_done: int
    units_failed: int
    units_skipped: int
    prompts: int
    seconds: float
    resumed: bool = False
    errors: list[str] = field(default_factory=list)


@dataclass
class _Resolved:
    """What to score and how, as resolved from the request: a resumed run's stored options replace
    the caller's, the estimator ``auto`` and the prompt format become the run's."""

    sample_id: int | None
    model: str
    dtype: str
    quantization: str | None
    config: ScoreConfig
    resume: int | None = None
    resumed: bool = False
    identity: dict | None = None

    def sample(self) -> int:
        """The sample to score (given, or the resumed run's); a request without one is refused."""
        if self.sample_id is None:
            raise UserError("--sample: give the sample to score (see `ctxprior info`), or --resume RUN")
        return self.sample_id


def score_sample(
    store: Store,
    request: ScoreRequest,
    *,
    lm: LoadedModel | None = None,
    executor_factory: Callable[[LoadedModel, ScoreConfig, int | None], Executor] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> RunSummary:
    """Score a sample (or resume a run) and return a summary. See the module docstring.

    ``request``: the run's options (``ScoreRequest.of(sample=..., model=..., ...)``, the others at
    their declared defaults), read here by their declared names. ``lm``: an already-loaded model
    (tests, notebooks); otherwise ``request.model`` is loaded.
    """
    import time

    import torch

    log = log or (lambda m: print(m, file=sys.stderr))
    device, batch_size = request.device, request.batch_size
    req = _Resolved(request.sample, request.model, request.dtype, request.quantization, request.config)
    if request.resume is not None:
        finished = _resolve_resume(store, req, request.resume, log)
        if finished is not None:
            return finished
    dataset_id = _validate(store, req, batch_size)
    lm = lm or _load_or_describe(req, device, executor_factory)
    _resolve_prompt_format(req, lm)
    log(device_line(lm))
    if (warning := cpu_fallback_warning(lm.device)) is not None:
        log(warning)
    torch.manual_seed(request.seed)
    if req.resume is None:
        _choose_shards_and_run(store, req, lm, request.fresh, log)
    units = plan_units(store, req.sample(), req.config)
    run_id = _open_run(store, req, lm, units, dataset_id, request)
    done = {
        r[0]
        for r in store.query("SELECT unit_id FROM run_unit WHERE run_id = ? AND status = 'done'", [run_id])
    }
    inputs = load_inputs(store, req.sample(), run_id, [u for u in units if u.unit_id not in done])
    total_prompts = sum(i.n_prompts for i in inputs)
    log(
        f"run {run_id}: {len(units)} units ({len(done)} already done), {total_prompts} prompts to score "
        f"with {req.model} [{req.config.estimator}, {lm.device}, {lm.dtype}]"
    )
    executor = (executor_factory or (lambda m, c, b: LocalExecutor(m, c, batch_size=b)))(
        lm, req.config, batch_size
    )
    t0 = time.perf_counter()
    out = _execute(
        store, run_id, units, inputs, executor, _progress_bar(progress, total_prompts, run_id), log
    )
    if (line := collision_line(store, run_id)) is not None:
        log(line)
    return RunSummary(
        run_id,
        out.status,
        len(units),
        out.n_done + len(done),
        out.n_failed,
        len(done),
        total_prompts,
        time.perf_counter() - t0,
        resumed=req.resumed,
        errors=out.errors,
    )


def collision_line(store: Store, run_id: int) -> str | None:
    """One line when the run's estimator read some gold / context answer pairs as one answer
    (``reliance.collision``): how many, how their outcomes were decided, and the remedy."""
    n, decided, example = store.query(read_sql("ctxprior.scoring.runs", "sql/collisions.sql"), [run_id])[0]
    if not n:
        return None
    return (
        f"run {run_id}: {n} gold/context answer pairs share their first token (e.g. {example}); "
        f"{decided} outcomes with that token on top were decided from the two full answers "
        "(reliance.outcome_source = 'full-answer'), the other measures read the shared token: "
        "use --estimator answer-set for full-answer measures throughout"
    )


def _load_or_describe(req: _Resolved, device: str, executor_factory) -> LoadedModel:
    """The model, loaded here for the local executor; for workers that load it themselves (Ray),
    only its identity (revision, dtype, vocabulary), so the driver holds no weights and no GPU."""
    if executor_factory is None:
        return ModelSpec(req.model, device, req.dtype, req.quantization).load()
    return describe_model(
        req.model,
        device,
        req.dtype,
        req.quantization,
        worker_gpus=bool(getattr(executor_factory, "worker_gpus", False)),
    )


def _resolve_prompt_format(req: _Resolved, lm: LoadedModel) -> None:
    """Render the prompt format with the model's tokenizer (loaded alone when the driver holds no
    weights): chat without a template is a UserError; a new run stores the rendering and the
    template's sha256 in its options (its identity), a resumed run must render the same."""
    if req.config.prompt_format == "raw":
        req.config = replace(req.config, prompt_template=None, prompt_template_sha256=None)
        return
    tok = lm.tokenizer
    if tok is None:
        from transformers import AutoTokenizer

        from ..models import _locate

        tok = AutoTokenizer.from_pretrained(_locate(req.model)[0])
    fmt = format_for(tok, req.config)
    req.config = replace(req.config, prompt_template=fmt.template, prompt_template_sha256=fmt.template_sha256)


def _resolve_resume(store: Store, req: _Resolved, resume: int, log) -> RunSummary | None:
    """Take run ``resume``'s sample, model and options into ``req``; a finished run -> its summary."""
    row = store.query(read_sql("ctxprior.scoring.runs", "sql/run_row.sql"), [resume])
    if not row:
        raise UserError(f"--resume {resume}: no such run in {store.path}")
    _, kind, r_sample, status, cfg_json, _ = row[0]
    if kind != RUN_KIND:
        raise UserError(f"--resume {resume}: run {resume} is a {kind} run, not a persuasion scoring run")
    if req.sample_id is not None and r_sample != req.sample_id:
        raise UserError(f"--resume {resume}: run {resume} scores sample {r_sample}, not {req.sample_id}")
    ident = json.loads(cfg_json)["identity"]
    req.sample_id, req.identity, req.resume = r_sample, ident, resume
    req.model, req.dtype = ident["model"], ident["dtype"]
    req.quantization = None if ident["quantization"] == "none" else ident["quantization"]
    req.config = ScoreConfig.from_json_dict(ident["score"])
    if status == "done":
        log(f"run {resume} is already complete")
        n = store.scalar("SELECT count(*) FROM run_unit WHERE run_id = ? AND status = 'done'", [resume])
        return RunSummary(resume, "done", int(n), int(n), 0, int(n), 0, 0.0, resumed=True)
    req.resumed = True
    return None


def _validate(store: Store, req: _Resolved, batch_size: int | None) -> int:
    """Every option checked before anything is loaded or written; returns the sample's dataset id."""
    sample_id = req.sample()
    check_options(SCORE_OPTIONS, {**vars(req.config), "batch_size": batch_size})  # what a caller skipped
    if req.config.estimator == AUTO_ESTIMATOR:
        design = store.scalar("SELECT design FROM sample WHERE sample_id = ?", [sample_id]) or ""
        req.config = replace(req.config, estimator=auto_estimator(design))
    config = req.config
    known = score_estimators()
    if config.per_layer and not known[config.estimator].per_layer:
        able = " or ".join(n for n, e in known.items() if e.per_layer)
        raise UserError(f"--per-layer: needs --estimator {able} (not {config.estimator})")
    _, dataset_id = sample_row(store, sample_id)
    specs = plan_units(store, sample_id, replace(config, shard_size=10**9))
    if not specs:
        raise UserError(
            f"sample {sample_id} has nothing to score for query types "
            f"{','.join(config.query_types)} (no facts, contexts or query forms)"
        )
    if config.estimator == "answer-set":
        _refuse_degenerate(store, sample_id, specs)
    return dataset_id


def _refuse_degenerate(store: Store, sample_id: int, specs: list[UnitSpec]) -> None:
    """UserError (one line, with the count) when a query would be scored over fewer than two
    candidate answers: every answer-set measure of it would be 0 by construction, not a finding."""
    bad: dict[tuple[int, int], tuple[str, list[str]]] = {}
    for inp in load_inputs(store, sample_id, 0, specs):
        texts = unit_texts(inp)
        for (fact_id, _, answer), query in zip(inp.facts, texts.queries):
            cands = answer_candidates(texts, answer)
            if len(cands) < 2:
                bad[fact_id, inp.spec.query_form_id] = (query, cands)
    if bad:
        (fact_id, _), (query, cands) = next(iter(bad.items()))
        shown = query if len(query) <= 60 else query[:57] + "..."
        raise UserError(
            f"sample {sample_id}: {len(bad)} queries have fewer than two candidate answers under "
            f"--estimator answer-set (e.g. fact {fact_id}, {shown!r}: {cands}); declare the dataset's "
            "answer space (re-ingest it: `ingest druid` declares True / False / None, `ingest table "
            "--answer-label LABEL ...` yours) or score with --estimator first-token"
        )


def _choose_shards_and_run(store: Store, req: _Resolved, lm: LoadedModel, fresh: bool, log) -> None:
    """A new request: fix the shard size (``config.shard_size``, else ``auto_shard_size``), then
    continue the newest unfinished run with the same identity unless ``fresh``."""
    if req.config.shard_size is None:
        n_ctx = store.scalar(read_sql("ctxprior.scoring.runs", "sql/most_contexts.sql"), [req.sample_id])
        per_layer = bool(req.config.per_layer)
        size = auto_shard_size(lm, max(n_ctx or 1, 1), req.config.estimator, per_layer=per_layer)
        req.config = replace(req.config, shard_size=size)
    req.identity = run_identity(req.model, req.dtype, req.quantization, req.config)
    if not fresh:
        found = find_resumable(store, req.sample(), req.identity)
        if found is not None:
            req.resume, req.resumed = found, True
            log(f"resuming unfinished run {found} (same sample, model and options; --fresh starts a new one)")


def _open_run(
    store: Store,
    req: _Resolved,
    lm: LoadedModel,
    units: list[UnitSpec],
    dataset_id: int,
    request: ScoreRequest,
) -> int:
    """Insert the run row (status running), or mark the resumed run running again; returns its id."""
    device, batch_size, seed = request.device, request.batch_size, request.seed
    cfg_json = json.dumps(
        {
            "identity": req.identity,
            "device": device,
            "batch_size": batch_size or "auto",
            "seed": seed,
            "shard_size": req.config.shard_size,
        },
        sort_keys=True,
    )
    with store.transaction():
        if req.resume is None:
            return runs.start_run(
                store,
                RUN_KIND,
                sample_id=req.sample_id,
                dataset_id=dataset_id,
                model=req.model,
                model_revision=lm.revision,
                dtype=lm.dtype,
                quantization=lm.quantization or "none",
                device=lm.device,
                estimator=req.config.estimator,
                batch_size=batch_size,
                seed=seed,
                config_json=cfg_json,
                units_total=len(units),
            )
        run_id = req.resume
        old_rev = store.scalar("SELECT model_revision FROM run WHERE run_id = ?", [run_id])
        if old_rev and lm.revision and old_rev != lm.revision:
            raise UserError(
                f"--resume {run_id}: the model's weights changed ({old_rev[:19]}... -> "
                f"{lm.revision[:19]}...); start a new run instead"
            )
        runs.reopen_run(store, run_id, units_total=len(units))
    return run_id


def _progress_bar(progress: bool, total: int, run_id: int):
    """A tqdm bar over prompts on stderr, or None."""
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="prompt",
        desc=f"run {run_id}",
        disable=None,
        file=sys.stderr,
        dynamic_ncols=True,
        smoothing=0.1,
    )


def _execute(
    store: Store, run_id: int, units: list[UnitSpec], inputs: list[UnitInput], executor: Executor, bar, log
) -> runs.RunOutcome:
    """Commit each unit as the executor yields it; always close the executor and the run row
    (done when every unit is done, cancelled on Ctrl-C / SIGTERM, else failed)."""
    with runs.closing(store, run_id, recount=refresh_counts) as out:
        try:
            for res in executor.run(inputs, progress=bar.update if bar else None):
                write_unit(store, run_id, res)
                if res.error is None:
                    out.n_done += 1
                else:
                    out.n_failed += 1
                    out.errors.append(f"unit {res.spec.unit_id}: {res.error}")
                    log(f"unit {res.spec.unit_id} failed: {res.error}")
            all_done = store.scalar(
                "SELECT count(*) FROM run_unit WHERE run_id = ? AND status = 'done'", [run_id]
            )
            out.status = "done" if all_done == len(units) else "failed"
        finally:
            if bar is not None:
                bar.close()
            executor.close()
    return out
