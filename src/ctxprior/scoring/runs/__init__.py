"""How a persuasion run (ψ and χ over a sample) is scheduled, committed and resumed. The run row's
life cycle (start, resume lookup, close, cancel, SIGTERM) is ``storage.runs``, shared with DynamicQA
runs.

- ``score``: ``score_sample`` — resolve, validate, load, open the run row, skip done units,
  execute, commit, close (the module docstring lists the steps);
- ``plan``: the run's work units (relation x query form x entity shard, fixed order) and inputs;
- ``record``: the run's identity, finding a run to resume, and ``write_unit``: a unit's score rows
  and its ``run_unit`` row in ONE transaction — the only writer of score rows. Killing the process
  loses at most the unit in flight; rerunning the command (or ``--resume RUN``) continues and ends
  with exactly the rows an uninterrupted run writes;
- ``manage``: ``stored_device_dtype`` (listing and cancelling runs: ``storage.runs``).

May import: ``scoring`` (units, executors, models, estimators), ``schema``, ``errors``.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .manage import stored_device_dtype
    from .plan import auto_shard_size, load_inputs, plan_units
    from .record import RUN_KIND, find_resumable, write_unit
    from .score import RunSummary, score_sample

# each name's module, imported on first use: `runs prompts` (prompts.py -> plan, record) loads
# neither score.py nor the model stack it imports
_WHERE = {
    "stored_device_dtype": ".manage",
    "auto_shard_size": ".plan",
    "load_inputs": ".plan",
    "plan_units": ".plan",
    "RUN_KIND": ".record",
    "find_resumable": ".record",
    "write_unit": ".record",
    "RunSummary": ".score",
    "score_sample": ".score",
}
__all__ = [
    "RUN_KIND",
    "RunSummary",
    "auto_shard_size",
    "find_resumable",
    "load_inputs",
    "plan_units",
    "score_sample",
    "stored_device_dtype",
    "write_unit",
]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
