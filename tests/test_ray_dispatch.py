"""The Ray executor's dispatch book-keeping (``_Dispatch``), step by step, without a cluster.

Ray answers a probe of a worker it is restarting (or whose death it has not yet noticed) with
``ActorUnavailableError``: "try later", not "dead". Counting those answers as deaths and probing
again at once turned one SIGKILL into a worker put out of the run within milliseconds (with two
workers killed together: "no Ray worker left" for every unit; a CI failure of
``test_ray.py::test_worker_killed_mid_unit_is_retried``). Real Ray workers dying and coming back
are tested in ``test_ray.py``; here the answers are Ray's real exception classes, fed in turn.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.quick

rx = pytest.importorskip("ray.exceptions")


class _Remote:
    def __init__(self, sent, name):
        self.sent, self.name = sent, name

    def remote(self, *args):
        ref = object()
        self.sent.append((self.name, ref))
        return ref


class _Actor:
    def __init__(self, sent, i):
        self.info = _Remote(sent, ("info", i))
        self.score = _Remote(sent, ("score", i))


class _Executor:
    def __init__(self, n=2, max_restarts=2, probe_timeout=1800.0):
        self.sent: list = []
        self.actors = [_Actor(self.sent, i) for i in range(n)]
        self.in_flight, self.max_restarts, self.probe_timeout = 2, max_restarts, probe_timeout
        self.logs: list[str] = []
        self.log = self.logs.append


@pytest.fixture
def clock(monkeypatch):
    from ctxprior.scoring.executors import ray_cluster

    t = [1024.0]  # a power of two: the pauses below add up exactly
    monkeypatch.setattr(ray_cluster, "_now", lambda: t[0])
    return t


def _dispatch(ex, units=4):
    from ctxprior.scoring.executors.ray_cluster import _Dispatch

    return _Dispatch(ex, [SimpleNamespace(spec=f"unit {k}", n_prompts=3) for k in range(units)])


def _unavailable():
    return rx.ActorUnavailableError("the actor is restarting", None)


def test_unavailable_answers_never_put_a_worker_out_and_the_pauses_grow(clock):
    from ctxprior.scoring.executors.ray_cluster import PROBE_PAUSE

    ex = _Executor()
    d = _dispatch(ex)
    d.worker_died(0)
    assert d.state == ["probing", "ready"] and list(d.pings.values()) == [0]
    pauses = []
    for _ in range(12):  # far more than max_restarts "unavailable" answers in a row
        (ref,) = d.pings
        del d.pings[ref]
        d.probe_failed(0, _unavailable())
        assert d.state[0] == "probing" and not d.pings
        pauses.append(d.due[0] - clock[0])
        assert d.next_probe_in() == pytest.approx(min(1.0, pauses[-1]))
        clock[0] += pauses[-1] - 1e-6
        d.probe_due()
        assert not d.pings  # not yet
        clock[0] += 2e-6
        d.probe_due()
        assert list(d.pings.values()) == [0] and 0 not in d.due  # probed again, once
    first, longest = PROBE_PAUSE
    assert pauses[0] == first and pauses == sorted(pauses) and pauses[-1] == longest
    assert not d.all_gone()


def test_a_worker_back_from_probing_takes_units_again(clock):
    ex = _Executor()
    d = _dispatch(ex)
    d.worker_died(1)
    d.submit()
    assert {i for _, _, i in d.inflight.values()} == {0}  # only the ready worker gets units
    d.pings.clear()
    d.answered(1)
    assert d.state == ["ready", "ready"] and "worker 1 is back" in ex.logs
    d.queue.append((SimpleNamespace(spec="unit 9", n_prompts=1), 1, None))
    d.submit()
    assert {i for _, _, i in d.inflight.values()} == {0, 1}


def test_died_more_than_max_restarts_times_puts_the_worker_out(clock):
    ex = _Executor(max_restarts=2)
    d = _dispatch(ex)
    d.worker_died(0)
    for k in range(3):
        d.pings.clear()
        d.probe_failed(0, rx.ActorDiedError())
        assert d.state[0] == ("probing" if k < 2 else "dead")
        clock[0] += 10
        d.probe_due()
    assert "out of the run (ActorDiedError" in ex.logs[-1]
    d.worker_died(1)
    d.pings.clear()
    d.probe_failed(1, rx.ActorDiedError())
    assert not d.all_gone()  # worker 1 still has a probe due
    for _ in range(2):
        clock[0] += 10
        d.probe_due()
        d.pings.clear()
        d.probe_failed(1, rx.ActorDiedError())
    assert d.state == ["dead", "dead"] and d.all_gone()
    assert [u.error for u in d.fail_queued()] == ["no Ray worker left (all died)"] * 4


def test_a_probe_unanswered_past_probe_timeout_puts_the_worker_out(clock):
    ex = _Executor(probe_timeout=60)
    d = _dispatch(ex)
    d.worker_died(0)
    clock[0] += 59
    d.probe_due()
    assert d.state[0] == "probing" and d.pings
    clock[0] += 2
    d.probe_due()
    assert d.state[0] == "dead" and not d.pings and "no answer in 60 s" in ex.logs[-1]
    d.worker_died(1)  # "unavailable" answers until the timeout
    while d.state[1] == "probing":
        d.pings.clear()
        d.probe_failed(1, _unavailable())
        clock[0] += 8
        d.probe_due()
        assert clock[0] < 1024 + 61 + 60 + 10
    assert d.all_gone()


def test_units_lost_together_probe_their_worker_once(clock):
    ex = _Executor()
    d = _dispatch(ex)
    d.submit()
    assert sorted(i for _, _, i in d.inflight.values()) == [0, 0, 1, 1]
    d.worker_died(0)
    d.worker_died(0)  # its second unit is lost too
    assert list(d.pings.values()) == [0]
