"""A plain-text overview of a warehouse (`ctxprior info`)."""

from __future__ import annotations

import os

from .schema.warehouse import Warehouse
from .sqlfiles import read_sql
from .sqlshell import format_rows


def warehouse_info(wh: Warehouse) -> str:
    size = os.path.getsize(wh.path) if os.path.exists(wh.path) else 0
    lines = [f"warehouse {wh.path} ({size / 1e6:.1f} MB), schema v{wh.schema_version()}"]
    cur = wh.execute(read_sql("ctxprior.ingest", "sql/info.sql"))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    lines.append("")
    lines.append(format_rows(cols, rows) if rows else "no datasets yet: `ctxprior ingest demo` or `ctxprior ingest yago-qec FILE`")
    samples = wh.query(read_sql("ctxprior.ingest", "sql/info_samples.sql"))
    lines.append("")
    if samples:
        lines.append(format_rows(["sample", "dataset", "design", "seed", "relations", "entities", "contexts"], samples))
    else:
        lines.append("no samples yet: `ctxprior sample --dataset D ...`")
    runs = wh.query("SELECT run_id, kind, model, estimator, status, sample_id, started_at FROM run ORDER BY run_id")
    lines.append("")
    if runs:
        lines.append(format_rows(["run", "kind", "model", "estimator", "status", "sample", "started"], runs))
    else:
        lines.append("no runs yet: `ctxprior score --sample S`")
    return "\n".join(lines)
