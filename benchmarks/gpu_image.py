"""Run a command in the GPU machine's package set, on this machine (issue 41): a copy of what the
GPU image has, made by hiding the rest of this environment, so the GPU check can be proven
runnable there without a GPU (``tests/test_benchmarks.py`` runs the check's smoke mode so).

    python benchmarks/gpu_image.py [--wheels DIR] -- bash scripts/gpu-check.sh --smoke --wheels DIR

The GPU image has Python, torch, transformers, numpy, pandas, pyarrow, scipy, click, tqdm, psutil
and pip (``IMAGE``) and what those require (their installed requirements, followed), and nothing
else: no duckdb, sqlalchemy, duckdb-engine, datasets, ray, bitsandbytes, statsmodels, ... (and
no pydantic, which the check carries too, ``CARRIED``). A
``sitecustomize`` on ``PYTHONPATH`` replaces Python's path finder by one that, for a
top-level module of any other distribution is not found in this environment's site-packages (as
on the image: ``ModuleNotFoundError``, and ``importlib.util.find_spec`` gives None); found
anywhere else on ``sys.path`` (``src``, ``benchmarks``, the folder the check installs the carried
wheels into) it imports as usual.

``--wheels DIR``: the carried wheels (``scripts/fetch-wheels.sh`` downloads them from PyPI) made
offline from this environment's installed copies of ``CARRIED`` (their files zipped as a wheel),
for a machine that cannot reach PyPI (the test suite's). What this proves and what it does not:
the same versions' files, installed by the check's ``pip install --target`` and imported from
there, after the hidden ones could not be; not that PyPI's wheels for Python 3.12 install (the
check's ``wheels`` step does that on the GPU machine itself).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

IMAGE = ("torch", "transformers", "numpy", "pandas", "pyarrow", "scipy", "click", "tqdm", "psutil", "pip")
# what the check carries as wheels (scripts/fetch-wheels.sh, gpu_check.CARRIED: the same list);
# hidden here even where this environment's requirements bring them (transformers 5.24 brings
# pydantic through typer; the image's 5.17 may not)
CARRIED = (
    "duckdb",
    "sqlalchemy",
    "duckdb-engine",
    "pydantic",
    "pydantic-core",
    "annotated-types",
    "typing-inspection",
)

SITECUSTOMIZE = '''"""The GPU image's package set (benchmarks/gpu_image.py): modules outside it are not found in
this environment's site-packages."""
import os, sys
from importlib.machinery import PathFinder

_KEEP = set(os.environ["CTXPRIOR_GPU_IMAGE_MODULES"].split(","))
_HIDE = {os.path.realpath(p) for p in os.environ["CTXPRIOR_GPU_IMAGE_HIDE"].split(os.pathsep) if p}


class GpuImageFinder(PathFinder):
    """Python's path finder, blind to the hidden site-packages for modules the image lacks."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if path is None and name not in _KEEP and name not in sys.stdlib_module_names:
            path = [p for p in sys.path if os.path.realpath(p or ".") not in _HIDE]
        return PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [GpuImageFinder if f is PathFinder else f for f in sys.meta_path]
'''


def _requires(dist: md.Distribution) -> list[str]:
    """The names of the distributions ``dist`` requires (no extras), as installed here."""
    out = []
    for req in dist.requires or []:
        spec, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        name = re.split(r"[\s<>=!~\[(]", spec.strip(), maxsplit=1)[0]
        if marker.strip():
            try:
                from packaging.markers import Marker

                if not Marker(marker.strip()).evaluate():
                    continue
            except Exception:
                pass
        out.append(name)
    return out


def _top_level(dist: md.Distribution) -> set[str]:
    """The top-level modules a distribution installs."""
    text = dist.read_text("top_level.txt")
    if text:
        return set(text.split())
    names = set()
    for f in dist.files or []:
        head = f.parts[0]
        if head.endswith((".dist-info", ".data")) or head.startswith("..") or head == "__pycache__":
            continue
        names.add(head.removesuffix(".py").split(".")[0])
    return names


def image_modules(roots=IMAGE) -> set[str]:
    """Top-level modules of the image's distributions and everything they require, as installed here."""
    seen: set[str] = set()
    todo = list(roots)
    mods: set[str] = set()
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        mods |= _top_level(dist)
        todo += _requires(dist)
    return mods - {m for name in CARRIED for m in _top_level(md.distribution(name))}


def build_wheels(folder: Path, names=CARRIED) -> list[Path]:
    """``names`` as wheels in ``folder``, zipped from their installed files (offline stand-ins for
    PyPI's: the same versions and files)."""
    folder.mkdir(parents=True, exist_ok=True)
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    made = []
    for name in names:
        dist = md.distribution(name)
        wheel = folder / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}-none-any.whl"
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
            for f in dist.files or []:
                path = Path(str(dist.locate_file(f)))
                if f.parts[0].startswith("..") or "__pycache__" in f.parts or not path.is_file():
                    continue
                z.write(path, str(f))
        made.append(wheel)
    return made


def image_env(folder: Path, env: dict | None = None) -> dict:
    """The environment of a process that sees only the GPU image's packages (``folder`` holds the
    ``sitecustomize`` it puts first on ``PYTHONPATH``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ if env is None else env)
    hide = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    env["CTXPRIOR_GPU_IMAGE_MODULES"] = ",".join(sorted(image_modules()))
    env["CTXPRIOR_GPU_IMAGE_HIDE"] = os.pathsep.join(sorted(hide))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH")) if p)
    env["PIP_NO_INDEX"] = "1"  # no network on the image
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheels", default=None, help="make the carried wheels (CARRIED) here first")
    ap.add_argument("--site", default=None, help="folder for the sitecustomize (default: a temporary one)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.wheels:
        build_wheels(Path(args.wheels))
    import tempfile

    site = Path(args.site or tempfile.mkdtemp(prefix="gpu-image-"))
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    return subprocess.call(cmd, env=image_env(site)) if cmd else 0


if __name__ == "__main__":
    sys.exit(main())
