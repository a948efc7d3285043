"""Work units of a scoring run and the pure computation of one unit.

A unit = (relation, query form, entity shard); ``unit_id`` is its index in a deterministic plan
(relations by position, query forms by (type, ordinal), facts by sample ordinal, shards of
``shard_size`` facts), so a resumed run plans the same units. ``UnitInput`` (``texts``) carries
everything a worker needs (no database access, picklable), and ``compute_unit`` turns it into
Arrow tables of rows; only the driver writes to the warehouse.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from .engine import Engine
from .estimators import ScoreError, full_answer_choice, reliance_answers, score_estimators
from .metrics import (
    RELIANCE_ANSWER_SET,
    RELIANCE_ANSWERS,
    RELIANCE_KEYS,
    RELIANCE_ROW_FLOATS,
    outcomes_np,
)
from .options import ScoreConfig
from .outcomes import UNDECIDED, label
from .prompts import PromptFormat, format_for
from .texts import UnitInput, UnitResult, UnitTexts, unit_texts


def _unit_texts(engine: Engine, inp: UnitInput, config: ScoreConfig):
    """(the estimator, the unit's texts, the prompt format)."""
    est = score_estimators().get(config.estimator)
    if est is None:
        raise ValueError(f"unknown estimator {config.estimator}")
    return est, unit_texts(inp), format_for(engine.lm.tokenizer, config)


def prefetch_unit(engine: Engine, inp: UnitInput, config: ScoreConfig) -> None:
    """Start tokenizing the prompts of ``inp`` in the background (``Engine.prefetch``), when its
    estimator says which they are."""
    est, texts, fmt = _unit_texts(engine, inp, config)
    if est.prompts is not None:
        engine.prefetch(est.prompts(texts, fmt))


PACK_ROWS = 32  # a unit with fewer generation prompts generates beside its neighbours (``packs``)


def packs(inp: UnitInput, config: ScoreConfig) -> bool:
    """Whether a unit's greedy generations run beside the next units' (``compute_units``): a
    run that generates, and a unit with fewer than ``PACK_ROWS`` (fact, context) prompts -- a
    fixed-design item has 1-10 -- whose decoding alone would read the whole model every step for
    a few rows. A rule on the unit alone, so its scores never depend on its neighbours."""
    generating = config.outcome_rule != "none" or config.memorization
    return generating and inp.n_pairs < PACK_ROWS


def compute_unit(
    engine: Engine, inp: UnitInput, config: ScoreConfig, progress: Callable[[int], None] | None = None
) -> dict[str, pa.Table]:
    """Scores of one unit as Arrow tables (persuasion, susceptibility, prior_topk, prompt_topk,
    generation, reliance): ``compute_units`` of it alone."""
    return compute_units(engine, [inp], config, progress)[0][0]


def compute_units(
    engine: Engine,
    inps: list[UnitInput],
    config: ScoreConfig,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[dict[str, pa.Table], dict[str, float]]]:
    """Each unit's tables (``compute_unit``) and what it cost (``_Meter``: seconds and the
    engine's counters). Each unit is scored on its own; the greedy generations of the units that
    ``packs`` run in one call (a unit's share of it is counted by its prompts), those of the
    others from their estimator's own pass where it ``generates`` (one prefill per prompt).
    Raises ScoreError on NaN/inf."""
    generating = config.outcome_rule != "none" or config.memorization
    meter, parts = _Meter(engine), []
    for inp in inps:
        est, texts, fmt = _unit_texts(engine, inp, config)
        # an estimator that generates from its own prefill saves the generation's second one
        one_pass = generating and est.generates and not config.per_layer and not packs(inp, config)
        res = est.run(
            engine,
            texts,
            prior_topk=config.prior_topk,
            store_topk=config.store_topk,
            progress=progress,
            prompt=fmt,
            per_layer=config.per_layer,
            **({"generate": config.max_new_tokens} if one_pass else {}),
        )
        gens = [g for r in res for g in r.generations or ()] if one_pass else None
        parts.append([inp, est, texts, fmt, res, gens, meter.take()])
    pending = [p for p in parts if generating and p[5] is None]
    if pending:
        prompts: list[str] = []
        groups: list[list[int]] = []
        sizes: list[int] = []
        for inp, _, texts, fmt, *_ in pending:
            t, g = _generation_prompts(inp, texts, fmt)
            groups += [[len(prompts) + i for i in grp] for grp in g]
            prompts += t
            sizes.append(len(t))
        gens = engine.greedy(engine.encode(prompts), config.max_new_tokens, groups)
        cost, at = meter.take(), 0
        for p, n in zip(pending, sizes):
            p[5], at = gens[at : at + n], at + n
            p[6] = _add(p[6], cost, n / len(prompts))
    return [
        (_unit_tables(engine, inp, config, est, texts, fmt, res, gens), _add(cost, meter.take()))
        for inp, est, texts, fmt, res, gens, cost in parts
    ]


def _add(a: dict[str, float], b: dict[str, float], share: float = 1.0) -> dict[str, float]:
    return {k: v + b[k] * share for k, v in a.items()}


class _Meter:
    """Seconds and the engine's counters since the last ``take``."""

    KEYS = ("seconds", "oom_splits", "forward_calls", "tokens")

    def __init__(self, engine: Engine):
        self.engine = engine
        self.last = self._now()

    def _now(self) -> tuple:
        e = self.engine
        return (time.perf_counter(), e.oom_splits, e.forward_calls, e.tokens_computed)

    def take(self) -> dict[str, float]:
        now = self._now()
        spent = dict(zip(self.KEYS, (a - b for a, b in zip(now, self.last))))
        self.last = now
        return spent


def _unit_tables(engine, inp, config, est, texts, fmt, res, gens) -> dict[str, pa.Table]:
    """A unit's tables from its scores ``res`` and, in a run that generates, its generations."""
    ctx_ids = np.array([c for c, _, _ in inp.contexts], dtype=np.int64)
    tables = _score_tables(inp, res, ctx_ids)
    labels: dict[tuple[int, int], str | None] | None = None
    if gens is not None:
        tables["generation"], labels = _generation_table(inp, config, gens)
    pairs = _decide_collisions(engine, texts, res, fmt)
    outcomes = labels if config.outcome_rule != "none" else None
    tables["reliance"] = _reliance_table(inp, res, ctx_ids, pairs, (config.outcome_rule, outcomes))
    if config.per_layer and est.per_layer:
        tables.update(_layer_tables(inp, res, ctx_ids))
    return tables


PERSUASION_COLS = ("run_id", "query_form_id", "fact_id", "context_id", "persuasion", "entropy")
SUSCEPTIBILITY_COLS = (
    "run_id",
    "query_form_id",
    "fact_id",
    "susceptibility",
    "mixture_entropy",
    "mean_conditional_entropy",
    "n_contexts",
    "prior_entropy",
    "prior_kl",
)
_SUS_INT = ("run_id", "query_form_id", "fact_id", "n_contexts")


def _score_tables(inp: UnitInput, res: list, ctx_ids: np.ndarray) -> dict[str, pa.Table]:
    """The persuasion, susceptibility, prior_topk and prompt_topk tables of a unit's scores."""
    run_id, qf, nc = inp.run_id, inp.spec.query_form_id, len(inp.contexts)
    pers: dict[str, list] = {k: [] for k in PERSUASION_COLS}
    sus: dict[str, list] = {k: [] for k in SUSCEPTIBILITY_COLS}
    ptk: dict[str, list] = {
        k: [] for k in ("run_id", "query_form_id", "fact_id", "rank", "token_id", "token", "prob")
    }
    qtk: dict[str, list] = {
        k: []
        for k in ("run_id", "query_form_id", "fact_id", "context_id", "rank", "token_id", "token", "prob")
    }
    for (fact_id, _, _), r in zip(inp.facts, res):
        ids = (np.full(nc, run_id, dtype=np.int32), np.full(nc, qf, dtype=np.int32))
        for k, v in zip(
            PERSUASION_COLS,
            (*ids, np.full(nc, fact_id, dtype=np.int32), ctx_ids, r.persuasion, r.entropy),
        ):
            pers[k].append(v.astype(np.float64) if k in ("persuasion", "entropy") else v)
        sus_row = (run_id, qf, fact_id, r.susceptibility, r.mixture_entropy, r.mean_conditional_entropy)
        for k, v in zip(SUSCEPTIBILITY_COLS, (*sus_row, r.n_contexts, r.prior_entropy, r.prior_kl)):
            sus[k].append(v)
        for rank, (tid, tok, p) in enumerate(r.prior_topk, 1):
            for k, v in zip(ptk, (run_id, qf, fact_id, rank, tid, tok, p)):
                ptk[k].append(v)
        for cid, top in zip(ctx_ids.tolist(), r.prompt_topk or ()):
            for rank, (tid, tok, p) in enumerate(top, 1):
                for k, v in zip(qtk, (run_id, qf, fact_id, cid, rank, tid, tok, p)):
                    qtk[k].append(v)
    empty = pa.array([], pa.int64())
    return {
        "persuasion": pa.table({k: pa.array(np.concatenate(v)) if v else empty for k, v in pers.items()}),
        "susceptibility": pa.table(
            {k: pa.array(v, type=pa.int32() if k in _SUS_INT else pa.float64()) for k, v in sus.items()}
        ),
        "prior_topk": _int_table(ptk),
        "prompt_topk": _int_table(qtk),
    }


def _differ(a: str | None, b: str | None) -> bool:
    """Two answers that name different things (case and surrounding spaces aside, as the views'
    ``conflict`` compares them); False when either is missing."""
    return a is not None and b is not None and a.strip().casefold() != b.strip().casefold()


def _decide_collisions(engine: Engine, texts: UnitTexts, res: list, fmt: PromptFormat) -> dict:
    """Per (query, context) whose gold answer and context answer differ as strings but are one
    answer to the estimator (they share their first token): ``collision`` [queries, contexts]
    bool; where the argmax is that shared answer, the outcome is decided from the two full answers
    (``estimators.full_answer_choice``): ``decided`` {(i, j): "ORIGINAL" | "CONTEXT"}."""
    ctx_names, gold_names = reliance_answers(texts)
    nq, nc = len(texts.queries), len(texts.contexts)
    collision = np.zeros((nq, nc), bool)
    todo: list[tuple[int, int]] = []
    for i, r in enumerate(res):
        if r.reliance is None:
            continue
        same = r.reliance["answer_context"] == r.reliance["answer_gold"]
        for j in range(nc):
            if same[j] and r.reliance["answer_context"][j] >= 0 and _differ(ctx_names[i][j], gold_names[i]):
                collision[i, j] = True
                if r.reliance["answer_top"][j] == r.reliance["answer_gold"][j]:
                    todo.append((i, j))
    prompts = [fmt(texts.contexts[j], texts.queries[i]) for i, j in todo]
    pairs = [(str(gold_names[i]), str(ctx_names[i][j])) for i, j in todo]
    choice = full_answer_choice(engine, prompts, pairs)
    return {"collision": collision, "decided": {k: ("ORIGINAL", "CONTEXT")[c] for k, c in zip(todo, choice)}}


def _reliance_table(inp: UnitInput, res: list, ctx_ids: np.ndarray, pairs: dict, outcomes: tuple) -> pa.Table:
    """The reliance rows of a unit's contexts (none when it had no no-context prompt): the device's
    measures; ``choice``, ctxprior's forced choice, from the argmax answer (``metrics.outcomes_np``)
    or, for a pair the estimator cannot tell apart (``pairs``, ``_decide_collisions``), from the
    two full answers (``choice_source`` says which); and ``outcome``, the label of the prompt's
    greedy generation under the run's rule (``outcomes`` = (rule, {(fact, context): label});
    NULL with rule ``none``, or where the generation gives both answers), ``outcome_source`` the
    rule. An answer probability the unit could not read (no such answer) is NULL."""
    keep = [i for i, r in enumerate(res) if r.reliance is not None]
    rel = [(inp.facts[i][0], res[i].reliance) for i in keep]
    nc, n = len(ctx_ids), len(rel) * len(ctx_ids)
    cols = {
        "run_id": np.full(n, inp.run_id, np.int32),
        "query_form_id": np.full(n, inp.spec.query_form_id, np.int32),
        "fact_id": np.repeat(np.array([f for f, _ in rel], np.int32), nc),
        "context_id": np.tile(ctx_ids, len(rel)),
    }
    for k in (*RELIANCE_KEYS, *RELIANCE_ANSWER_SET):
        cols[k] = np.concatenate([r[k] for _, r in rel]) if rel else np.zeros(0)
    out = {k: pa.array(v) for k, v in list(cols.items())[:4]}
    out.update({k: pa.array(cols[k], pa.float64(), from_pandas=True) for k in RELIANCE_ROW_FLOATS})
    ids = {k: np.asarray(cols[k], np.int64) for k in RELIANCE_ANSWERS}
    out.update({k: pa.array(v.astype(np.int32), mask=v < 0) for k, v in ids.items()})
    choice = outcomes_np(ids["answer_top"], ids["answer_context"], ids["answer_gold"]).astype(object)
    source = np.full(n, "argmax", object)
    for (i, j), decided in pairs["decided"].items():
        k = keep.index(i) * nc + j
        choice[k], source[k] = decided, "full-answer"
    rule, labels = outcomes
    keys = zip(cols["fact_id"].tolist(), cols["context_id"].tolist())
    outcome = [labels[key] for key in keys] if labels is not None else [None] * n
    collision = pairs["collision"][keep].reshape(-1) if keep else np.zeros(0, bool)
    out["outcome"] = pa.array(outcome, pa.string())
    out["outcome_source"] = pa.array([rule if labels is not None else None] * n, pa.string())
    out["choice"] = pa.array(choice, pa.string())
    out["choice_source"] = pa.array(source, pa.string())
    out["collision"] = pa.array(collision, pa.bool_(), mask=ids["answer_context"] < 0)
    out["keeps_prior"] = pa.array(ids["answer_top"] == ids["answer_prior"], pa.bool_())
    return pa.table(out)


def _layer_tables(inp: UnitInput, res, ctx_ids: np.ndarray) -> dict[str, pa.Table]:
    """susceptibility_layer (and persuasion_layer for --per-layer psi) rows of a unit's facts."""
    fact_ids = np.array([f for f, _, _ in inp.facts], dtype=np.int32)
    by = [r.by_layer for r in res]
    n_layers = len(by[0]["susceptibility"]) if by else 0
    layer = np.tile(np.arange(n_layers, dtype=np.int32), len(by))
    n = len(layer)
    sus: dict[str, np.ndarray] = {
        "run_id": np.full(n, inp.run_id, np.int32),
        "query_form_id": np.full(n, inp.spec.query_form_id, np.int32),
        "fact_id": np.repeat(fact_ids, n_layers),
        "layer": layer,
    }
    for k in ("susceptibility", "mixture_entropy", "mean_conditional_entropy"):
        sus[k] = np.concatenate([b[k] for b in by]) if by else np.zeros(0)
    out = {"susceptibility_layer": pa.table(sus)}
    if by and "persuasion" in by[0]:
        nc = len(ctx_ids)
        m = len(by) * n_layers * nc
        out["persuasion_layer"] = pa.table(
            {
                "run_id": np.full(m, inp.run_id, np.int32),
                "query_form_id": np.full(m, inp.spec.query_form_id, np.int32),
                "fact_id": np.repeat(fact_ids, n_layers * nc),
                "context_id": np.tile(ctx_ids, len(by) * n_layers),
                "layer": np.tile(np.repeat(np.arange(n_layers, dtype=np.int32), nc), len(by)),
                "persuasion": np.concatenate([b["persuasion"].reshape(-1) for b in by]),
            }
        )
    return out


def _int_table(d: dict) -> pa.Table:
    types = {"token": pa.string(), "prob": pa.float64(), "context_id": pa.int64()}
    return pa.table({k: pa.array(v, type=types.get(k, pa.int32())) for k, v in d.items()})


def _generation_prompts(inp: UnitInput, texts: UnitTexts, fmt: PromptFormat) -> tuple[list[str], list]:
    """A unit's (fact, context) prompts, fact-major -- the same prompts as its scores -- and their
    prefix groups (one context, every query)."""
    prompts = [fmt(c, q) for q in texts.queries for c in texts.contexts]
    nq, nc = len(inp.facts), len(inp.contexts)
    return prompts, [[i * nc + j for i in range(nq)] for j in range(nc)]


def _generation_table(
    inp: UnitInput, config: ScoreConfig, gens: list[str]
) -> tuple[pa.Table, dict[tuple[int, int], str | None]]:
    """A unit's greedy generations (one per (fact, context) prompt, fact-major) labelled by the
    run's rule (``outcomes.label``; ``prefix`` for ``--outcome-rule none --memorization``): the
    generation table (label UNDECIDED where it gives both answers) and the labels by (fact,
    context)."""
    rule = config.outcome_rule if config.outcome_rule != "none" else "prefix"
    # keyed by (fact, context_id) from the start: no sorting/dedup that could misalign labels
    keys = [(f, cid, answer, cans) for f, _, answer in inp.facts for cid, _, cans in inp.contexts]
    labels = {(f, c): label(g, rule, inp.query_type, a, ca) for (f, c, a, ca), g in zip(keys, gens)}
    table = pa.table(
        {
            "run_id": pa.array([inp.run_id] * len(keys), pa.int32()),
            "query_form_id": pa.array([inp.spec.query_form_id] * len(keys), pa.int32()),
            "fact_id": pa.array([k[0] for k in keys], pa.int32()),
            "context_id": pa.array([k[1] for k in keys], pa.int64()),
            "text": pa.array(gens, pa.string()),
            "label": pa.array([labels[k[:2]] or UNDECIDED for k in keys], pa.string()),
        }
    )
    return table, labels


def run_units_checked(
    engine: Engine,
    inps: list[UnitInput],
    config: ScoreConfig,
    worker: str,
    progress: Callable[[int], None] | None = None,
) -> list[UnitResult]:
    """``compute_units`` as one ``UnitResult`` per unit, with its seconds and engine counters;
    NaN/inf and model errors (a prompt longer than the context window, a CUDA out-of-memory error
    on a single row) become a failed result (no rows). In a pack of several units such an error
    sends each unit through again alone, so only the unit at fault fails."""
    meter = _Meter(engine)
    try:
        done = compute_units(engine, inps, config, progress=progress)
        errors: list[str | None] = [None] * len(inps)
    except (ScoreError, RuntimeError, ValueError, IndexError) as e:
        if len(inps) > 1:
            return [r for inp in inps for r in run_units_checked(engine, [inp], config, worker, progress)]
        reason = str(e) if isinstance(e, ScoreError) else f"{type(e).__name__}: {e}".splitlines()[0][:500]
        done, errors = [({}, meter.take())], [reason]
    fixed = {
        "device": str(engine.device),
        "batch_size": engine.batch_size,
        "prefix_reuse": engine.prefix_reuse,
        "head": engine.head_path,
    }
    return [
        UnitResult(
            spec=inp.spec,
            tables=tables,
            error=err,
            seconds=cost["seconds"],
            worker=worker,
            n_prompts=inp.n_prompts,
            engine={**fixed, **{k: round(cost[k]) for k in ("oom_splits", "forward_calls", "tokens")}},
        )
        for inp, (tables, cost), err in zip(inps, done, errors)
    ]
