"""Ray executor: work units on a Ray cluster, results as Parquet shards, the driver commits.

Shape (see docs/readme/scale.md):

- ``RayExecutor`` starts (or joins, ``address=``) a Ray cluster and creates ``workers`` actors
  (``ScoringWorker``), each loading the model ONCE (``gpus_per_worker`` GPUs each, else one CPU).
- The driver keeps every worker busy (two units in flight per worker), and yields a
  ``UnitResult`` as each unit finishes; ``scoring.runs.score_sample`` then commits the unit's rows
  and its ``run_unit`` row in one transaction. Only the driver opens the warehouse.
- A worker writes its unit's tables as Parquet files into a fresh folder
  ``<shard_dir>/run_<id>/unit_<n>.a<attempt>.<pid>/<table>.parquet`` (written under a temporary
  name, then renamed), and returns the folder and row counts; the driver reads the files, checks
  the counts, and removes the folder after the commit. On several nodes ``shard_dir`` must be a
  folder every node and the driver see under the same path (NFS, a shared volume).
- A worker that dies mid-unit (killed, OOM, node lost): Ray restarts the actor
  (``max_restarts``) and the driver re-dispatches the unit, to another worker when there is one,
  up to ``max_attempts`` times; a unit is committed at most once (``write_unit`` refuses a unit
  already done), so nothing is lost or doubled. A Python error inside a unit (NaN scores, a
  prompt too long) is not retried: the unit is marked failed with its reason.
- A worker whose unit was lost is probed (``info``) until it answers. Ray says "unavailable"
  (``ActorUnavailableError``) while it restarts the actor, or before it has noticed the death;
  that is no verdict, and the probe is sent again after a growing pause. Only "died"
  (``ActorDiedError``: Ray has given up restarting it) more than ``max_restarts`` times, or no
  answer within ``probe_timeout`` seconds, puts the worker out of the run.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ... import faults
from ..models import LoadedModel
from ..options import ScoreConfig
from ..texts import SCORE_TABLES, UnitInput, UnitResult
from ..units import run_units_checked
from .base import ModelSpec, worker_name

TABLES = SCORE_TABLES
FORWARD_ENV = ("CTXPRIOR_", "HF_", "TRANSFORMERS_")  # env vars handed to workers
PROBE_TIMEOUT = 1800.0  # s: a lost worker that has not answered by then is out of the run
PROBE_PAUSE = (0.25, 8.0)  # s: the first and the longest pause before probing an unavailable worker again


class ScoringWorker:
    """A Ray actor: loads the model once, computes units, writes Parquet shards."""

    def __init__(
        self, model, config: ScoreConfig, batch_size: int | None, shard_dir: str, threads: int | None = None
    ):
        import torch

        from ..engine import Engine

        if threads:
            torch.set_num_threads(int(threads))
        faults.hit("model.load")
        if isinstance(model, ModelSpec):
            self.lm = model.load()
        else:
            self.lm = model
        self.config = config
        self.engine = Engine(self.lm, batch_size=batch_size)
        self.shard_dir = shard_dir
        self.name = worker_name()

    def info(self) -> dict:
        return {"pid": os.getpid(), "worker": self.name, "device": self.lm.device}

    def score(self, inp: UnitInput, attempt: int) -> dict:
        seen = [0]

        def tick(n: int) -> None:
            seen[0] += n
            if seen[0] == n:  # after the first batch of the unit
                faults.hit("worker.unit")

        (res,) = run_units_checked(self.engine, [inp], self.config, self.name, progress=tick)
        out = {
            "unit_id": inp.spec.unit_id,
            "error": res.error,
            "seconds": res.seconds,
            "worker": res.worker,
            "n_prompts": res.n_prompts,
            "engine": res.engine,
            "dir": None,
            "rows": {},
        }
        if res.error is None:
            out["dir"], out["rows"] = write_shard(
                self.shard_dir, inp.run_id, inp.spec.unit_id, attempt, res.tables
            )
        faults.hit("worker.shard_written")
        return out


def write_shard(shard_dir: str, run_id: int, unit_id: int, attempt: int, tables: dict) -> tuple[str, dict]:
    """Write a unit's tables as Parquet files into a new folder (atomic rename); return it."""
    import pyarrow.parquet as pq

    base = Path(shard_dir) / f"run_{run_id}"
    base.mkdir(parents=True, exist_ok=True)
    final = base / f"unit_{unit_id}.a{attempt}.{os.getpid()}"
    tmp = base / f".tmp.{final.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    rows = {}
    for name in TABLES:
        t = tables.get(name)
        if t is None:
            continue
        pq.write_table(t, tmp / f"{name}.parquet")
        rows[name] = t.num_rows
    (tmp / "manifest.json").write_text(json.dumps({"run_id": run_id, "unit_id": unit_id, "rows": rows}))
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return str(final), rows


def read_shard(folder: str, rows: dict) -> dict:
    import pyarrow.parquet as pq

    p = Path(folder)
    if not p.is_dir():
        raise RuntimeError(
            f"shard folder {folder} is not visible to the driver; on several nodes "
            "--shard-dir must be a shared folder (same path everywhere)"
        )
    out = {}
    for name, n in rows.items():
        t = pq.read_table(p / f"{name}.parquet")
        if t.num_rows != n:
            raise RuntimeError(f"shard {p / name}.parquet has {t.num_rows} rows, expected {n}")
        out[name] = t
    return out


def _lost_errors():
    from ray import exceptions as rx

    names = (
        "RayActorError",
        "ActorDiedError",
        "ActorUnavailableError",
        "WorkerCrashedError",
        "ObjectLostError",
        "OwnerDiedError",
        "NodeDiedError",
    )
    return tuple(getattr(rx, n) for n in names if hasattr(rx, n))


class RayExecutor:
    """Executor protocol (``run``/``close``) on Ray actors; see the module docstring."""

    def __init__(
        self,
        model: ModelSpec | LoadedModel,
        config: ScoreConfig,
        batch_size: int | None = None,
        *,
        shard_dir: str,
        workers: int | None = None,
        gpus_per_worker: float | None = 0,
        address: str | None = None,
        max_attempts: int = 3,
        max_restarts: int = 2,
        probe_timeout: float = PROBE_TIMEOUT,
        in_flight: int = 2,
        threads: int | None = None,
        log: Callable[[str], None] | None = None,
    ):
        import ray

        self.log = log or (lambda m: print(m, file=sys.stderr))
        self.config = config
        self.shard_dir = str(shard_dir)
        self.max_attempts = max_attempts
        self.max_restarts = max_restarts
        self.probe_timeout = probe_timeout
        self.in_flight = max(1, in_flight)
        self._owns_ray = False
        ncpu = os.cpu_count() or 1
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARD_ENV)}
        if not ray.is_initialized():
            kw: dict[str, Any] = dict(
                include_dashboard=False,
                logging_level=logging.ERROR,
                log_to_driver=False,
                configure_logging=True,
            )
            if address:
                ray.init(address=address, runtime_env={"env_vars": env} if env else None, **kw)
            else:
                want = workers or ncpu
                ray.init(num_cpus=max(ncpu, want), num_gpus=None, _node_ip_address="127.0.0.1", **kw)
            self._owns_ray = True
        res = ray.cluster_resources()
        if gpus_per_worker is None:
            gpus_per_worker = 1.0 if res.get("GPU", 0) >= 1 else 0.0
        if workers is None:
            workers = (
                int(res.get("GPU", 0) // gpus_per_worker) if gpus_per_worker else int(res.get("CPU", ncpu))
            )
        if workers < 1:
            raise RuntimeError(f"the Ray cluster has no room for a worker with {gpus_per_worker} GPU(s)")
        if threads is None and not gpus_per_worker:  # torch threads per CPU worker
            threads = max(1, int(res.get("CPU", ncpu) // workers))
        opts: dict[str, Any] = dict(
            num_cpus=1, num_gpus=gpus_per_worker or 0, max_restarts=max_restarts, max_task_retries=0
        )
        if env and not address:
            opts["runtime_env"] = {"env_vars": env}
        actor_cls = ray.remote(ScoringWorker).options(**opts)
        # kept alive on self: a restarted actor re-reads its constructor arguments
        self._model_ref = model_ref = ray.put(model) if isinstance(model, LoadedModel) else model
        self.actors = [
            actor_cls.remote(model_ref, config, batch_size, self.shard_dir, threads) for _ in range(workers)
        ]
        self.workers = workers
        self.retries = 0
        self.lost: list[str] = []

    def run(
        self, inputs: Iterable[UnitInput], progress: Callable[[int], None] | None = None
    ) -> Iterator[UnitResult]:
        import ray

        lost = _lost_errors()
        inputs = list(inputs)
        for inp in inputs:  # leftovers of a crashed driver: computed, never committed
            for old in Path(self.shard_dir).glob(f"run_{inp.run_id}/*unit_{inp.spec.unit_id}.a*"):
                shutil.rmtree(old, ignore_errors=True)
        d = _Dispatch(self, inputs)
        while d.queue or d.inflight:
            d.probe_due()
            if d.all_gone():  # every worker is out of the run
                yield from d.fail_queued()
                break
            d.submit()
            waiting = list(d.inflight) + list(d.pings)
            if not waiting:  # only workers waiting for their next probe
                time.sleep(d.next_probe_in() or 0.0)
                continue
            ready, _ = ray.wait(waiting, num_returns=1, timeout=d.next_probe_in())
            for ref in ready:
                if ref in d.pings:
                    d.on_ping(ref, lost)
                else:
                    yield from self._collect(d, ref, lost, progress)

    def _collect(self, d: _Dispatch, ref, lost: tuple, progress) -> Iterator[UnitResult]:
        """The result of one finished unit task: delivered, retried (its worker died) or failed."""
        import ray

        inp, attempt, i = d.inflight.pop(ref)
        d.load[i] -= 1
        try:
            meta = ray.get(ref)
        except lost as e:  # the worker died: retry the unit, elsewhere if possible
            yield from self._worker_lost(d, inp, attempt, i, e)
            return
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None) or e
            msg = f"{type(cause).__name__}: {cause}".splitlines()[0][:500]
            yield UnitResult(spec=inp.spec, error=msg, worker="ray", n_prompts=inp.n_prompts)
            return
        yield from self._deliver(inp, meta, progress)

    def _worker_lost(
        self, d: _Dispatch, inp: UnitInput, attempt: int, i: int, e: Exception
    ) -> Iterator[UnitResult]:
        """Queue the unit again (avoiding worker ``i``) or, after ``max_attempts``, fail it."""
        why = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        self.lost.append(f"unit {inp.spec.unit_id} attempt {attempt}: {type(e).__name__}")
        d.worker_died(i)
        if attempt < self.max_attempts:
            self.retries += 1
            self.log(
                f"unit {inp.spec.unit_id}: worker lost ({type(e).__name__}); retrying (attempt {attempt + 1})"
            )
            d.queue.appendleft((inp, attempt + 1, i))
            return
        yield UnitResult(
            spec=inp.spec, error=f"worker lost {attempt} times: {why}", worker="ray", n_prompts=inp.n_prompts
        )

    def _deliver(self, inp: UnitInput, meta: dict, progress) -> Iterator[UnitResult]:
        tables = read_shard(meta["dir"], meta["rows"]) if meta["error"] is None else {}
        faults.hit("unit.received")
        yield UnitResult(
            spec=inp.spec,
            tables=tables,
            error=meta["error"],
            seconds=meta["seconds"],
            worker=meta["worker"],
            n_prompts=meta["n_prompts"],
            engine=meta.get("engine") or {},
        )
        # back here only after the driver committed the unit
        if progress:
            progress(inp.n_prompts)
        if meta["dir"]:
            shutil.rmtree(meta["dir"], ignore_errors=True)

    def close(self) -> None:
        import ray

        for a in getattr(self, "actors", []):
            try:
                ray.kill(a)
            except Exception:
                pass
        self.actors = []
        try:
            for d in Path(self.shard_dir).glob("run_*"):
                if d.is_dir() and not any(d.iterdir()):
                    d.rmdir()
            if Path(self.shard_dir).is_dir() and not any(Path(self.shard_dir).iterdir()):
                Path(self.shard_dir).rmdir()
        except OSError:
            pass
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False


class _Dispatch:
    """The book-keeping of one ``RayExecutor.run``: units queued (input, attempt, worker to
    avoid), units in flight per worker, and workers whose unit was lost, probed until Ray has
    restarted them (see the module docstring)."""

    def __init__(self, ex: RayExecutor, inputs: list[UnitInput]):
        self.ex = ex
        self.queue: deque[tuple[UnitInput, int, int | None]] = deque((inp, 1, None) for inp in inputs)
        self.inflight: dict = {}  # ref -> (input, attempt, actor index)
        self.pings: dict = {}  # ref -> actor index: a lost worker is used again once it answers
        n = len(ex.actors)
        self.load, self.died, self.state = [0] * n, [0] * n, ["ready"] * n
        self.lost_at: list[float] = [0.0] * n  # when the worker's probing began
        self.probes: list[int] = [0] * n  # probes answered "unavailable" in a row
        self.due: dict[int, float] = {}  # actor index -> when to probe it again

    def ready(self) -> list[int]:
        return [i for i, s in enumerate(self.state) if s == "ready"]

    def all_gone(self) -> bool:
        return not self.ready() and not self.pings and not self.inflight and not self.due

    def fail_queued(self) -> Iterator[UnitResult]:
        while self.queue:
            inp, _, _ = self.queue.popleft()
            yield UnitResult(
                spec=inp.spec, error="no Ray worker left (all died)", worker="ray", n_prompts=inp.n_prompts
            )

    def submit(self) -> None:
        """Keep every ready worker at ``in_flight`` units, least loaded first."""
        ready = self.ready()
        while self.queue:
            free = [i for i in ready if self.load[i] < self.ex.in_flight]
            if not free:
                break
            inp, attempt, avoid = self.queue[0]
            pick = [i for i in free if i != avoid] or free
            i = min(pick, key=lambda j: (self.load[j], j))
            self.queue.popleft()
            ref = self.ex.actors[i].score.remote(inp, attempt)  # type: ignore[attr-defined]
            self.inflight[ref] = (inp, attempt, i)
            self.load[i] += 1

    def worker_died(self, i: int) -> None:
        """A unit on worker ``i`` was lost: stop sending it units and probe it."""
        if self.state[i] != "ready":
            return  # already being probed (its other in-flight units are lost too)
        self.state[i], self.lost_at[i], self.probes[i] = "probing", _now(), 0
        self._probe(i)

    def _probe(self, i: int) -> None:
        self.pings[self.ex.actors[i].info.remote()] = i  # type: ignore[attr-defined]

    def on_ping(self, ref, lost: tuple) -> None:
        """A probed worker answered (ready again) or did not."""
        import ray

        i = self.pings.pop(ref)
        try:
            ray.get(ref)
        except lost as e:
            self.probe_failed(i, e)
            return
        self.answered(i)

    def answered(self, i: int) -> None:
        self.state[i], self.probes[i] = "ready", 0
        self.due.pop(i, None)
        self.ex.log(f"worker {i} is back")

    def probe_failed(self, i: int, e: Exception) -> None:
        """Probe worker ``i`` again after a pause, or put it out of the run: Ray said it died
        (restarts used up) more than ``max_restarts`` times, or ``probe_timeout`` has passed."""
        from ray.exceptions import ActorDiedError

        if isinstance(e, ActorDiedError):
            self.died[i] += 1
        waited = _now() - self.lost_at[i]
        if self.died[i] > self.ex.max_restarts or waited > self.ex.probe_timeout:
            self.state[i] = "dead"
            self.ex.log(f"worker {i} is out of the run ({type(e).__name__} after {waited:.0f} s)")
            return
        first, longest = PROBE_PAUSE
        self.due[i] = _now() + min(longest, first * 2 ** self.probes[i])
        self.probes[i] += 1

    def probe_due(self) -> None:
        """Send the probes whose pause is over; put out workers probed past ``probe_timeout``."""
        now = _now()
        for i, t in list(self.due.items()):
            if t <= now:
                del self.due[i]
                self._probe(i)
        for ref, i in list(self.pings.items()):
            if now - self.lost_at[i] > self.ex.probe_timeout:  # a restart that never ends
                del self.pings[ref]
                self.state[i] = "dead"
                self.ex.log(f"worker {i} is out of the run (no answer in {self.ex.probe_timeout:.0f} s)")

    def next_probe_in(self) -> float | None:
        """Seconds until the next probe is due (at most 1 s while a probe is out, so that its
        timeout is seen); None when no worker is being probed."""
        if not self.due and not self.pings:
            return None
        return max(0.0, min([1.0, *(t - _now() for t in self.due.values())]))


def default_shard_dir(db_path: str) -> str:
    return f"{db_path}.shards"


def _now() -> float:
    return time.perf_counter()
