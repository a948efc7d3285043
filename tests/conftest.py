"""Shared fixtures: a fresh warehouse file per test, a CLI runner, paths to ../shared data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXPRIOR_SHARED", ROOT.parent / "shared"))


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.skip("../shared is not next to the project")
    return SHARED


@pytest.fixture
def db_path(tmp_path) -> str:
    return str(tmp_path / "wh.duckdb")


@pytest.fixture
def run_cli(db_path):
    """run_cli("ingest", "demo") -> click Result; exit code 2 for user errors, like the real CLI."""
    from ctxprior.cli import cli

    runner = CliRunner()

    def _run(*args, db: str | None = None, input: str | None = None):
        return runner.invoke(cli, ["--db", db or db_path, *map(str, args)], input=input,
                             catch_exceptions=False)

    return _run


def pytest_unconfigure(config):
    """DuckDB 2's nanobind bindings print 'leaked instance' lists at interpreter exit; keep the
    test runner's summary as the last lines of the output by silencing stderr after pytest is done."""
    import sys

    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
