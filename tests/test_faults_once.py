"""``CTXPRIOR_FAULT_ONCE``: of many processes that reach a fault point at the same moment, exactly
as many fire as ``CTXPRIOR_FAULT_FIRES`` allows (default 1).

A check-then-create marker let two Ray workers that reached ``worker.unit`` together both die, and
a crash test meant to kill one worker killed all of them (a CI failure of
``test_ray.py::test_worker_killed_mid_unit_is_retried``)."""

from __future__ import annotations

import multiprocessing as mp
import os

import pytest

pytestmark = pytest.mark.quick


def _arrive(barrier, env):
    os.environ.update(env)
    from ctxprior import faults

    faults._spec_cache = None
    faults._counts.clear()
    barrier.wait()
    faults.hit("worker.unit")  # exits with 70 if this process fires
    os._exit(0)


def _fired(tmp_path, n_procs, fires=None):
    env = {"CTXPRIOR_FAULT": "worker.unit@1:exit", "CTXPRIOR_FAULT_ONCE": str(tmp_path / "fired")}
    if fires:
        env["CTXPRIOR_FAULT_FIRES"] = str(fires)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(n_procs)
    procs = [ctx.Process(target=_arrive, args=(barrier, env)) for _ in range(n_procs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    codes = [p.exitcode for p in procs]
    assert set(codes) <= {0, 70}, codes
    return codes.count(70), sorted(os.listdir(tmp_path / "fired"))


@pytest.mark.parametrize("attempt", range(3))
def test_exactly_one_of_many_simultaneous_arrivals_fires(tmp_path, attempt):
    n, markers = _fired(tmp_path, 12)
    assert n == 1 and markers == ["worker.unit"]


def test_fires_allows_that_many_in_all_processes(tmp_path):
    n, markers = _fired(tmp_path, 12, fires=2)
    assert n == 2 and markers == ["worker.unit", "worker.unit.2"]
    n, _ = _fired(tmp_path, 4, fires=2)  # the markers stay: a restarted process never fires again
    assert n == 0
