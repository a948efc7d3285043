"""``--dist loadgroup`` keeps an ``xdist_group`` on one worker (scripts/test.sh runs two): pytest 9
ignores pytest-xdist 3.8's way of naming a grouped item, and for a while every group (one Ray
cluster at a time, the process tests that time one warehouse file) was spread over both workers
without a sign. conftest.py's ``_xdist_groups`` names them again; this runs a real group on two
workers and checks that one worker ran it all."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_group_runs_on_one_worker():
    pytest.importorskip("xdist")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup", "-v"]
        + ["tests/test_write_protocol.py", "-k", "wait_must_be_finite"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    ran = re.findall(r"\[(gw\d)\] \[[ \d]+%\] PASSED \S+@processes", out)
    assert len(ran) == 4, out
    assert len(set(ran)) == 1, out  # the whole group on one worker
