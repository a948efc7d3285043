"""Making fakes: ``generate_fakes`` (a chat model, asked per entity class until enough names
pass the ``Screen``), ``add_fakes`` (a user's file), storing them (one transaction) and listing
them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import check_input, read_input
from ..sqlfiles import read_sql
from ..storage.store import utcnow
from ..version import __version__
from .options import GENERATE_OPTIONS
from .parse import name_key, parse_names
from .plan import (
    SQL,
    RelationPlan,
    Slot,
    assign_classes,
    dataset_id,
    find_relation,
    group_by_class,
    plan_relation,
)
from .prompts import build_messages
from .screen import Accepted, FakesResult, Screen, rejected_text

N_EXAMPLES = 5


# -- generation ---------------------------------------------------------------------------------
def _check_capacity(plan: RelationPlan, n: int) -> None:
    free = len(plan.slots)
    if n <= 0:
        raise UserError(f"--n {n}: must be positive")
    if free == 0:
        raise UserError(
            f"relation '{plan.relation}' of dataset '{plan.dataset}' already has a fake for "
            "every real entity; nothing to generate"
        )
    if n > free:
        raise UserError(
            f"--n {n}: relation '{plan.relation}' has only {free} real entities without a fake "
            f"(a fake borrows a real entity's answer); use --n {free} or less"
        )


def _collect(
    chat, plan: RelationPlan, groups: dict, screen: Screen, style: str, seed: int, max_rounds: int, bar
) -> tuple[dict[Any, list[Accepted]], list[dict]]:
    """Ask for each class's names until enough are accepted or ``max_rounds`` calls were made."""
    got: dict[Any, list[Accepted]] = {c: [] for c in groups}
    calls: list[dict] = []
    for cls, need in groups.items():
        for rnd in range(max_rounds):
            missing = need - len(got[cls])
            if missing <= 0:
                break
            # paper: the number still needed, as the authors asked for the 1000 they wanted (and
            # asked again until they had them); relation: a margin for names the screen rejects
            ask = missing if style == "paper" else missing + max(2, missing // 5)
            messages = build_messages(
                cls, ask, style, plan.relation, plan.query_form, plan.examples(cls, N_EXAMPLES)
            )
            k = len(calls)
            text = chat.complete(messages, seed + k, ask)
            cands = parse_names(text)
            before = len(got[cls])
            for raw in cands:
                if len(got[cls]) >= need:
                    break
                name = screen.check(raw)
                if name:
                    got[cls].append(Accepted(name, raw, cls, k))
            bar.update(len(got[cls]) - before)
            calls.append(
                {
                    "class": cls,
                    "round": rnd,
                    "seed": seed + k,
                    "n_asked": ask,
                    "messages": messages,
                    "response": text,
                    "n_parsed": len(cands),
                    "n_accepted": len(got[cls]) - before,
                }
            )
    return got, calls


def _place(plan: RelationPlan, classes: list, got: dict[Any, list[Accepted]]) -> list[tuple[Slot, Accepted]]:
    """Pair accepted names with slots of their class, best-ranked slots first."""
    queues = {c: iter(v) for c, v in got.items()}
    out = []
    for slot, cls in zip(plan.slots, classes):
        a = next(queues[cls], None)
        if a is not None:
            out.append((slot, a))
    return out


_DEFAULT = {o.name: o.default for o in GENERATE_OPTIONS}  # declared once (fakes/options.py)


def generate_fakes(
    store,
    dataset: str,
    relation: str,
    n: int = _DEFAULT["n"],
    model: str = _DEFAULT["model"],
    base_url: str | None = _DEFAULT["base_url"],
    api_key_env: str | None = _DEFAULT["api_key_env"],
    seed: int = _DEFAULT["seed"],
    temperature: float = _DEFAULT["temperature"],
    top_p: float = _DEFAULT["top_p"],
    max_rounds: int = _DEFAULT["max_rounds"],
    prompt_style: str = _DEFAULT["prompt_style"],
    timeout: float = _DEFAULT["timeout"],
    retries: int = _DEFAULT["retries"],
    allow_partial: bool = _DEFAULT["allow_partial"],
    chat=None,
    backoff: float = 1.0,
) -> FakesResult:
    """Generate ``n`` fakes for ``relation`` with a chat model and store them (one transaction).

    The warehouse is only read before the model is called (``store`` may be a brief writer: the
    file is free while the model writes) and written once at the end. Fewer than ``n`` accepted
    names after ``max_rounds`` calls per class is an error unless ``allow_partial``.
    """
    from tqdm import tqdm

    from ..options import check_options
    from .llm import make_chat
    from .options import GENERATE_OPTIONS

    check_options(GENERATE_OPTIONS, {"prompt_style": prompt_style, "max_rounds": max_rounds})
    with store.session():
        plan = plan_relation(store, dataset, relation)
    _check_capacity(plan, n)
    chat = chat or make_chat(model, base_url, api_key_env, temperature, top_p, timeout, retries, backoff)
    classes = assign_classes(plan.slots[:n], plan.classes)
    groups = group_by_class(classes)
    screen = Screen(plan.known)
    with tqdm(total=n, desc=f"fakes {plan.relation}", unit="name", disable=None) as bar:
        got, calls = _collect(chat, plan, groups, screen, prompt_style, seed, max_rounds, bar)
    pairs = _place(plan, classes, got)
    status = _outcome(plan, n, pairs, screen, calls, allow_partial)
    params = {
        "n": n,
        "temperature": temperature,
        "top_p": top_p,
        "max_rounds": max_rounds,
        "prompt_style": prompt_style,
        "classes": {str(c): k for c, k in groups.items()},
    }
    if getattr(chat, "endpoint", None):
        params.update(timeout=timeout, retries=retries)
    else:
        params["max_new_tokens"] = "min(2048, 16 * names asked + 48)"
    gen = {
        "method": "model",
        "model": model,
        "model_revision": chat.revision,
        "endpoint": chat.endpoint,
        "prompt_style": prompt_style,
        "seed": seed,
        "params_json": json.dumps(params, sort_keys=True),
        "calls_json": json.dumps(calls, ensure_ascii=False),
        "n_requested": n,
        "status": status,
    }
    return _store(store, plan, pairs, screen, gen, calls=len(calls))


def _outcome(plan, n, pairs, screen, calls, allow_partial) -> str:
    """'complete' or 'partial'; too few names without ``allow_partial`` -> UserError."""
    if len(pairs) == n:
        return "complete"
    parsed = sum(c["n_parsed"] for c in calls)
    what = (
        f"accepted {len(pairs)} of {n} fakes for '{plan.relation}' after {len(calls)} model call(s) "
        f"({parsed} names parsed; rejected: {rejected_text(screen.summary())})"
    )
    if not pairs:
        raise UserError(f"{what}; no usable names, nothing stored; try another model, prompt style or seed")
    if not allow_partial:
        raise UserError(f"{what}; nothing stored; raise --max-rounds or pass --allow-partial to keep them")
    return "partial"


# -- a user's file -------------------------------------------------------------------------------
def read_names_file(path: str | Path) -> list[str]:
    """Candidate names in a user's file: a CSV (``.csv`` / ``.tsv``, or a first line with a
    ``name`` column among others) with a ``name`` column, else any list ``parse_names`` reads
    (one per line, numbered, bulleted, JSON array)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file" if not p.exists() else f"{path}: not a file")
    check_input(p)  # never the warehouse (a link of it): ctxprior/inputs.py
    try:
        text = read_input(p).decode("utf-8-sig")  # a regular file, never blocks
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte offset {e.start})") from None
    if not text.strip():
        raise UserError(f"{path}: file is empty")
    first = text.lstrip().splitlines()[0]
    header = [c.strip().strip('"').lower() for c in first.split(",")]
    if p.suffix.lower() in (".csv", ".tsv") or (len(header) > 1 and "name" in header):
        dialect = csv.excel_tab if p.suffix.lower() == ".tsv" else csv.excel
        rows = csv.DictReader(io.StringIO(text), dialect=dialect)
        cols = {c.strip().lower(): c for c in rows.fieldnames or []}
        if "name" not in cols:
            raise UserError(
                f"{path}: CSV has no 'name' column (its columns: {', '.join(rows.fieldnames or [])}); "
                "add a header line with a 'name' column"
            )
        return [r[cols["name"]] or "" for r in rows]
    return parse_names(text)


def add_fakes(
    store,
    path: str | Path,
    dataset: str,
    relation: str,
    n: int | None = None,
    entity_class: str | None = None,
) -> FakesResult:
    """Screen the names in ``path`` and store the accepted ones (at most ``n``) as fakes.

    A rerun with the same file is a no-op (every name is then an ``existing_fake``)."""
    raw_names = read_names_file(path)
    if n is not None and n <= 0:
        raise UserError(f"--n {n}: must be positive")
    with store.session():
        plan = plan_relation(store, dataset, relation)
    screen = Screen(plan.known)
    accepted: list[Accepted] = []
    for raw in raw_names:
        if n is not None and len(accepted) >= n:
            break
        name = screen.check(raw)
        if name and len(accepted) >= len(plan.slots):
            screen.rejected["no_free_position"].append(raw)
        elif name:
            accepted.append(Accepted(name, raw, None))
    pairs = [(s, Accepted(a.name, a.raw, entity_class or s.class_name)) for s, a in zip(plan.slots, accepted)]
    if not pairs:
        return _nothing_added(store, plan, path, raw_names, screen)
    gen = {
        "method": "file",
        "source_path": str(Path(path).resolve()),
        "source_sha256": sha256_file(path),
        "params_json": json.dumps({"n": n, "entity_class": entity_class}, sort_keys=True),
        "n_requested": len(raw_names),
        "status": "complete",
    }
    return _store(store, plan, pairs, screen, gen)


def _nothing_added(store, plan: RelationPlan, path, raw_names: list[str], screen: Screen) -> FakesResult:
    """A rerun (the same file already added to this relation, or every name already one of its
    fakes) is a no-op; anything else that adds nothing is an error."""
    summary = screen.summary()
    done = store.query(read_sql(SQL, "sql/done_generation.sql"), [plan.relation_id, sha256_file(path)])
    if raw_names and (done or set(summary) == {"existing_fake"}):
        since = f" (fake_generation {done[0][0]})" if done else ""
        return FakesResult(
            None,
            plan.dataset,
            plan.relation,
            len(raw_names),
            rejected=summary,
            note=f"{path} adds no new fakes to '{plan.relation}'{since}; nothing to do",
        )
    if not plan.slots:
        raise UserError(
            f"relation '{plan.relation}' of dataset '{plan.dataset}' already has a fake for every "
            "real entity; nothing can be added"
        )
    raise UserError(
        f"{path}: no usable names for '{plan.relation}' ({len(raw_names)} read; rejected: "
        f"{rejected_text(summary)}); nothing stored"
    )


# -- writing -------------------------------------------------------------------------------------
def _recheck(store, plan: RelationPlan, pairs: list[tuple[Slot, Accepted]]) -> None:
    """Inside the write transaction: the slots are still free and the names still new."""
    now = plan_relation(store, plan.dataset, plan.relation)
    free = {s.position for s in now.slots}
    if any(s.position not in free for s, _ in pairs) or any(name_key(a.name) in now.known for _, a in pairs):
        raise UserError(
            f"relation '{plan.relation}' of dataset '{plan.dataset}' changed while the fakes were "
            "made (another process added fakes); nothing stored; run the command again"
        )


def _store(
    store, plan: RelationPlan, pairs: list[tuple[Slot, Accepted]], screen: Screen, gen: dict, calls: int = 0
) -> FakesResult:
    """Write entities, facts and provenance in one transaction."""
    with store.transaction():
        _recheck(store, plan, pairs)
        gid = store.next_id("fake_generation", "generation_id")
        ent0, fact0 = store.next_id("entity", "entity_id"), store.next_id("fact", "fact_id")
        k = len(pairs)
        ids = pa.array(range(ent0, ent0 + k), pa.int32())
        fids = pa.array(range(fact0, fact0 + k), pa.int32())
        classes = pa.array([a.class_name for _, a in pairs], pa.string())
        positions = pa.array([s.position for s, _ in pairs], pa.int32())
        store.insert_arrow(
            "entity",
            {
                "entity_id": ids,
                "dataset_id": pa.array([plan.dataset_id] * k, pa.int32()),
                "name": [a.name for _, a in pairs],
                "kind": ["fake"] * k,
                "uri": pa.array([None] * k, pa.string()),
                "entity_class": classes,
            },
        )
        store.insert_arrow(
            "fact",
            {
                "fact_id": fids,
                "relation_id": pa.array([plan.relation_id] * k, pa.int32()),
                "position": positions,
                "entity_id": ids,
                "answer_id": pa.array([s.answer_id for s, _ in pairs], pa.int32()),
                "entity_kind": ["fake"] * k,
            },
        )
        row = _generation_row(gid, plan, k, screen, gen)
        store.insert_arrow("fake_generation", pa.Table.from_pylist([row], schema=_generation_schema(row)))
        store.insert_arrow(
            "fake_generation_fact",
            {
                "generation_id": pa.array([gid] * k, pa.int32()),
                "fact_id": fids,
                "entity_id": ids,
                "position": positions,
                "class_name": classes,
                "call_index": pa.array([a.call_index for _, a in pairs], pa.int32()),
                "raw_name": [a.raw for _, a in pairs],
            },
        )
    return FakesResult(
        gid,
        plan.dataset,
        plan.relation,
        gen["n_requested"],
        [(s.position, a.name, s.real_entity) for s, a in pairs],
        screen.summary(),
        calls,
        gen["status"],
    )


def _generation_row(gid: int, plan: RelationPlan, k: int, screen: Screen, gen: dict) -> dict:
    """The provenance row of one generation (``fake_generation``)."""
    return {
        "generation_id": gid,
        "dataset_id": plan.dataset_id,
        "relation_id": plan.relation_id,
        "n_accepted": k,
        "n_rejected": screen.n_rejected,
        "rejected_json": json.dumps(screen.summary(), ensure_ascii=False, sort_keys=True),
        "ctxprior_version": __version__,
        "created_at": utcnow(),
        **gen,
    }


def _generation_schema(row: dict) -> pa.Schema:
    ints = {"generation_id", "dataset_id", "relation_id", "n_requested", "n_accepted", "n_rejected"}
    return pa.schema(
        [
            (
                c,
                pa.int64()
                if c in ints or c == "seed"
                else pa.timestamp("us")
                if c == "created_at"
                else pa.string(),
            )
            for c in row
        ]
    )


# -- reading -------------------------------------------------------------------------------------
def list_fakes(store, dataset: str, relation: str | None = None) -> tuple[list[str], list[tuple]]:
    """(columns, rows): every fake of the dataset (or relation) with its real partner and source."""
    if relation is None:
        ds_id, rid = dataset_id(store, dataset), None
    else:
        ds_id, rid, _ = find_relation(store, dataset, relation)
    cur = store.execute(read_sql(SQL, "sql/list_fakes.sql"), [ds_id, rid])
    return [d[0] for d in cur.description], cur.fetchall()


def fakes_summary(store, dataset: str) -> tuple[list[str], list[tuple]]:
    """(columns, rows): per relation, real entities and fakes by source."""
    cur = store.execute(read_sql(SQL, "sql/fakes_summary.sql"), [dataset_id(store, dataset)])
    return [d[0] for d in cur.description], cur.fetchall()
