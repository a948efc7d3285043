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

Import each from its module (``from ctxprior.scoring.runs.score import score_sample``): the package
imports none of them, so ``runs prompts`` (``prompts`` -> ``plan``, ``record``) loads no model stack.

May import: ``scoring`` (units, executors, models, estimators), ``schema``, ``errors``.
"""
