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

from .manage import stored_device_dtype
from .plan import auto_shard_size, load_inputs, plan_units
from .record import RUN_KIND, find_resumable, write_unit
from .score import RunSummary, score_sample

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
