"""``LocalExecutor``: work units one after the other in this process."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..engine import Engine
from ..models import LoadedModel
from ..units import ScoreConfig, UnitInput, UnitResult, run_unit_checked
from .base import ModelSpec, worker_name


class LocalExecutor:
    """Units one by one in this process, with an already-loaded model (or a ModelSpec)."""

    def __init__(self, model: LoadedModel | ModelSpec, config: ScoreConfig, batch_size: int | None = None,
                 share_prefix: bool = True):
        self.lm = model.load() if isinstance(model, ModelSpec) else model
        self.config = config
        self.engine = Engine(self.lm, batch_size=batch_size, share_prefix=share_prefix)

    def run(self, inputs: Iterable[UnitInput],
            progress: Callable[[int], None] | None = None) -> Iterator[UnitResult]:
        worker = worker_name()
        for inp in inputs:
            sent = [0]

            def tick(n: int, total=inp.n_prompts) -> None:  # clamp to the unit's prompt count
                n = min(n, total - sent[0])
                if n > 0 and progress:
                    sent[0] += n
                    progress(n)

            res = run_unit_checked(self.engine, inp, self.config, worker, progress=tick)
            tick(inp.n_prompts)
            yield res

    def close(self) -> None:
        pass
