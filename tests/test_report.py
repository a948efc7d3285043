"""`ctxprior report`: one self-contained HTML page, rendered in headless Chromium with a screenshot."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from analysis_fixtures import analyzed_warehouse  # noqa: F401 (fixture)

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.fixture(scope="module")
def report_html(analyzed_warehouse, tmp_path_factory):
    from click.testing import CliRunner

    from ctxprior.cli import cli

    out = tmp_path_factory.mktemp("report") / "report.html"
    r = CliRunner().invoke(
        cli, ["--db", analyzed_warehouse, "report", "--out", str(out)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    return out


def test_report_is_self_contained(report_html):
    text = report_html.read_text(encoding="utf-8")
    imgs = re.findall(r'<img [^>]*src="([^"]+)"', text)
    assert len(imgs) >= 8 and all(s.startswith("data:image/png;base64,") for s in imgs)
    assert not re.search(r'(src|href)="(https?:|file:|/)', text)  # nothing fetched from outside
    for heading in (
        "Relevance",
        "Assertiveness",
        "Negation",
        "Familiar vs unfamiliar",
        "Memorization ratio",
        "Reliability",
        "Frequency and KG degree",
        "Friend",
        "Gender",
        "Skipped tests",
    ):
        assert heading in text, heading
    assert "relevant was significantly higher than irrelevant in 2 of 2 (closed)" in text
    assert "NaN value(s)" in text  # skip reasons are shown
    # the gender run's sample mixes the 4 collections: the reading must not call the values χ of one
    assert (
        "Caution: this run's sample mixes 4 collections, so each value is the mean ψ of the collection's "
        "contexts against the mixture of all 4, not the susceptibility χ of a single collection"
    ) in text
    assert '<th class="l">dtype</th>' in text or ">dtype</th>" in text  # runs table shows the precision


@pytest.mark.browser
def test_report_renders_in_headless_chromium(report_html, tmp_path):
    if CHROMIUM is None:  # scripts/test.sh deselects `browser` tests when chromium is missing
        pytest.fail(
            "chromium is not installed (apt-get install chromium; CI installs it); "
            "deselect this test with -m 'not browser'"
        )
    shot = tmp_path / "report.png"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        "--window-size=1200,3000",
        report_html.as_uri(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 3000)
    # a rendered page is not blank: the PNG of real content is much larger than a white canvas
    assert len(data) > 50_000
