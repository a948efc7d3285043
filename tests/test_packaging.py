"""Packaging metadata: what `pip install` reads."""

from __future__ import annotations

import tomllib
from conftest import ROOT


def test_license_is_an_spdx_string_not_a_deprecated_table():
    # setuptools >= 77 warns that `project.license` as a TOML table is deprecated (PEP 639)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    assert (ROOT / meta["project"]["license-files"][0]).is_file()
    build = " ".join(meta["build-system"]["requires"])
    assert "setuptools>=77" in build  # the first release that reads SPDX license strings
