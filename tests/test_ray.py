"""Ray-distributed scoring (issue 8): one local Ray instance (127.0.0.1) for the module.

- ray == local, row for row (tiny model; SmolLM2 on a few prompts);
- a Ray worker SIGKILLed in the middle of a unit: the unit is retried on another worker, nothing lost
  or doubled; both workers SIGKILLed at once: the driver waits for Ray to restart them;
- the driver dying between a worker's shard write and its commit: the shard is not committed, the
  resumed run recomputes the unit and ends identical; shard folders are cleaned up.
"""

from __future__ import annotations

import pytest
from scale_helpers import (
    OUTCOME_TOKENS,
    copy_db,
    duplicates,
    make_demo_db,
    make_tiny_folder,
    max_float_diff,
    snapshot,
)

# one Ray cluster at a time: these tests, and the others that start one, share a pytest-xdist worker
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            logging_level="ERROR",
        )
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("ray")
    db = make_demo_db(d / "base.duckdb", relations=("capital",), entities=4, contexts=12)
    from click.testing import CliRunner

    from ctxprior.cli import cli

    # sample 2: a few prompts for SmolLM2 (2 entities x 6 contexts)
    res = CliRunner().invoke(
        cli,
        [
            "--db",
            db,
            "sample",
            "--dataset",
            "demo",
            "--relation",
            "capital",
            "--entities",
            "2",
            "--contexts",
            "6",
            "--seed",
            "12",
        ],
    )
    assert res.exit_code == 0, res.output
    tiny = make_tiny_folder(d / "tiny")
    ref_db = copy_db(db, d / "ref.duckdb")
    s, _ = _score(ref_db, tiny)  # the local executor's rows, the reference for every Ray run
    return {"db": db, "tiny": tiny, "dir": d, "ref": snapshot(ref_db, s.run_id)}


def _score(
    db,
    model,
    *,
    ray_workers=None,
    spec=None,
    shard_dir=None,
    resume=None,
    lm=None,
    log=None,
    sample=1,
    outcome_rule="recall",
    max_restarts=2,
):
    """Score sample 1 (open forms, 2 entities per unit) locally or on Ray workers.

    Float reductions (log-softmax, entropies over the vocabulary) depend on torch's thread count;
    a Ray worker here gets 1 thread (2 CPUs / 2 workers), so the local run uses 1 thread as well
    and the two runs must agree bit for bit."""
    import torch

    from ctxprior.scoring.executors.ray_cluster import RayExecutor
    from ctxprior.scoring.models import load_model
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    lm = lm or load_model(model)
    made = []

    def factory(lm_, config, batch_size):
        ex = RayExecutor(
            spec if spec is not None else lm_,
            config,
            batch_size,
            shard_dir=shard_dir,
            workers=ray_workers,
            threads=1,
            log=log,
            max_restarts=max_restarts,
        )
        made.append(ex)
        return ex

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with open_store(db, brief=True) as store:
        s = score_sample(
            store,
            ScoreRequest.of(
                sample=None if resume else sample,
                model=model,
                resume=resume,
                query_types=("open",),
                shard_size=2,
                outcome_rule=outcome_rule,
                max_new_tokens=OUTCOME_TOKENS,  # as SCORE, so the rows equal base["ref"]
            ),
            lm=lm,
            progress=False,
            log=log,
            executor_factory=factory if ray_workers else None,
        )
    torch.set_num_threads(threads)
    return s, (made[0] if made else None)


def test_ray_equals_local_tiny(ray_local, base, tmp_path):
    ray_db = copy_db(base["db"], tmp_path / "ray.duckdb")
    s2, ex = _score(ray_db, base["tiny"], ray_workers=2, shard_dir=str(tmp_path / "shards"))
    assert s2.status == "done" and s2.units_done == s2.units_total == 4
    a, b = base["ref"], snapshot(ray_db, s2.run_id)
    assert a["persuasion"] and a == b  # row for row, bit for bit
    assert duplicates(ray_db) == 0
    assert not (tmp_path / "shards").exists()  # committed shards are removed
    from ctxprior.storage import open_store

    with open_store(ray_db, read_only=True) as store:
        workers = {r[0] for r in store.query("SELECT worker FROM run_unit")}
    assert len(workers) == 2  # both actors computed units


def test_worker_killed_mid_unit_is_retried(ray_local, base, tmp_path, monkeypatch):
    db = copy_db(base["db"], tmp_path / "kill.duckdb")
    # the first worker to reach the middle of its first unit SIGKILLs itself (once, in any process)
    monkeypatch.setenv("CTXPRIOR_FAULT", "worker.unit@1:kill")
    monkeypatch.setenv("CTXPRIOR_FAULT_ONCE", str(tmp_path / "fired"))
    logs = []
    s, ex = _score(db, base["tiny"], ray_workers=2, shard_dir=str(tmp_path / "shards"), log=logs.append)
    monkeypatch.delenv("CTXPRIOR_FAULT")
    assert (tmp_path / "fired" / "worker.unit").exists()  # the fault really fired
    assert ex.retries >= 1 and ex.lost, logs
    assert any("worker lost" in m for m in logs)
    assert s.status == "done" and s.units_done == 4, (s.errors, logs)
    assert snapshot(db, s.run_id) == base["ref"]
    assert duplicates(db) == 0


def test_every_worker_killed_at_once_is_restarted_and_the_run_ends_done(
    ray_local, base, tmp_path, monkeypatch
):
    """Both workers SIGKILL themselves in their first unit (the two firings of the fault): no
    worker is ready until Ray has restarted one; the driver waits for them instead of failing the
    queue, and every unit ends done, identical to the local run."""
    db = copy_db(base["db"], tmp_path / "kill2.duckdb")
    monkeypatch.setenv("CTXPRIOR_FAULT", "worker.unit@1:kill")
    monkeypatch.setenv("CTXPRIOR_FAULT_ONCE", str(tmp_path / "fired"))
    monkeypatch.setenv("CTXPRIOR_FAULT_FIRES", "2")
    logs = []
    s, ex = _score(db, base["tiny"], ray_workers=2, shard_dir=str(tmp_path / "shards"), log=logs.append)
    monkeypatch.delenv("CTXPRIOR_FAULT")
    assert sorted(p.name for p in (tmp_path / "fired").iterdir()) == ["worker.unit", "worker.unit.2"]
    assert s.status == "done" and s.units_done == 4, (s.errors, logs)
    assert len({x.split(":")[0] for x in ex.lost}) >= 2, ex.lost  # at least one unit of each worker was lost
    assert not any("out of the run" in m for m in logs), logs
    assert snapshot(db, s.run_id) == base["ref"]
    assert duplicates(db) == 0


def test_workers_that_die_for_good_end_the_run_failed_not_hung(ray_local, base, tmp_path, monkeypatch):
    """Every worker SIGKILLs itself in every unit, after every restart: Ray gives up on each after
    ``max_restarts`` (1 here: each restart starts a Python process that imports torch, and one
    restart per worker shows the path as well as the default 2). Whether the units run out of attempts first or the workers are put out of
    the run first is a race; either way the run ends failed, each unit with a reason, instead of
    waiting for a worker that will never answer. Nothing is committed twice or half."""
    db = copy_db(base["db"], tmp_path / "doomed.duckdb")
    monkeypatch.setenv("CTXPRIOR_FAULT", "worker.unit@1+:kill")
    logs = []
    s, ex = _score(
        db, base["tiny"], ray_workers=2, shard_dir=str(tmp_path / "shards"), log=logs.append, max_restarts=1
    )
    monkeypatch.delenv("CTXPRIOR_FAULT")
    assert s.status == "failed" and s.units_done == 0, (s.errors, logs)
    reasons = list(s.errors)
    assert reasons and all("worker lost" in e or "no Ray worker left" in e for e in reasons), reasons
    assert duplicates(db) == 0


def test_driver_dies_between_shard_and_commit(ray_local, base, tmp_path, monkeypatch):
    from ctxprior import faults

    db = copy_db(base["db"], tmp_path / "drv.duckdb")
    shards = tmp_path / "shards"
    faults.reset()
    monkeypatch.setenv("CTXPRIOR_FAULT", "unit.received@2:raise")  # in the driver, unit 2's shard arrived
    with pytest.raises(RuntimeError, match="injected fault"):
        _score(db, base["tiny"], ray_workers=2, shard_dir=str(shards))
    monkeypatch.delenv("CTXPRIOR_FAULT")
    faults.reset()
    left = list(shards.glob("run_*/unit_*"))
    assert left, "the uncommitted shard stays on disk"
    from ctxprior.storage import open_store

    with open_store(db, read_only=True) as store:
        run_id, done = store.query("SELECT run_id, units_done FROM run")[0]
    assert done == 1
    s, _ = _score(db, base["tiny"], ray_workers=2, shard_dir=str(shards), resume=run_id)
    assert s.status == "done" and s.units_skipped == 1
    assert snapshot(db, run_id) == base["ref"]
    assert not list(shards.glob("run_*/unit_*"))  # the stale shard is removed, the unit recomputed
    assert duplicates(db) == 0


def test_ray_equals_local_smollm2(ray_local, base, tmp_path):
    """The real model, a few prompts (sample 2: 2 entities x (6 contexts + prior) x 2 open forms);
    the scores only (no outcome generation: the tiny-model tests run it on Ray with the defaults)."""
    from ctxprior.scoring.executors import ModelSpec
    from ctxprior.scoring.models import load_model
    from ctxprior.scoring.units import ScoreConfig  # noqa: F401

    lm = load_model("smollm2-135m")
    local_db = copy_db(base["db"], tmp_path / "local.duckdb")
    ray_db = copy_db(base["db"], tmp_path / "ray.duckdb")
    s1, _ = _score(local_db, "smollm2-135m", lm=lm, sample=2, outcome_rule="none")
    s2, _ = _score(
        ray_db,
        "smollm2-135m",
        lm=lm,
        ray_workers=1,
        spec=ModelSpec("smollm2-135m"),
        shard_dir=str(tmp_path / "shards"),
        sample=2,
        outcome_rule="none",
    )
    a, b = snapshot(local_db, s1.run_id), snapshot(ray_db, s2.run_id)
    assert s2.status == "done" and a["persuasion"]
    # the same rows; SmolLM2 runs in float32, where a worker process's GEMM kernels may round
    # differently from the test process's (seen: ~1e-7 nats); far inside the 1e-4 nats the
    # scoring tests allow against the float64 reference
    assert max_float_diff(a, b) <= 1e-5


def test_driver_holds_no_model_with_ray(ray_local, base, tmp_path, monkeypatch):
    """With Ray the driver records the model's identity and loads no weights (no GPU memory on
    the driver); the run row names the workers' device and dtype."""
    from ctxprior.scoring.executors import base as executor_base
    from ctxprior.scoring.executors import executor_factory
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample
    from ctxprior.storage import open_store

    def refuse(self):
        raise AssertionError("the driver loaded the model")

    monkeypatch.setattr(executor_base.ModelSpec, "load", refuse)  # this process only; workers load
    db = copy_db(base["db"], tmp_path / "d.duckdb")
    factory = executor_factory(
        db, ScoreRequest.of(executor="ray", workers=1, shard_dir=str(tmp_path / "shards"))
    )
    assert factory.worker_gpus is False  # no GPU here: CPU workers
    logs = []
    with open_store(db, brief=True) as store:
        s = score_sample(
            store,
            ScoreRequest.of(
                sample=1,
                model=base["tiny"],
                query_types=("open",),
                shard_size=2,
                max_new_tokens=OUTCOME_TOKENS,
            ),
            progress=False,
            executor_factory=factory,
            log=logs.append,
        )
        assert s.status == "done"
        assert store.query("SELECT device, dtype FROM run WHERE run_id = ?", [s.run_id]) == [
            ("cpu", "float32")
        ]
        # the workers' engine counters reach the driver's record
        assert store.query(
            "SELECT count(*), min(device), min(forward_calls) > 0 FROM run_unit_engine WHERE run_id = ?",
            [s.run_id],
        ) == [(s.units_total, "cpu", True)]
    assert "device cpu, dtype float32" in logs


def test_ray_defaults_to_one_worker_per_gpu(monkeypatch):
    import torch

    from ctxprior.scoring.executors import executor_factory
    from ctxprior.scoring.options import ScoreRequest

    ray = ScoreRequest.of(executor="ray")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    assert executor_factory("w.duckdb", ray).worker_gpus is True
    assert executor_factory("w.duckdb", ray.replace(gpus_per_worker=0)).worker_gpus is False
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert executor_factory("w.duckdb", ray).worker_gpus is False
