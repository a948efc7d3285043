"""`score-dynamic`: sampled answers, semantic entropy and Coherent Persuasion for DynamicQA facts.

Per fact, three conditions: ``none`` (question alone), ``original`` (context filled with obj) and
``counter`` (context filled with replace_name). Per condition: N answers sampled at the given
temperature (full vocabulary: top_k=0, top_p=1) and one greedy answer (accuracy and the
persuaded / stubborn labels use the greedy answer, as in the paper §5.1).

Per sampled answer we keep its text, the sum of its token log-probs at temperature 1 over its
answer tokens (the model's likelihood, used by semantic entropy; ``--se-form authors`` divides it
by the token count for the Monte-Carlo SE) and the mean of the full softmax distribution over its
generated steps, the end-of-sequence step included, as the released code (``--cp-tokens answer``:
over its answer tokens only), computed in log space in float64 (logsumexp of log_softmax minus log m).
CP is computed inside the run from these exact full-vocabulary distributions; the warehouse keeps
only a sparse top-k (default 50) of each sample's mean distribution plus its mass, because full
rows would cost V×8 bytes = 393 kB per sample for SmolLM2 (11.8 MB per fact). Re-deriving CP from
the stored top-k with the remainder as one extra "other" outcome gives a lower bound on the exact
CP (coarse-graining never increases KL, data-processing inequality).

Answer tokens: generated tokens up to (excluding) the end-of-sequence token or the first token that
starts a new line after some answer text; at least one token (so an empty answer still has a
distribution). Persuaded / stubborn and greedy accuracy follow ``--labels`` (``rouge``: the
released code's ROUGE-L F1 > 0.3; ``alias``: whole-word aliases and the equivalence test).
Departures from the paper and the released code: docs/departures.md. Resumable: one transaction per fact writes all its rows plus the
``dynamicqa_fact_done`` marker; a rerun with the same configuration (or ``--resume RUN``)
continues the unfinished run, skipping finished facts. Sampling is seeded per fact
(seed, fact_id), so a resumed run produces the same rows as an uninterrupted one.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from ..errors import UserError
from ..sqlfiles import read_sql
from ..storage import runs
from ..storage.store import Store, utcnow
from . import semantic as sem
from .calibrate import calibrate
from .config import (
    CONDITIONS,
    LEGACY_OPTIONS,
    PKG,
    PROMPT_CTX,
    PROMPT_NONE,
    RAW_SUFFIX,
    RUN_KIND,
    DynamicConfig,
)
from .facts import fact_rows, score_fact
from .sample import make_sample, resolve_dataset, select_facts


def _write_fact(store: Store, run_id: int, fact_id: int, gen, dist, scores, seconds: float) -> None:
    def tbl(rows, types):
        cols = {k: [r[k] for r in rows] for k in rows[0]}
        return pa.table(
            {
                "run_id": pa.array([run_id] * len(rows), pa.int32()),
                **{k: pa.array(v, types.get(k)) for k, v in cols.items()},
            }
        )

    i32 = pa.int32()
    with store.transaction():
        if store.scalar(
            "SELECT count(*) FROM dynamicqa_fact_done WHERE run_id = ? AND fact_id = ?", [run_id, fact_id]
        ):
            return
        store.insert_arrow(
            "dynamicqa_generation",
            tbl(
                gen,
                {
                    "fact_id": i32,
                    "sample_index": i32,
                    "n_tokens": i32,
                    "cluster": i32,
                    "dist_topk_mass": pa.float64(),
                },
            ),
        )
        store.insert_arrow(
            "dynamicqa_token_dist",
            tbl(dist, {"fact_id": i32, "sample_index": i32, "rank": i32, "token_id": i32}),
        )
        store.insert_arrow(
            "dynamicqa_score",
            tbl(
                scores,
                {
                    "fact_id": i32,
                    "n_samples": i32,
                    "n_clusters": i32,
                    "cp": pa.float64(),
                    "context_answer": pa.string(),
                    "greedy_matches_context": pa.bool_(),
                    "persuaded": pa.bool_(),
                    "stubborn": pa.bool_(),
                },
            ),
        )
        store.insert_arrow(
            "dynamicqa_fact_done",
            {
                "run_id": pa.array([run_id], i32),
                "fact_id": pa.array([fact_id], i32),
                "seconds": [seconds],
                "finished_at": pa.array([utcnow()], pa.timestamp("us")),
            },
        )
        store.execute(read_sql(PKG, "sql/fact_done_counts.sql"), [run_id, len(gen), run_id])


@dataclass
class DynamicRun:
    """A dynamic run after a call of ``run_dynamic``: its units are facts, its prompts the answers
    generated in this call (sampled and greedy)."""

    id: int
    status: str
    units_total: int
    units_done: int
    prompts: int
    seconds: float
    mean_cp: float | None
    mean_se_with_context: float | None
    units_failed: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def prompts_per_second(self) -> float:
        return self.prompts / self.seconds if self.seconds > 0 else 0.0


def run_dynamic(
    store: Store,
    cfg: DynamicConfig | None = None,
    resume: int | None = None,
    progress: bool = True,
    echo=None,
) -> DynamicRun:
    """``run_facts`` (a new run, the unfinished one with the same configuration, or run
    ``resume`` with its stored configuration) and its summary."""
    t0 = time.perf_counter()
    opened: dict = {}
    rid = run_facts(store, cfg, resume=resume, progress=progress, echo=echo, opened=opened)
    status, done, total, prompts, cp, se, error = store.query(read_sql(PKG, "sql/run_summary.sql"), [rid])[0]
    return DynamicRun(
        rid,
        status,
        int(total or 0),
        int(done or 0),
        int(prompts) - opened.get("prompts", 0),
        time.perf_counter() - t0,
        cp,
        se,
        errors=[error] if error else [],
    )


def run_facts(
    store: Store,
    cfg: DynamicConfig | None = None,
    resume: int | None = None,
    lm=None,
    equivalence: sem.Equivalence | None = None,
    progress: bool = True,
    max_facts: int | None = None,
    echo=None,
    opened: dict | None = None,
) -> int:
    """Run (or resume) a dynamic run; returns its run_id. ``lm``/``equivalence`` may be injected (tests).

    max_facts: stop after this many facts in this call (leaves the run 'running'; for tests/resume).
    opened: filled with the run's answers generated before this call (``prompts``).
    """
    echo = echo or (lambda s: None)
    cfg = _stored_config(store, resume) if resume is not None else cfg
    cfg = cfg or DynamicConfig()
    cfg.validate()
    ds_id = resolve_dataset(store, cfg.dataset)
    facts = select_facts(store, ds_id, cfg.partitions, cfg.limit)
    if not facts:
        raise UserError(f"dataset '{cfg.dataset}' has no facts in partition(s) {', '.join(cfg.partitions)}")
    calib = None
    if equivalence is None:
        equivalence, calib = _equivalence(store, cfg)
    if lm is None:
        from ..scoring.models import load_model

        lm = load_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    chat = cfg.chat_template == "auto" and bool(getattr(lm.tokenizer, "chat_template", None))
    extra = {
        "equivalence_detail": equivalence.describe(),
        "calibration_id": calib and calib["calibration_id"],
        "chat_template_applied": chat,
        "prompt_none": PROMPT_NONE,
        "prompt_context": PROMPT_CTX,
        "raw_prompt_suffix": None if chat else RAW_SUFFIX,
        "conditions": list(CONDITIONS),
        "sampling": {"top_k": 0, "top_p": 1.0, "greedy_answer": True},
        "model_id": lm.model_id,
        "model_revision": lm.revision,
    }
    key = json.dumps({**asdict(cfg), **extra}, sort_keys=True)
    if resume is None:
        old = runs.find_resumable(store, RUN_KIND, lambda cfg: cfg == key)
        if old is not None:
            resume = int(old)
            echo(f"continuing unfinished run {resume} (same configuration)")
    sample_id = make_sample(store, cfg.dataset, cfg.partitions, cfg.limit)
    run_id = _open_run(store, cfg, key, lm, ds_id, sample_id, len(facts), resume)
    if opened is not None:
        opened["prompts"] = int(
            store.scalar("SELECT coalesce(prompts_done, 0) FROM run WHERE run_id = ?", [run_id])
        )
    _score_facts(store, run_id, facts, lm, equivalence, cfg, chat, progress, max_facts)
    return run_id


def _stored_config(store: Store, resume: int) -> DynamicConfig:
    """The configuration dynamic run ``resume`` was started with."""
    row = store.query("SELECT kind, config_json, status FROM run WHERE run_id = ?", [resume])
    if not row:
        raise UserError(f"--resume {resume}: no such run in {store.path}")
    if row[0][0] != RUN_KIND:
        raise UserError(f"--resume {resume}: run {resume} is a {row[0][0]} run, not a dynamic one")
    stored = {**LEGACY_OPTIONS, **json.loads(row[0][1])}
    return DynamicConfig(**{k: stored[k] for k in DynamicConfig.__dataclass_fields__ if k in stored})


def _equivalence(store: Store, cfg: DynamicConfig) -> tuple[sem.Equivalence, dict | None]:
    """The configured equivalence test; an embedding one without a threshold is calibrated on the
    dataset first (the calibration row is returned too)."""
    kind, _, arg = cfg.equivalence.partition(":")
    if kind != "embedding":
        return sem.NLIEquivalence(arg), None
    equivalence = sem.EmbeddingEquivalence(arg, cfg.threshold if cfg.threshold is not None else 0.8)
    calib = None
    if cfg.threshold is None:
        calib = calibrate(store, cfg.dataset, equivalence)
        equivalence.threshold = float(calib["threshold"])
    return equivalence, calib


def _open_run(
    store: Store,
    cfg: DynamicConfig,
    key: str,
    lm,
    ds_id: int,
    sample_id: int,
    n_facts: int,
    resume: int | None,
) -> int:
    """Insert the dynamic run row (status running), or mark run ``resume`` running again."""
    if resume is not None:
        runs.reopen_run(store, resume)
        return resume
    return runs.start_run(
        store,
        RUN_KIND,
        sample_id=sample_id,
        dataset_id=ds_id,
        model=cfg.model,
        model_revision=lm.revision,
        dtype=lm.dtype,
        quantization=lm.quantization or "none",
        device=lm.device,
        estimator="sampled",
        batch_size=3 * cfg.samples,
        seed=cfg.seed,
        config_json=key,
        units_total=n_facts,
    )


def _score_facts(
    store: Store,
    run_id: int,
    facts: list[int],
    lm,
    equivalence: sem.Equivalence,
    cfg: DynamicConfig,
    chat: bool,
    progress: bool,
    max_facts: int | None,
) -> None:
    """Score the run's unfinished facts, one transaction each; the run ends done, cancelled
    (Ctrl-C) or failed (with the error), or stays running after ``max_facts`` facts."""
    from tqdm.auto import tqdm

    done = {r[0] for r in store.query("SELECT fact_id FROM dynamicqa_fact_done WHERE run_id = ?", [run_id])}
    todo = [f for f in facts if f not in done]
    rows = fact_rows(todo, store) if todo else []
    n_this = 0
    with runs.closing(store, run_id, record_crash=True) as out:
        for fact in tqdm(
            rows,
            desc=f"run {run_id}",
            unit="fact",
            disable=None if progress else True,
            initial=len(done),
            total=len(facts),
        ):
            if max_facts is not None and n_this >= max_facts:
                out.status = "running"
                return
            t0 = time.perf_counter()
            gen, dist, scores = score_fact(lm, equivalence, fact, cfg, chat)
            _write_fact(store, run_id, fact["fact_id"], gen, dist, scores, time.perf_counter() - t0)
            n_this += 1
        out.status = "done"
