"""DynamicQA samples for the persuasion machinery: the chosen facts (first N per partition in
file order) with their original and counter-memory snippets as contexts, so ``ctxprior score``
(first-token and answer-set KL) runs on the same facts as ``score-dynamic``."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence

import pyarrow as pa

from ..errors import UserError
from ..sampling.draw import store_sample
from ..sqlfiles import read_sql
from ..storage.store import Store
from .ingest import PARTITIONS
from .options import PARTITIONS_OPTION


def resolve_dataset(store: Store, dataset: str) -> int:
    """The id of DynamicQA dataset ``dataset``; UserError naming the DynamicQA datasets there are."""
    row = store.query("SELECT dataset_id, source_format FROM dataset WHERE name = ?", [dataset])
    if not row:
        names = [
            r[0] for r in store.query("SELECT name FROM dataset WHERE source_format = 'dynamicqa' ORDER BY 1")
        ]
        raise UserError(
            f"unknown dataset '{dataset}' in {store.path}; DynamicQA datasets here: "
            f"{', '.join(names) or 'none (run `ctxprior ingest dynamicqa DIR` first)'}"
        )
    if row[0][1] != "dynamicqa":
        raise UserError(f"dataset '{dataset}' is a {row[0][1]} dataset, not DynamicQA")
    return int(row[0][0])


def parse_partitions(spec: str | Sequence[str] | None) -> list[str]:
    """'static,temporal' (or a list, or None = all) -> partitions in their canonical order;
    checked by the declared ``--partition`` option."""
    if spec is None:
        return list(PARTITIONS)
    raw = spec.split(",") if isinstance(spec, str) else list(spec)
    items = tuple(s.strip().lower() for s in raw if s.strip())
    PARTITIONS_OPTION.check(items)
    return [p for p in PARTITIONS if p in items]


def select_facts(store: Store, dataset_id: int, partitions: Iterable[str], limit: int | None) -> list[int]:
    """Fact ids: per partition, the first ``limit`` rows in file order (all when limit is None)."""
    if limit is not None and limit <= 0:
        raise UserError(f"--limit {limit}: must be positive")
    out: list[int] = []
    for p in partitions:
        ids = [
            r[0]
            for r in store.query(
                "SELECT fact_id FROM dynamicqa_fact WHERE dataset_id = ? AND partition = ? ORDER BY source_row",
                [dataset_id, p],
            )
        ]
        out.extend(ids if limit is None else ids[:limit])
    return out


def make_sample(
    store: Store,
    dataset: str = "dynamicqa",
    partitions: str | Sequence[str] | None = None,
    limit: int | None = None,
    reuse: bool = True,
) -> int:
    """A sample whose contexts are each selected fact's original and counter-memory snippets.

    The facts are the first ``limit`` per partition in file order. Contexts belong to the fact's
    relation, so the persuasion scorer (which pairs every sampled fact with every context of its
    relation) scores a static/temporal fact against the snippets of the other sampled facts of the
    same property too (relevant = same entity); a disputable fact has its own relation, hence
    exactly its two contexts. ``dynamicqa_context`` maps each context to (fact, condition).
    With ``reuse``, an existing identical sample is returned instead of a new one.
    """
    ds_id = resolve_dataset(store, dataset)
    parts = parse_partitions(partitions)
    params = {
        "dataset": dataset,
        "partitions": parts,
        "limit": limit,
        "design": "dynamicqa",
        "contexts": "original (obj) and counter (replace_name) snippet per fact",
    }
    pj = json.dumps(params, sort_keys=True)
    if reuse:
        old = store.scalar(read_sql("ctxprior.dynamicqa", "sql/reuse_sample.sql"), [ds_id, pj])
        if old is not None:
            return int(old)
    fact_ids = select_facts(store, ds_id, parts, limit)
    if not fact_ids:
        raise UserError(f"dataset '{dataset}' has no facts in partition(s) {', '.join(parts)}")
    sample_id = store.next_id("sample", "sample_id")
    sf, cx, mp = _sample_rows(store, fact_ids, sample_id, int(store.next_id("context", "context_id")))
    with store.transaction():
        store_sample(
            store, sample_id, ds_id, "dynamicqa", 0, limit, 2, ["original", "counter"], params, sf, cx
        )
        store.insert_arrow(
            "dynamicqa_context",
            pa.table(
                {
                    "context_id": pa.array(mp["context_id"], pa.int64()),
                    "sample_id": pa.array(mp["sample_id"], pa.int32()),
                    "fact_id": pa.array(mp["fact_id"], pa.int32()),
                    "condition": pa.array(mp["condition"], pa.string()),
                }
            ),
        )
    return sample_id


def sample_counts(store: Store, sample_id: int) -> tuple[int, int]:
    """(facts, contexts) of sample ``sample_id``."""
    n_f, n_c = store.query(read_sql("ctxprior.dynamicqa", "sql/sample_counts.sql"), [sample_id, sample_id])[0]
    return int(n_f), int(n_c)


def _sample_rows(store: Store, fact_ids: list[int], sample_id: int, ctx: int) -> tuple[dict, dict, dict]:
    """Column lists of ``sample_fact``, ``context`` (each fact's original snippet rendered with obj,
    its counter snippet with replace_name) and ``dynamicqa_context``; context ids from ``ctx``."""
    sf: dict[str, list] = defaultdict(list)
    cx: dict[str, list] = defaultdict(list)
    mp: dict[str, list] = defaultdict(list)
    fact_ord: dict[int, int] = defaultdict(int)
    ctx_ord: dict[int, int] = defaultdict(int)
    seen_f: set[int] = set()
    rows = store.query(read_sql("ctxprior.dynamicqa", "sql/sample_contexts.sql"), [fact_ids])
    for fid, rid, eid, aid, aname, caid, caname, tid, ctype, tpl in rows:
        if fid not in seen_f:
            seen_f.add(fid)
            for k, v in (
                ("sample_id", sample_id),
                ("fact_id", fid),
                ("relation_id", rid),
                ("ordinal", fact_ord[rid]),
            ):
                sf[k].append(v)
            fact_ord[rid] += 1
        filled_aid, filled = (aid, aname) if ctype == "original" else (caid, caname)
        text = tpl.format(answer=filled) + "\n"
        for k, v in (
            ("context_id", ctx),
            ("sample_id", sample_id),
            ("relation_id", rid),
            ("ordinal", ctx_ord[rid]),
            ("context_template_id", tid),
            ("context_type", ctype),
            ("entity_id", eid),
            ("answer_id", filled_aid),
            ("text", text),
        ):
            cx[k].append(v)
        for k, v in (("context_id", ctx), ("sample_id", sample_id), ("fact_id", fid), ("condition", ctype)):
            mp[k].append(v)
        ctx_ord[rid] += 1
        ctx += 1
    return sf, cx, mp
