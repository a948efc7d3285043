"""Worker side of co-occurrence counting: one shard in, counts out (a process-pool or Ray task).

Kept free of the warehouse / SQLAlchemy imports so worker processes start fast.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .corpus import ShardStats, _one_line, iter_batches
from .counting import Counter, CountSpec


def count_shard(spec: CountSpec, path: str, progress: Callable[[int], None] | None = None) -> dict:
    """Count one shard file. Never raises for bad data: returns {'error': ...} instead."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    stats = ShardStats()
    ctr = Counter(spec)
    try:
        for texts in iter_batches(path, stats, spec.text_field, progress=progress):
            ctr.add_texts(texts)
    except Exception as e:  # corrupt compressed data, I/O errors: the shard is not stored
        return {"path": path, "error": f"{path}: {_one_line(e)}"}
    c = ctr.counts
    pnz = np.flatnonzero(c.pair_counts)
    nnz = np.flatnonzero(c.name_counts)
    return {
        "path": path,
        "error": None,
        "stats": stats,
        "n_words": int(c.n_words),
        "pair_ids": pnz.astype(np.int32),
        "pair_counts": c.pair_counts[pnz],
        "name_ids": nnz.astype(np.int32),
        "name_counts": c.name_counts[nnz],
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


_WORKER: dict[str, Any] = {}


def _init_worker(spec: CountSpec, counter) -> None:
    _WORKER["spec"] = spec
    _WORKER["counter"] = counter


def _pool_task(path: str) -> dict:
    counter = _WORKER["counter"]

    def progress(n: int) -> None:
        with counter.get_lock():
            counter.value += n

    return count_shard(_WORKER["spec"], path, progress)


def _ray_task(spec: CountSpec, path: str) -> dict:
    return count_shard(spec, path)
