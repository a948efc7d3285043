"""The documentation site builds with warnings as errors (a broken link, a missing anchor or a
renamed function fails), and the README's links point at files that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT


def test_docs_site_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "cli" / "index.html").exists()


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [ln for ln in links if "://" not in ln]
    assert local, "the README links to the docs pages"
    missing = [ln for ln in local if not (ROOT / ln).exists()]
    assert not missing, missing
