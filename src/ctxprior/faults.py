"""Fault injection for crash tests: ``CTXPRIOR_FAULT`` names points where the process dies.

Syntax: ``CTXPRIOR_FAULT="point[@n][:action][,point[@n][:action]...]"``

- ``point``: a name passed to :func:`hit` (see ``POINTS``); ``@n``: fire on the n-th time this
  process reaches the point (default 1); ``@n+``: every time from the n-th on.
- ``action``: ``kill`` (SIGKILL this process; the default), ``exit`` (``os._exit(70)``),
  ``raise`` (``RuntimeError``), ``sleep=S`` (pause S seconds: widen a window for a race test).
- ``CTXPRIOR_FAULT_ONCE=DIR``: a fired fault leaves ``DIR/<point>`` and never fires again in any
  process (so a restarted Ray worker does not die a second time). The marker is created with
  ``O_EXCL``: of several processes arriving at the same moment exactly one fires.
- ``CTXPRIOR_FAULT_FIRES=N`` (with ``CTXPRIOR_FAULT_ONCE``): up to N firings in all processes
  together (markers ``DIR/<point>``, ``DIR/<point>.2`` ... ``DIR/<point>.N``): every Ray worker
  dying once, at the same time.

Without the variable :func:`hit` is one dictionary lookup; nothing is imported.
"""

from __future__ import annotations

import os
import signal
import time

ENV = "CTXPRIOR_FAULT"
ONCE_ENV = "CTXPRIOR_FAULT_ONCE"
FIRES_ENV = "CTXPRIOR_FAULT_FIRES"

POINTS = {
    "model.load": "driver or worker, just before the model is loaded",
    "store.connect": "a brief writer is about to (re)open the warehouse",
    "tx.before_commit": "inside a transaction, all statements run, COMMIT not yet sent",
    "tx.after_commit": "COMMIT returned, before the checkpoint / close of a brief writer",
    "store.release": "a brief writer checkpointed, about to close the file",
    "unit.received": "driver: a unit's result (Parquet shard) arrived, not yet committed",
    "worker.unit": "Ray worker: in the middle of computing a unit (after its first batch)",
    "worker.shard_written": "Ray worker: shard files written, result not yet returned",
    "import.verified": "import parquet / pull: every shard's sha256 checked, not yet read",
    "outputs.replacing": "a single output file (a figure, the report, the corpus) checked, not yet opened",
    "inputs.copied": "covariates add / kg-degree: each file copied privately and hashed, not yet read",
}

_counts: dict[str, int] = {}
_spec_cache: tuple[str, list[tuple[str, int, bool, str]]] | None = None


def _parse(text: str) -> list[tuple[str, int, bool, str]]:
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        head, _, action = part.partition(":")
        point, _, n = head.partition("@")
        if point not in POINTS:
            raise ValueError(f"{ENV}: unknown point {point!r}; the points are {', '.join(POINTS)}")
        every = n.endswith("+")
        out.append((point, int(n.rstrip("+") or 1), every, action or "kill"))
    return out


def active() -> bool:
    return bool(os.environ.get(ENV))


def hit(point: str) -> None:
    """Count one arrival at ``point``; act if CTXPRIOR_FAULT says so."""
    global _spec_cache
    text = os.environ.get(ENV)
    if not text:
        return
    if _spec_cache is None or _spec_cache[0] != text:
        _spec_cache = (text, _parse(text))
    n = _counts[point] = _counts.get(point, 0) + 1
    for p, at, every, action in _spec_cache[1]:
        if p != point or not (n == at or (every and n >= at)):
            continue
        once = os.environ.get(ONCE_ENV)
        if once and not _claim(once, point, n):
            continue
        _act(action, point, n)


def _claim(folder: str, point: str, n: int) -> bool:
    """Take one of the ``CTXPRIOR_FAULT_FIRES`` firings of ``point`` (atomically); False if none left."""
    os.makedirs(folder, exist_ok=True)
    for k in range(1, int(os.environ.get(FIRES_ENV) or 1) + 1):
        marker = os.path.join(folder, point if k == 1 else f"{point}.{k}")
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()} {n}\n")
        return True
    return False


def _act(action: str, point: str, n: int) -> None:
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(10)  # not reached
    elif action == "exit":
        os._exit(70)
    elif action == "raise":
        raise RuntimeError(f"injected fault at {point} (#{n})")
    elif action.startswith("sleep="):
        time.sleep(float(action.split("=", 1)[1]))
    else:
        raise ValueError(f"{ENV}: unknown action {action!r}")


def reset() -> None:
    """Forget the arrival counts (tests running several scenarios in one process)."""
    _counts.clear()
