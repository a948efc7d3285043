"""A plain-text overview of a warehouse (`ctxprior info`)."""

from __future__ import annotations

import os

from .sqlfiles import read_sql
from .sqlshell import format_rows
from .storage.store import Store


def warehouse_info(store: Store) -> str:
    size = os.path.getsize(store.path) if os.path.exists(store.path) else 0
    lines = [f"warehouse {store.path} ({size / 1e6:.1f} MB), schema v{store.schema_version()}"]
    cur = store.execute(read_sql("ctxprior.ingest", "sql/info.sql"))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    lines.append("")
    lines.append(
        format_rows(cols, rows)
        if rows
        else "no datasets yet: `ctxprior ingest demo` or `ctxprior ingest yago-qec FILE`"
    )
    samples = store.query(read_sql("ctxprior.ingest", "sql/info_samples.sql"))
    lines.append("")
    if samples:
        lines.append(
            format_rows(["sample", "dataset", "design", "seed", "relations", "entities", "contexts"], samples)
        )
    else:
        lines.append("no samples yet: `ctxprior sample --dataset D ...`")
    runs = store.query(
        "SELECT run_id, kind, model, estimator, status, sample_id, started_at FROM run ORDER BY run_id"
    )
    lines.append("")
    if runs:
        lines.append(format_rows(["run", "kind", "model", "estimator", "status", "sample", "started"], runs))
    else:
        lines.append("no runs yet: `ctxprior score --sample S`")
    return "\n".join(lines)
