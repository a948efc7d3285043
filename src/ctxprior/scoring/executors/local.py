"""``LocalExecutor``: work units one after the other in this process (small ones in packs that
generate together, ``units.packs``), the next unit computing while the driver commits the last one."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator

from ..engine import Engine
from ..models import LoadedModel
from ..options import ScoreConfig
from ..texts import UnitInput, UnitResult
from ..units import PACK_ROWS, packs, prefetch_unit, run_units_checked
from .base import ModelSpec, worker_name

_DONE = object()


class _Stopped(BaseException):
    """Raised in the compute thread (from its progress callback) once the caller stopped listening:
    the unit it is on is dropped after the current batch, so the caller's join is short."""


class _Raised:
    def __init__(self, exc: BaseException):
        self.exc = exc


def _put(out: queue.Queue, item, stop: threading.Event) -> None:
    """Hand ``item`` to the caller unless it has stopped listening."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.1)
            return
        except queue.Full:
            continue


class LocalExecutor:
    """Units one by one in this process, with an already-loaded model (or a ModelSpec).

    The units are computed in a background thread, at most one finished unit ahead of the
    caller: while the driver commits unit k (the warehouse write, checkpoint and close), unit
    k + 1 is already on the device, so the GPU never waits for the warehouse. A Ctrl-C or error
    in the caller stops the thread after the unit it is on (its result is dropped, uncommitted).
    """

    def __init__(
        self,
        model: LoadedModel | ModelSpec,
        config: ScoreConfig,
        batch_size: int | None = None,
        share_prefix: bool = True,
    ):
        self.lm = model.load() if isinstance(model, ModelSpec) else model
        self.config = config
        self.engine = Engine(self.lm, batch_size=batch_size, share_prefix=share_prefix)

    def _compute(
        self,
        inputs: Iterable[UnitInput],
        out: queue.Queue,
        stop: threading.Event,
        progress: Callable[[int], None] | None,
    ) -> None:
        worker = worker_name()
        try:
            ahead = self._packs(inputs)
            nxt = next(ahead, None)
            while nxt is not None and not stop.is_set():
                pack, nxt = nxt, next(ahead, None)
                if nxt is not None:  # the next unit's prompts tokenize while this one computes
                    prefetch_unit(self.engine, nxt[0], self.config)
                sent, size = [0], sum(i.n_prompts for i in pack)

                def tick(n: int, total=size, sent=sent) -> None:
                    if stop.is_set():  # clamped to the pack's prompt count
                        raise _Stopped
                    n = min(n, total - sent[0])
                    if n > 0 and progress:
                        sent[0] += n
                        progress(n)

                for res in run_units_checked(self.engine, pack, self.config, worker, progress=tick):
                    tick(res.n_prompts)
                    _put(out, res, stop)
        except _Stopped:
            pass
        except BaseException as e:  # surfaced in the caller's thread
            _put(out, _Raised(e), stop)
        finally:
            _put(out, _DONE, stop)

    def _packs(self, inputs: Iterable[UnitInput]) -> Iterator[list[UnitInput]]:
        """The units as they come, a unit that ``packs`` together with the next such units while
        their generation prompts fit one generation batch (``Engine.generate_batch_size``, at
        least ``PACK_ROWS``)."""
        limit = max(PACK_ROWS, self.engine.generate_batch_size)
        pack: list[UnitInput] = []
        for inp in inputs:
            small = packs(inp, self.config)
            if pack and (not small or sum(i.n_pairs for i in pack) + inp.n_pairs > limit):
                yield pack
                pack = []
            pack.append(inp)
            if not small:
                yield pack
                pack = []
        if pack:
            yield pack

    def run(
        self, inputs: Iterable[UnitInput], progress: Callable[[int], None] | None = None
    ) -> Iterator[UnitResult]:
        results: queue.Queue = queue.Queue(maxsize=1)  # one finished unit waits for its commit
        stop = threading.Event()
        thread = threading.Thread(
            target=self._compute, args=(inputs, results, stop, progress), name="ctxprior-compute", daemon=True
        )
        thread.start()
        try:
            while (item := results.get()) is not _DONE:
                if isinstance(item, _Raised):
                    raise item.exc
                yield item
        finally:
            stop.set()  # the thread drops the unit it is on and ends
            # wait for it: a thread still inside torch when the interpreter exits aborts the process
            # ("terminate called without an active exception", exit 134; issue 27)
            thread.join()

    def close(self) -> None:
        pass
