"""Read constraints.txt, the one lock for every supported Python (scripts/update-constraints.sh makes
it with `uv pip compile --universal`). A line may end in an environment marker
(`numpy==2.2.6 ; python_full_version < '3.11'`): pip applies it only where the marker holds.

  python scripts/constraints.py supported                    the Pythons pyproject.toml supports (its classifiers)
  python scripts/constraints.py pythons                      the Pythons the lock was made for (its `# pythons` line)
  python scripts/constraints.py pins [--python X.Y] [NAME]   the pins that apply to that Python (default: this
                                                             one; markers evaluated for this platform)

Needs only the standard library and `packaging` (pip's own copy when packaging is not installed).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        from pip._vendor import tomli as tomllib  # type: ignore[no-redef]
try:
    from packaging.markers import Marker, default_environment
    from packaging.requirements import Requirement
except ModuleNotFoundError:  # a bare interpreter: pip vendors packaging
    from pip._vendor.packaging.markers import Marker, default_environment  # type: ignore[no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"
# a few platforms a newcomer may be on: (sys_platform, platform_system, platform_machine, os_name)
PLATFORMS = {
    "linux-x86_64": ("linux", "Linux", "x86_64", "posix"),
    "linux-aarch64": ("linux", "Linux", "aarch64", "posix"),
    "macos-arm64": ("darwin", "Darwin", "arm64", "posix"),
    "windows-amd64": ("win32", "Windows", "AMD64", "nt"),
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def supported(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The Python versions (X.Y) of pyproject.toml's `Programming Language :: Python :: X.Y` classifiers."""
    project = tomllib.loads(pyproject.read_text())["project"]
    pre = "Programming Language :: Python :: "
    found = [c[len(pre) :] for c in project.get("classifiers", []) if c.startswith(pre)]
    return sorted(
        (v for v in found if re.fullmatch(r"\d+\.\d+", v)), key=lambda v: tuple(map(int, v.split(".")))
    )


def read_lines(path: Path = LOCK) -> list[str]:
    """The requirement lines (no comments, no blank lines)."""
    out = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            out.append(line)
    return out


def pythons(path: Path = LOCK) -> list[str]:
    """The Python versions (X.Y) named on the lock's `# pythons` line."""
    for raw in path.read_text().splitlines():
        if raw.startswith("# pythons "):
            return raw[len("# pythons ") :].split()
    return []


def environment(python: str, full: str | None = None, platform: str | None = None) -> dict[str, str]:
    """Marker variables for Python `python` (X.Y; `full` X.Y.Z, default X.Y.0) on `platform`
    (a key of PLATFORMS; default: this machine's)."""
    env = dict(default_environment())
    env["python_version"] = python
    env["python_full_version"] = full or python + ".0"
    env["implementation_name"] = "cpython"
    env["platform_python_implementation"] = "CPython"
    if platform is not None:
        sp, system, machine, os_name = PLATFORMS[platform]
        env.update(sys_platform=sp, platform_system=system, platform_machine=machine, os_name=os_name)
    return env


def pins_for(env: dict[str, str], path: Path = LOCK) -> dict[str, list[str]]:
    """normalized name -> the `name==version` pins whose marker holds in `env` (one, in a good lock)."""
    out: dict[str, list[str]] = {}
    for line in read_lines(path):
        req = Requirement(line)
        if req.marker is None or Marker(str(req.marker)).evaluate(env):
            pin = f"{req.name}{req.specifier}"
            out.setdefault(normalize(req.name), []).append(pin)
    return out


def full_versions(python: str, path: Path = LOCK) -> list[str]:
    """X.Y.Z values worth evaluating for X.Y: .0, a late patch, and every patch a marker splits at."""
    found = set(re.findall(r"python_full_version\s*[<>=!~]+\s*'(\d+\.\d+\.\d+)'", path.read_text()))
    return sorted({python + ".0", python + ".99"} | {v for v in found if v.rsplit(".", 1)[0] == python})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("supported")
    sub.add_parser("pythons")
    p = sub.add_parser("pins")
    this = "{}.{}".format(*sys.version_info[:2])
    p.add_argument("--python", default=this)
    p.add_argument("names", nargs="*")
    a = ap.parse_args(argv)
    if a.cmd in ("supported", "pythons"):
        print(" ".join(supported() if a.cmd == "supported" else pythons()))
        return 0
    full = "{}.{}.{}".format(*sys.version_info[:3]) if a.python == this else None
    pins = pins_for(environment(a.python, full))
    wanted = [normalize(n) for n in a.names] or sorted(pins)
    for n in wanted:
        got = pins.get(n, [])
        if len(got) != 1:
            print(f"constraints.txt: {len(got)} pins of {n} for Python {a.python}", file=sys.stderr)
            return 2
        print(got[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
