"""What every executor shares: how to load the model (``ModelSpec``), a worker's name, and the
``Executor`` interface."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from ..models import LoadedModel, load_model
from ..texts import UnitInput, UnitResult


@dataclass(frozen=True)
class ModelSpec:
    """How to load the model (picklable; workers load it themselves)."""

    name: str
    device: str = "auto"
    dtype: str = "auto"
    quantization: str | None = None

    def load(self) -> LoadedModel:
        from ... import faults  # crash tests (issue 8): CTXPRIOR_FAULT=model.load

        faults.hit("model.load")
        return load_model(self.name, device=self.device, dtype=self.dtype, quantization=self.quantization)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Executor(Protocol):
    def run(
        self, inputs: Iterable[UnitInput], progress: Callable[[int], None] | None = None
    ) -> Iterator[UnitResult]: ...

    def close(self) -> None: ...
