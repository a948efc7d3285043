"""`ctxprior analyze`: the paper's statistical results from the warehouse (METHOD.md §3).

Each analysis (``registry``) reads its units with a named SQL file in this package
(``relevance.sql``, ...), which selects the runs from the view ``analysis_runs`` (see
``schema/views/50_analysis.sql``: all finished persuasion runs, or those in ``SET VARIABLE
run_ids = [..]``). The statistics the SQL lacks come from ``stats.py``. Results go to
``analysis_result`` (one row per test, skipped tests included with a reason) and
``analysis_distribution`` (Fig. 3 and Fig. 4 numbers): see ``storage``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import pandas as pd

from ..covariates.resolve import auto_covariate, resolve_covariate, seen_fakes_spec
from ..errors import UserError
from . import registry
from .comparisons import step_comparison
from .options import ONLY_OPTION
from .results import save_results
from .selection import check_plan, plan_runs, precision_note


def parse_only(only: str | None) -> list[str]:
    """The analyses of ``--only A,B`` (default: the default ones); UserError for an unknown name."""
    if not only:
        return list(registry.default_names())
    return list(ONLY_OPTION.check(ONLY_OPTION.parse(only)))


@dataclass
class Job:
    """State of one `analyze` call shared by its steps."""

    store: object
    run_ids: list  # persuasion runs
    dynamic: list  # dynamic runs
    k: int
    alpha: float
    seed: int
    covariates: list
    seen_fakes: str | None
    freq_spec: str | None
    log: object
    names: list = field(default_factory=list)
    results: list = field(default_factory=list)
    dists: list = field(default_factory=list)
    replicates: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    cache: dict[str, pd.DataFrame] = field(default_factory=dict)  # SQL file -> rows, shared by steps


def analyze(
    store,
    run_ids=None,
    only=None,
    k: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
    covariates=(),
    seen_fakes: str | None = None,
    log=None,
    timings: dict | None = None,
) -> dict:
    """Run the analyses on `run_ids`, store their rows, return {analysis: n rows stored}.

    only: list of analysis names (default all but `covariate`, which runs when covariates are given,
    and `known`, which runs when some of the runs have closed-book answers from `covariates known`).
    run_ids: persuasion runs go to the persuasion analyses, dynamic runs to `dynamicqa` (default:
    every finished persuasion run and every dynamic run with scores). Analyses without runs of
    their kind are skipped with a message; UserError only when none of the requested analyses
    has a run. covariates: 'view.column' specs for Spearman rho of chi (analysis `covariate`).
    seen_fakes: 'view.column'; fake entities with a value > 0 are excluded from `familiarity`
    (default: the frequency covariate, when one exists).
    """
    job = _prepare(
        store,
        run_ids,
        only,
        k,
        alpha,
        seed,
        covariates,
        seen_fakes,
        log or (lambda msg: print(msg, file=sys.stderr)),
    )
    timings = {} if timings is None else timings
    with store.one_thread():  # stored numbers bit-for-bit reproducible
        for name in job.names:
            t0 = time.perf_counter()
            (registry.get(name).step or step_comparison)(job, name)
            timings[name] = time.perf_counter() - t0
    t_store = time.perf_counter()
    if job.run_ids:
        save_results(
            store,
            job.run_ids,
            [n for n in job.names if registry.get(n).kind == "persuasion"],
            job.results,
            job.dists,
            job.k,
            job.seed,
            job.alpha,
            job.replicates,
        )
    timings["(store)"] = time.perf_counter() - t_store
    return job.counts


def _has_closed_book_answers(store, run_ids) -> bool:
    """Whether some of the runs have closed-book answers or samples (`covariates known`): then the
    default analyses include ``known``."""
    tables = set(store.table_names())
    for table in ("closed_book_attribute", "closed_book_answer", "closed_book_sample"):
        if not run_ids or table not in tables:
            continue
        sql = f"SELECT count(*) FROM {table} WHERE run_id IN (SELECT unnest(?::INTEGER[]))"
        if store.scalar(sql, [list(run_ids)]):
            return True
    return False


def _prepare(store, run_ids, only, k, alpha, seed, covariates, seen_fakes, log) -> Job:
    """Validate every input and find the runs (before anything is written); log skips and notes."""
    if k < 1:
        raise UserError(f"--permutations {k}: must be at least 1")
    if not 0 < alpha < 1:
        raise UserError(f"--alpha {alpha}: must be between 0 and 1")
    names = list(only) if only else list(registry.default_names())
    if covariates and "covariate" not in names:
        names.append("covariate")
    plan = plan_runs(store, run_ids)
    if not only and _has_closed_book_answers(store, plan.persuasion):
        names = [n for n in registry.names() if n in names or n == "known"]
    check_plan(plan, names, bool(run_ids))
    for spec in covariates:
        resolve_covariate(store, spec)  # validate before any work
    freq_spec = None
    if "frequency" in names or "familiarity" in names:
        freq_spec = next((c for c in covariates if "cooc" in c), None) or auto_covariate(store, "frequency")
    if seen_fakes:
        resolve_covariate(store, seen_fakes)
    else:
        seen_fakes = seen_fakes_spec(store, freq_spec)
    runs_of = {"persuasion": plan.persuasion, "dynamic": plan.dynamic}
    skipped = [n for n in names if not runs_of[registry.get(n).kind]]
    if skipped:  # all of one kind: check_plan made sure the other kind has runs
        kind = registry.get(skipped[0]).kind
        why = (
            f"none of the given --run is a {kind} run"
            if run_ids
            else "no dynamic runs with scores (`ctxprior score-dynamic`)"
            if kind == "dynamic"
            else "no finished persuasion runs (`ctxprior score`)"
        )
        log(f"skipped {', '.join(skipped)}: {why}")
    job = Job(
        store, plan.persuasion, plan.dynamic, k, alpha, seed, list(covariates), seen_fakes, freq_spec, log
    )
    job.names = [n for n in names if n not in skipped]
    for kind, runs in runs_of.items():
        used = any(registry.get(n).kind == kind for n in job.names)
        note = precision_note(store, runs) if used else None  # runs compared with each other: one kind
        if note:
            log(note)
    return job
