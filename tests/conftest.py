"""Shared fixtures: a fresh warehouse file per test, a CLI runner, paths to ../shared data.

Tests that read the real files under ../shared (or $CTXPRIOR_SHARED) use the ``shared_dir``
fixture and are marked ``shared_data`` (a test using the fixture is marked automatically too).
``scripts/test.sh`` deselects them when the data is absent; selected anyway, they fail with a
message saying where the data is expected. Each has an equivalent test on files the tests write
themselves (tests/fixtures/), so a fresh clone covers every behaviour. ``browser`` marks the test
that needs chromium (deselected by scripts/test.sh when it is missing). The markers are declared
once, in pyproject.toml.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXPRIOR_SHARED", ROOT.parent / "shared"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # scripts/test.sh runs two pytest-xdist workers on a 2-core machine: one OpenMP thread each
    # (torch reads this when it is first imported, in the worker and in the processes it starts),
    # so the workers do not fight over the cores
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def shared_data_present() -> bool:
    return (SHARED / "data").is_dir()


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    """A test that uses ``shared_dir`` is a ``shared_data`` test even if its marker was forgotten."""
    for item in items:
        if (
            "shared_dir" in getattr(item, "fixturenames", ())
            and item.get_closest_marker("shared_data") is None
        ):
            item.add_marker(pytest.mark.shared_data)
    _xdist_groups(config, items)
    items.sort(key=_longest_first)


def _xdist_groups(config, items) -> None:
    """``--dist loadgroup`` under pytest 9: pytest-xdist (3.8) names a worker's item ``ID@GROUP``
    by setting ``item._nodeid``, which pytest 9 no longer reads (``nodeid`` is ``str(item._id)``),
    so every group was silently spread over both workers (two Ray clusters at once, the process
    tests beside each other). Here the structured id gets the suffix xdist's scheduler splits on;
    under pytest 8 (no ``_id``) xdist's own renaming works and nothing is done."""
    if not getattr(config.option, "loadgroup", False):  # set on an xdist worker under --dist loadgroup
        return
    try:
        from _pytest.nodes import NodeId
    except ImportError:  # pytest 8
        return
    for item in items:
        names = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if names and isinstance(getattr(item, "_id", None), NodeId) and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


def _longest_first(item) -> int:
    """The docs pages run their examples for minutes each: they start first, the longest (its
    declared ``timeout=``) first, so the two xdist workers do not end on one of them alone; every
    other test keeps its place (a stable sort)."""
    callspec = getattr(item, "callspec", None)
    if item.path.name != "test_docs_examples.py" or callspec is None or "page" not in callspec.params:
        return 0
    page = callspec.params["page"]
    match = re.search(r"docs-examples:[^>]*timeout=(\d+)", page.read_text(encoding="utf-8")[:2000])
    return -int(match.group(1)) if match else -1


@pytest.fixture
def shared_dir() -> Path:
    if not shared_data_present():
        pytest.fail(
            f"this test reads the real data under {SHARED / 'data'}, which is not there: put ../shared "
            "next to the project or set CTXPRIOR_SHARED=DIR, or deselect it with -m 'not shared_data' "
            "(scripts/test.sh does that when the data is absent)",
            pytrace=False,
        )
    return SHARED


@pytest.fixture
def one_torch_thread():
    """One intra-op torch thread for the test: tiny models are faster that way, and two OpenMP
    threads on a busy 2-core machine are several times slower. Files with model tests use it as
    ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def scored(tmp_path_factory) -> dict:
    """A scored one-relation demo warehouse and a tiny model (tests/scale_helpers.py scored_base),
    built once per session (per pytest-xdist worker) and shared by the process, fault and lock
    tests, which copy its warehouse before they write (copy_db) and only read the rest."""
    from scale_helpers import scored_base

    return scored_base(tmp_path_factory.mktemp("scored"))


@pytest.fixture(scope="session")
def smollm2_real_rows(tmp_path_factory):
    """SmolLM2 with every default on the committed real NQ-Swap and ConflictQA rows
    (tests/fixtures/tables), scored once per session: (warehouse, model, {dataset: run id}).
    tests/test_outcomes.py and tests/test_faithful_vocab.py read the same runs (read only); each
    such test carries ``xdist_group("smollm2_real_rows")``, so one worker scores them (3 minutes
    of CPU, most of it the 64-token generations of the long ConflictQA prompts)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    import ctxprior
    from ctxprior.scoring.models import load_model

    tables = ROOT / "tests" / "fixtures" / "tables"
    tmp = tmp_path_factory.mktemp("smollm2_real_rows")
    nq = [json.loads(line) for line in (tables / "nq-swap-real.jsonl").read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(nq), tmp / "nq.parquet")
    wh = ctxprior.open(str(tmp / "w.duckdb"), write=True)
    wh.datasets.ingest("nq-swap", str(tmp / "nq.parquet"))
    wh.datasets.ingest("conflictqa", str(tables / "conflictQA-strategyQA-chatgpt.json"))
    lm = load_model("smollm2-135m", device="cpu")
    runs = {}
    for name in ("nq_swap", "conflictqa"):
        sid = wh.samples.draw(name, design="fixed")
        runs[name] = wh.runs.score(sid, model=lm, query_types=("open",), progress=False, log=None).id
    return wh, lm, runs


@pytest.fixture(scope="session")
def tiny_demo(tmp_path_factory):
    """``ctxprior demo`` once per session with a tiny random model (in-process, every step: four
    runs, the co-occurrence covariate, the analyses with 100 permutations, figures and report):
    (click result, warehouse path, output folder). tests/test_demo.py reads what it printed and
    wrote, tests/test_docs_queries.py runs the docs' queries on its warehouse (read only); both
    carry ``xdist_group("tiny_demo")``, so one worker runs it."""
    from scale_helpers import make_tiny_folder

    from ctxprior.cli import cli

    folder = tmp_path_factory.mktemp("tiny_demo")
    db, out = folder / "demo.duckdb", folder / "out"
    tiny = make_tiny_folder(folder / "tiny")
    args = ["--db", str(db), "demo", "--model", tiny, "--permutations", "100", "--out", str(out)]
    return CliRunner().invoke(cli, args, catch_exceptions=False), db, out


@pytest.fixture
def sleeper():
    """A live process that is no ctxprior writer: ``sleep 300``, yielded once its command line reads
    ``sleep`` (until its exec, the child is a copy of this process, and a record of it taken then
    names the wrong command: a flaky ``procs.proven``); killed after the test."""
    import subprocess
    import time

    import psutil

    p = subprocess.Popen(["sleep", "300"])
    try:
        deadline = time.monotonic() + 30
        while psutil.Process(p.pid).cmdline()[:1] != ["sleep"]:
            assert time.monotonic() < deadline, "sleep did not start in 30 s"
            time.sleep(0.01)
        yield p
    finally:
        p.kill()
        p.wait()


@pytest.fixture
def db_path(tmp_path) -> str:
    return str(tmp_path / "wh.duckdb")


@pytest.fixture(scope="session")
def demo_warehouse(tmp_path_factory) -> str:
    """`ctxprior ingest demo` into a warehouse, once per session (per pytest-xdist worker)."""
    from ctxprior.cli import cli

    db = str(tmp_path_factory.mktemp("demo") / "demo.duckdb")
    res = CliRunner().invoke(cli, ["--db", db, "ingest", "demo"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert not os.path.exists(db + ".wal")  # the file alone is the warehouse: a copy is whole
    return db


@pytest.fixture
def demo_db(demo_warehouse, db_path) -> str:
    """A fresh copy of the session's ingested demo warehouse at ``db_path`` (what
    ``run_cli("ingest", "demo")`` makes, without ingesting again: 0.5 s of CPU a test)."""
    shutil.copyfile(demo_warehouse, db_path)
    return db_path


@pytest.fixture
def run_cli(db_path):
    """run_cli("ingest", "demo") -> click Result; exit code 2 for user errors, like the real CLI."""
    from ctxprior.cli import cli

    runner = CliRunner()

    def _run(*args, db: str | None = None, input: str | None = None):
        return runner.invoke(
            cli, ["--db", db or db_path, *map(str, args)], input=input, catch_exceptions=False
        )

    return _run


def pytest_unconfigure(config):
    """DuckDB 2's nanobind bindings print 'leaked instance' lists at interpreter exit; keep the
    test runner's summary as the last lines of the output by silencing stderr after pytest is done."""
    import sys

    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
