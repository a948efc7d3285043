"""Executors compute work units; only the driver (``scoring.runs``) writes to the warehouse.

Interface (``base.Executor``): ``executor.run(inputs, progress) -> iterator of UnitResult`` (any
order; each result names its unit), and ``executor.close()``. A unit's result holds Arrow tables
of rows or an error string. ``local.LocalExecutor`` computes units one after the other in this
process; ``ray_cluster.RayExecutor`` loads the model from a ``ModelSpec`` in each Ray worker and
calls ``units.run_units_checked`` there. ``executor_factory`` picks one from the CLI/API options.

May import: ``scoring`` (units, engine, models), ``errors``, ``faults``; never the warehouse.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Executor, ModelSpec, worker_name
from .local import LocalExecutor

if TYPE_CHECKING:
    from ..options import ScoreRequest

__all__ = ["Executor", "LocalExecutor", "ModelSpec", "executor_factory", "worker_name"]


def executor_factory(db: str, request: ScoreRequest, log: Callable[[str], None] | None = None):
    """The ``executor_factory`` that ``score_sample`` takes: None for local, else one making a
    RayExecutor (validated here, before any model is loaded), from the request's executor options
    (``executor``, ``device``, ``dtype``, ``workers``, ``address``, ``gpus_per_worker``,
    ``shard_dir``: ``EXECUTOR_OPTIONS`` in ``scoring/options.py``)."""
    from ...errors import UserError

    executor, workers, gpus_per_worker = request.executor, request.workers, request.gpus_per_worker
    address, device, dtype = request.address, request.device, request.dtype
    if executor not in ("local", "ray"):
        raise UserError(f"--executor {executor}: choose local or ray")
    if executor == "local":
        return None
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    if gpus_per_worker is not None and gpus_per_worker < 0:
        raise UserError(f"--gpus-per-worker {gpus_per_worker}: must be >= 0")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UserError("--executor ray: Ray is not installed; pip install 'ray[default]'") from None
    from .ray_cluster import default_shard_dir

    folder = request.shard_dir or default_shard_dir(db)
    if gpus_per_worker is None:  # one worker per GPU when there are GPUs, else CPU workers
        gpus_per_worker = 1.0 if _cluster_gpus(address) else 0.0
    return RayFactory(device, dtype, workers, address, gpus_per_worker, folder, log)


@dataclass(frozen=True)
class RayFactory:
    """What ``executor_factory`` returns for ``--executor ray``: called with (model, config,
    batch size), it makes the run's RayExecutor; ``worker_gpus``: whether its workers use GPUs."""

    device: str
    dtype: str
    workers: int | None
    address: str | None
    gpus_per_worker: float
    shard_dir: str
    log: Callable[[str], None] | None

    @property
    def worker_gpus(self) -> bool:
        return self.gpus_per_worker > 0

    def __call__(self, lm, config, batch_size):
        from .ray_cluster import RayExecutor

        spec = ModelSpec(lm.model_id, device=self.device, dtype=self.dtype, quantization=lm.quantization)
        return RayExecutor(
            spec,
            config,
            batch_size,
            shard_dir=self.shard_dir,
            workers=self.workers,
            gpus_per_worker=self.gpus_per_worker,
            address=self.address,
            log=self.log,
        )


def _cluster_gpus(address: str | None) -> float:
    """GPUs of the cluster the run will use: this machine's for a local cluster, else the
    cluster's resources (joining it now; the executor then finds Ray initialized)."""
    if address is None:
        import torch

        return float(torch.cuda.device_count())
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    return float(ray.cluster_resources().get("GPU", 0))
