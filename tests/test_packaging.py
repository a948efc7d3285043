"""Packaging metadata: what `pip install` reads, and constraints.txt, the lock setup.sh installs within."""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

_spec = importlib.util.spec_from_file_location("lock", ROOT / "scripts" / "constraints.py")
assert _spec is not None and _spec.loader is not None
lock = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock)

# chosen by scripts/torch-spec.sh (a CPU or a CUDA build), never by the lock
NOT_LOCKED = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*|ctxprior)$")


def test_license_is_an_spdx_string_not_a_deprecated_table():
    # setuptools >= 77 warns that `project.license` as a TOML table is deprecated (PEP 639)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    assert (ROOT / meta["project"]["license-files"][0]).is_file()
    build = " ".join(meta["build-system"]["requires"])
    assert "setuptools>=77" in build  # the first release that reads SPDX license strings


def _requirements() -> list:
    """Every requirement of pyproject.toml (dependencies and every extra) and the bundled models
    setup.sh installs with --no-deps, as packaging Requirements."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    reqs += re.findall(r'--no-deps "([^"]+)"', (ROOT / "scripts" / "setup.sh").read_text())
    return [lock.Requirement(r) for r in reqs]


@pytest.mark.quick
def test_the_lock_covers_every_supported_python():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    supported = lock.supported()
    assert supported, "pyproject.toml names no 'Programming Language :: Python :: 3.X' classifier"
    # the classifiers start at requires-python and leave no minor version out
    assert project["requires-python"] == ">=" + supported[0]
    minors = [int(v.split(".")[1]) for v in supported]
    assert minors == list(range(minors[0], minors[-1] + 1)), supported
    assert lock.pythons() == supported, (
        f"constraints.txt locks Python {lock.pythons()}, pyproject.toml supports {supported}: "
        "run bash scripts/update-constraints.sh --keep"
    )


@pytest.mark.parametrize("platform", sorted(lock.PLATFORMS))
def test_the_lock_pins_every_dependency_once_on_every_python(platform):
    reqs = _requirements()
    problems = []
    for python in lock.supported():
        for full in lock.full_versions(python):
            env = lock.environment(python, full, platform)
            pins = lock.pins_for(env)
            for name, got in pins.items():
                if len(got) != 1:
                    problems.append(f"Python {full}: {len(got)} pins of {name}: {got}")
                if NOT_LOCKED.match(name):
                    problems.append(f"{name} is in constraints.txt; scripts/torch-spec.sh chooses it")
            for req in reqs:
                name = lock.normalize(req.name)
                if NOT_LOCKED.match(name) or (req.marker is not None and not req.marker.evaluate(env)):
                    continue
                got = pins.get(name, [])
                if len(got) != 1:
                    problems.append(f"Python {full}: {req} has {len(got)} pins in constraints.txt, not 1")
                    continue
                version = got[0].split("==", 1)[1]
                if not req.specifier.contains(version, prereleases=True):
                    problems.append(f"Python {full}: {got[0]} is outside pyproject's {req}")
    assert not problems, "\n".join(sorted(set(problems))[:20]) + "\n(bash scripts/update-constraints.sh)"


@pytest.mark.quick
def test_the_lock_reader_evaluates_markers(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text(
        "# pythons 3.10 3.11\n"
        "numpy==2.2.6 ; python_full_version < '3.11'\n"
        "numpy==2.4.6 ; python_full_version >= '3.11'\n"
        "appnope==1.0.0 ; sys_platform == 'darwin'\n"
        "pymdown-extensions==12.3 ; python_full_version < '3.11.5'\n"
        "pymdown-extensions==13.1.2 ; python_full_version >= '3.11.5'\n"
    )
    assert lock.pythons(f) == ["3.10", "3.11"]
    on = lock.pins_for(lock.environment("3.10", None, "linux-x86_64"), f)
    assert on == {"numpy": ["numpy==2.2.6"], "pymdown-extensions": ["pymdown-extensions==12.3"]}
    mac = lock.pins_for(lock.environment("3.11", "3.11.7", "macos-arm64"), f)
    assert mac["numpy"] == ["numpy==2.4.6"] and mac["appnope"] == ["appnope==1.0.0"]
    assert mac["pymdown-extensions"] == ["pymdown-extensions==13.1.2"]
    assert lock.full_versions("3.11", f) == ["3.11.0", "3.11.5", "3.11.99"]
