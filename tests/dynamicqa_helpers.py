"""Shared by the DynamicQA tests: the files to ingest (``dq_src``: made-up rows in the release's
format, and the real files when present) and ``subset`` (some rows of them)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from fixtures.make_dynamicqa import make_dynamicqa

from ctxprior.dynamicqa.ingest import FILES


def dq_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "dynamicqa"


# the same tests on files written by tests/fixtures/make_dynamicqa.py and, when present, on the real ones
SOURCES = [pytest.param("fixture"), pytest.param("real", marks=pytest.mark.shared_data)]


@pytest.fixture(params=SOURCES)
def dq_src(request, tmp_path_factory) -> Path:
    """A folder holding the three DynamicQA files (made-up rows in the real format, or the real files)."""
    if request.param == "real":
        return dq_dir(request.getfixturevalue("shared_dir"))
    return make_dynamicqa(tmp_path_factory.mktemp("dq_full"), n=60, seed=0).folder


def subset(src: Path, out: Path, rows: dict[str, list[int]] | int = 6) -> Path:
    """Copy selected data rows of the files in ``src`` (re-written with a CSV writer, same quoting)."""
    out.mkdir(parents=True, exist_ok=True)
    for part, name in FILES.items():
        with open(src / name, encoding="utf-8", newline="") as f:
            recs = list(csv.reader(f))
        header, data = recs[0], recs[1:]
        pick = rows[part] if isinstance(rows, dict) else list(range(rows))
        with open(out / name, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for i in pick:
                w.writerow(data[i])
    return out
