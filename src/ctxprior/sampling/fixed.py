"""Sample design ``fixed``: every item of a fixed-context dataset (``ingest table --shape
contexts`` or a preset) with exactly its own passages, so ``ctxprior score --sample S`` scores
each item against its contexts (ψ: KL to the mixture over them, χ: their MI).

Each item is one fact of its own relation; each passage becomes a context of that relation with
``context_type`` = its type, ``answer_id`` = the answer it supports and ``entity_id`` = the item's
entity (so ``stg_persuasion.is_relevant`` is true). ``items``: the first N items in source order.
"""

from __future__ import annotations

from collections import defaultdict

from ..errors import UserError
from ..sqlfiles import read_sql
from ..storage.store import Store
from .draw import _dataset_id, _empty_columns, store_sample


def draw_fixed_sample(store: Store, dataset: str, items: int | None = None, seed: int = 11) -> int:
    """Store the sample of ``dataset``'s items (the first ``items``; all when None); its id."""
    if items is not None and items < 1:
        raise UserError(f"--items {items}: must be positive")
    ds_id = _dataset_id(store, dataset)
    rows = store.query(read_sql("ctxprior.sampling", "sql/fixed_sample_contexts.sql"), [ds_id])
    if not rows:
        raise UserError(
            f"dataset '{dataset}' has no fixed-context items; --design fixed samples a dataset loaded with "
            "`ctxprior ingest table` (--shape contexts) or a preset (nq-swap, conflictqa, counterfact)"
        )
    keep = list(dict.fromkeys(r[0] for r in rows))[:items]
    sample_id = store.next_id("sample", "sample_id")
    sf, cx = _empty_columns()
    ctx, kept = int(store.next_id("context", "context_id")), set(keep)
    ordinal: defaultdict[int, int] = defaultdict(int)
    for fid, rid, eid, _row, tid, ctype, aid, text in rows:
        if fid not in kept:
            continue
        if ordinal[rid] == 0:
            for k, v in (("sample_id", sample_id), ("fact_id", fid), ("relation_id", rid), ("ordinal", 0)):
                sf[k].append(v)
        for k, v in (
            ("context_id", ctx),
            ("sample_id", sample_id),
            ("relation_id", rid),
            ("ordinal", ordinal[rid]),
            ("context_template_id", tid),
            ("context_type", ctype),
            ("entity_id", eid),
            ("answer_id", aid),
            ("text", text),
        ):
            cx[k].append(v)
        ordinal[rid] += 1
        ctx += 1
    types = list(dict.fromkeys(cx["context_type"]))
    params = {"dataset": dataset, "design": "fixed", "items": items, "contexts": "each item's own passages"}
    store_sample(store, sample_id, ds_id, "fixed", seed, None, None, types, params, sf, cx)
    return sample_id
