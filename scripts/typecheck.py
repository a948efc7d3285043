"""Type-check src/ with mypy against a committed baseline that only shrinks (run by scripts/typecheck.sh).

The baseline (mypy-baseline.txt) holds the errors allowed for now, one a line, as
``path: error: message  [code]`` without the line number, so moving code does not break it.
The check fails when mypy reports an error the baseline does not hold (fix it), and when the
baseline holds an error mypy no longer reports (the file is kept tight: rewrite it with
``--update`` and commit the smaller file). Configuration: pyproject.toml, ``[tool.mypy]``.

    python scripts/typecheck.py            # check (exit 1 on any difference, 2 if mypy itself failed)
    python scripts/typecheck.py --update   # rewrite the baseline from this run
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "mypy-baseline.txt"
HEADER = (
    "# mypy errors allowed for now (scripts/typecheck.sh); one a line, line numbers stripped.\n"
    "# This file only shrinks: fix an error, then run scripts/typecheck.sh --update and commit.\n"
)
_ERROR = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? error: (?P<msg>.*)$")


def normalise(line: str) -> str | None:
    """The baseline form of one line of mypy's output (None for notes, summaries and blank lines)."""
    m = _ERROR.match(line.rstrip())
    if m is None:
        return None
    path = m["path"].replace("\\", "/")
    msg = re.sub(r"\bon line \d+\b", "on line N", m["msg"])  # 'already defined on line 12'
    return f"{path}: error: {msg}"


def parse_output(text: str) -> list[tuple[str, str]]:
    """(baseline form, original line) for each error in mypy's output."""
    found = []
    for line in text.splitlines():
        key = normalise(line)
        if key is not None:
            found.append((key, line.rstrip()))
    return found


def parse_baseline(text: str) -> Counter[str]:
    """The baseline file's errors, counted (the same message may appear twice in one file)."""
    return Counter(s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#"))


def compare(output: str, baseline: str) -> tuple[list[str], list[str]]:
    """(new errors as mypy printed them, baseline entries mypy no longer reports), each sorted."""
    found = parse_output(output)
    allowed = parse_baseline(baseline)
    new_keys = Counter(key for key, _ in found) - allowed
    new = []
    for key, line in found:  # of several equal errors, which ones count as new is arbitrary
        if new_keys[key] > 0:
            new_keys[key] -= 1
            new.append(line)
    gone = sorted((allowed - Counter(key for key, _ in found)).elements())
    return sorted(new), gone


def render_baseline(output: str) -> str:
    """The baseline file for this mypy output."""
    return HEADER + "".join(f"{key}\n" for key in sorted(key for key, _ in parse_output(output)))


def report(new: list[str], gone: list[str]) -> list[str]:
    """What to print for a comparison (empty when the check passes)."""
    lines = []
    if new:
        lines.append(f"typecheck: {len(new)} new mypy error(s), not in mypy-baseline.txt; fix them:")
        lines += [f"  {line}" for line in new]
    if gone:
        lines.append(
            f"typecheck: {len(gone)} error(s) in mypy-baseline.txt are fixed; the baseline can shrink:"
        )
        lines += [f"  {key}" for key in gone]
        lines.append("baseline can shrink: run scripts/typecheck.sh --update (and commit mypy-baseline.txt)")
    return lines


def run_mypy() -> tuple[int, str]:
    """mypy over the packages pyproject.toml names; (exit code, stdout)."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        sys.stderr.write(proc.stdout + proc.stderr)
    return proc.returncode, proc.stdout


def main(argv: list[str]) -> int:
    if any(a != "--update" for a in argv):
        print(f"typecheck: unknown argument(s) {argv}; the only option is --update", file=sys.stderr)
        return 2
    update = "--update" in argv
    code, output = run_mypy()
    if code not in (0, 1):
        print(f"typecheck: mypy failed (exit {code}; see above)", file=sys.stderr)
        return 2
    if update:
        BASELINE.write_text(render_baseline(output))
        print(f"typecheck: wrote {BASELINE.name} ({len(parse_output(output))} errors)")
        return 0
    baseline = BASELINE.read_text() if BASELINE.exists() else ""
    new, gone = compare(output, baseline)
    for line in report(new, gone):
        print(line)
    if new or gone:
        return 1
    print(f"typecheck: mypy ok ({len(parse_output(output))} errors, all in mypy-baseline.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
