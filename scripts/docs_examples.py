#!/usr/bin/env python
"""Run the console examples in docs/*.md and check or rewrite what they print (as cog does).

    python scripts/docs_examples.py --check               # exit 1 and a diff when an example drifted
    python scripts/docs_examples.py --update              # rewrite the outputs in place
    python scripts/docs_examples.py --check docs/datasets.md

A page takes part when it has a setup comment (anywhere, usually under its title)::

    <!-- docs-examples: timeout=600 -->

and then every ```` ```console ```` block on it runs, top to bottom, in one fresh working folder
per page (so ``ctxprior.duckdb`` there is the page's warehouse; ``src``, ``scripts``, ``benchmarks``
and ``tests`` of this checkout and ``../shared`` are linked into it). In a block, a line ``$ CMD``
is a command (continued on the next lines while its quotes are open or it ends with ``\\``); the
lines up to the next ``$`` are what it prints (stdout and stderr, as a terminal shows them).
``$ cat FILE`` of a FILE that is not there yet writes FILE from the lines shown (so a page can
show its input files). Comments just before a block change it:

    <!-- docs-examples: run: CMD -->      a hidden setup command (its output is not shown)
    <!-- docs-examples: skip: REASON -->  the block is not run (needs a key, a GPU, a cluster, ...)

(``run: rm ctxprior.duckdb`` starts a block on a new warehouse.)

Each page's ``ctxprior`` commands fork from one server process that has imported ctxprior (and,
on ``marks=slow`` pages, torch and transformers) once (scripts/docs_forkserver.py); each command is
still its own process with its own output and exit status. ``CTXPRIOR_DOCS_FORK=0`` runs the
console script itself for every command.

An output line ``...`` stands for any lines. Outputs are compared after the rules in NORMALISE
(timings, rates, dates, paths, table widths); ``--update`` rewrites a block's output only when it
differs after normalisation, so running it twice changes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORKSERVER = ROOT / "scripts" / "docs_forkserver.py"
_spec = importlib.util.spec_from_file_location("docs_forkserver", FORKSERVER)
forkserver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(forkserver)
WORK_NAME = "/tmp/docrun"  # the working folder as the pages show it

# Applied to what a command prints before it is stored or compared: the page's temporary folder
# reads as WORK_NAME, and lines the Python runtime adds at exit are dropped.
# Each line is first cut to what follows its last carriage return (what a terminal shows).
REWRITE: list[tuple[str, str]] = [
    (r"(?m)^( - leaked .*| - \.\.\. skipped remainder.*|nanobind: .*|See https://nanobind.*)\n?", ""),
    # progress bars on stderr (tqdm: "Loading: 100%|███| 272/272 [00:00<00:00, ...it/s]",
    # "Generating train split: 16 examples [00:00, 1035.41 examples/s]")
    (r"(?m)^.*\[\d+:\d\d(<[\d:?]+)?, [^\]]*/s\]\s*\n?", ""),
    # a warning another library raises from its own code ("…/site-packages/x/y.py:12: FutureWarning:
    # …" and the source line Python prints under it): the library's business, not the page's
    (r"(?m)^\S*site-packages/\S+:\d+: \w*Warning: .*\n(  .*\n)?", ""),
    (r"^\n+", ""),
]

# Applied to both the page and the fresh output before they are compared: what varies run to run.
NORMALISE: list[tuple[str, str]] = [
    (r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?", "<datetime>"),  # dates and times
    (r"\b\d+(\.\d+)?(e[-+]?\d+)? ?(s|ms|min|h)\b", "<time>"),  # durations
    (r"[\d.,]+ ?(prompts|units|docs|documents|lines|triples|MB|rows|facts|tokens)/s\b", "<rate>"),  # rates
    (r"\([\d.,]+ ?[kMG]?B/s\)", "(<rate>)"),
    (r"\b(pid|host) [\w.-]+", r"\1 <x>"),
    (r"(?m)^( *\d+ +(persuasion|dynamic) +\w+ +\d+/\d+ +\d+ +\d+ +)[\d.]+", r"\1<rate>"),  # `runs` table
    (r"\S*/shared/data/", "<shared>/data/"),  # where ../shared lies on this machine
    (r"(?m)^(\d+ +)\d+(\.\d)?( +(static|temporal|disputable) )", r"\1<s>\3"),  # seconds per DynamicQA fact
    (r"[ \t]+", " "),  # table column widths follow the widest value
    (r"-{2,}", "--"),
]


@dataclass
class Step:
    cmd: list[str]  # the command's lines as the page shows them (without "$ ")
    out: list[str] = field(default_factory=list)


@dataclass
class Block:
    start: int  # index of the opening fence line
    end: int  # index of the closing fence line
    indent: str
    steps: list[Step]
    setup: list[str]  # hidden commands from <!-- docs-examples: run: ... -->
    skip: str | None


def _complete(cmd: str) -> bool:
    if cmd.endswith("\\"):
        return False
    try:
        shlex.split(cmd, comments=True)
    except ValueError:
        return False
    return True


def parse_steps(lines: list[str]) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = [line[2:]]
            while not _complete("\n".join(cmd)) and i + 1 < len(lines):
                i += 1
                cmd.append(lines[i])
            steps.append(Step(cmd))
        elif steps:
            steps[-1].out.append(line)
        i += 1
    return steps


_COMMENT = re.compile(r"^\s*<!--\s*docs-examples:\s*(.*?)\s*-->\s*$")


def parse_page(text: str) -> tuple[dict[str, str] | None, list[Block]]:
    """(the page's setup options, or None when it does not take part; its console blocks)."""
    lines = text.split("\n")
    opts: dict[str, str] | None = None
    blocks: list[Block] = []
    pending_setup: list[str] = []
    pending_skip: str | None = None
    i = 0
    while i < len(lines):
        m = _COMMENT.match(lines[i])
        fence = re.match(r"^(\s*)```console\s*$", lines[i])
        if m:
            body = m.group(1)
            if body.startswith("run:"):
                pending_setup.append(body[4:].strip())
            elif body.startswith("skip:"):
                pending_skip = body[5:].strip() or "skipped"
            else:
                opts = dict(kv.split("=", 1) for kv in body.split() if "=" in kv)
        elif fence:
            indent = fence.group(1)
            j = i + 1
            while not re.match(rf"^{re.escape(indent)}```\s*$", lines[j]):
                j += 1
            body_lines = [
                ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1 : j]
            ]
            blocks.append(Block(i, j, indent, parse_steps(body_lines), pending_setup, pending_skip))
            pending_setup, pending_skip = [], None
            i = j
        i += 1
    return opts, blocks


def normalise(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    for pattern, repl in NORMALISE:
        text = re.sub(pattern, repl, text)
    return [ln.rstrip() for ln in text.split("\n")]


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` (from the page; a line ``...`` stands for any lines, a line ending with ``, ...``
    for any line that starts the same) against ``actual``."""
    exp = normalise(expected)
    cut = {e[: -len(", ...")] for e in exp if e.endswith(", ...") and e.strip() != "..."}
    parts = _split_ellipsis(exp)
    act = [next((c + ", ..." for c in cut if a.startswith(c + ", ")), a) for a in normalise(actual)]
    if len(parts) == 1:
        return parts[0] == act
    head, *middle, tail = parts
    if act[: len(head)] != head or len(act) < len(head) + len(tail):
        return False
    rest = act[len(head) : len(act) - len(tail)]
    if act[len(act) - len(tail) :] != tail:
        return False
    for part in middle:  # each in order, anywhere after the previous one
        at = next((k for k in range(len(rest) - len(part) + 1) if rest[k : k + len(part)] == part), None)
        if at is None:
            return False
        rest = rest[at + len(part) :]
    return True


def _split_ellipsis(lines: list[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for ln in lines:
        if ln.strip() == "...":
            parts.append([])
        else:
            parts[-1].append(ln)
    return parts


def updated(expected: list[str], actual: list[str]) -> list[str]:
    """The page's new output: the fresh lines, keeping the page's elisions. With ``...`` lines, the
    head and the tail keep their lengths, and a line the page shows in between is kept (with its
    fresh values) when a fresh line starts with the same two words; a line the page ends with
    ``, ...`` keeps as many comma-separated items."""
    parts = _split_ellipsis(expected)
    if len(parts) == 1:
        return [_cut_like(e, a) for e, a in zip(expected, actual)] + actual[len(expected) :]
    indent = re.match(r"\s*", next(ln for ln in expected if ln.strip() == "...")).group(0)
    head, *middle, tail = parts
    if len(actual) <= len(head) + len(tail):
        return actual
    out = [_cut_like(e, a) for e, a in zip(head, actual)]
    rest = actual[len(head) : len(actual) - len(tail)]
    for part in middle:
        found = []
        for line in part:
            key = line.split()[:2]
            at = next((k for k, a in enumerate(rest) if a.split()[:2] == key), None)
            if at is not None:
                found.append(_cut_like(line, rest[at]))
                rest = rest[at + 1 :]
        out += [indent + "...", *found] if found else []
    out.append(indent + "...")
    tail_lines = actual[len(actual) - len(tail) :] if tail else []
    return out + [_cut_like(e, a) for e, a in zip(tail, tail_lines)]


def _cut_like(page_line: str, fresh: str) -> str:
    """``fresh`` cut after as many ", "-separated items as ``page_line`` shows before its ", ..."."""
    if not page_line.endswith(", ...") or page_line.startswith("..."):
        return fresh
    items = page_line[: -len(", ...")].count(", ") + 1
    pieces = fresh.split(", ")
    return fresh if len(pieces) <= items else ", ".join(pieces[:items]) + ", ..."


class ExampleError(RuntimeError):
    """A command of a page that did not run to its end (timed out, not found): the page is left
    as it is, with or without --update."""


class Session:
    """One page's working folder and environment; runs its commands in order."""

    def __init__(self, timeout: int, models: bool = False):
        self.tmp = Path(tempfile.mkdtemp(prefix="docs-examples-"))
        self.work = self.tmp / "docrun"
        self.work.mkdir()
        for name in ("src", "scripts", "benchmarks", "tests"):
            (self.work / name).symlink_to(ROOT / name)
        shared = Path(os.environ.get("CTXPRIOR_SHARED", ROOT.parent / "shared"))
        if shared.exists():
            (self.tmp / "shared").symlink_to(shared.resolve())
        self.timeout = timeout
        self.exports: list[str] = []
        env = dict(os.environ)
        for var in ("CTXPRIOR_DB", "HF_TOKEN", "OPENAI_API_KEY", "HF_ENDPOINT"):
            env.pop(var, None)
        env.update(
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")])),
            PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
            HF_HOME=str(self.work / "hf"),
            TZ="UTC",
            COLUMNS="200",
            PYTHONHASHSEED="0",
            CTXPRIOR_SHARED=str(self.tmp / "shared"),
        )
        self.env = env
        self.server = self._fork_server(models) if os.environ.get("CTXPRIOR_DOCS_FORK", "1") != "0" else None

    def _fork_server(self, models: bool) -> subprocess.Popen:
        """The page's ``ctxprior`` commands fork from one server that has imported what they
        import (scripts/docs_forkserver.py); each stays its own process."""
        real = shutil.which("ctxprior", path=self.env["PATH"])
        if real is None:
            raise ExampleError("the ctxprior console script is not on PATH (is the venv active?)")
        sock = self.tmp / "fork.sock"
        bindir = self.tmp / "bin"
        bindir.mkdir()
        shim = bindir / "ctxprior"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I "{FORKSERVER}" client "$@"\n')
        shim.chmod(0o755)
        self.env.update(
            {forkserver.SOCKET_ENV: str(sock), forkserver.REAL_ENV: real},
            PATH=os.pathsep.join([str(bindir), self.env["PATH"]]),
        )
        self.server_log = (self.tmp / "fork.log").open("wb")  # what the server itself prints
        # started by bash, as the commands are, so that its environment is the one bash gives them
        cmd = [sys.executable, str(FORKSERVER), "serve", str(sock), *(["--models"] if models else [])]
        server = subprocess.Popen(
            ["bash", "-c", 'exec "$@"', "bash", *cmd],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.server_log,
        )
        deadline = time.monotonic() + 30
        while not sock.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return server

    def run(self, cmd: str) -> list[str]:
        if cmd.startswith("export "):
            self.exports.append(cmd)
        script = "\n".join([*self.exports, cmd])
        try:
            p = subprocess.run(
                ["bash", "-c", script],
                cwd=self.work,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            # never recorded as an output: an elided block ("...") would hide it, and the next
            # command would read a half-written warehouse
            raise ExampleError(
                f"timed out after {self.timeout} s (the page's timeout=): $ {cmd[:120]}"
            ) from None
        if p.returncode == 127:
            raise ExampleError(f"command not found (is the venv active?): $ {cmd[:120]}")
        raw = p.stdout
        text = "\n".join(ln.rsplit("\r", 1)[-1] for ln in raw.decode(errors="replace").split("\n"))
        if str(self.tmp) in text:
            text = text.replace(str(self.work), WORK_NAME).replace(str(self.tmp), str(Path(WORK_NAME).parent))
            text = "\n".join(_fit_last_column(text.split("\n")))
        for pattern, repl in REWRITE:
            text = re.sub(pattern, repl, text)
        return text.rstrip("\n").split("\n") if text.strip() else []

    def close(self) -> None:
        if self.server is not None:
            self.server.terminate()  # it ends the commands still running, then itself
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
            self.server_log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _fit_last_column(lines: list[str]) -> list[str]:
    """A table's last column is as wide as its widest value again once the paths in it got shorter."""
    lines = list(lines)
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r"-+(  -+)*", line):
            continue
        start = line.rfind(" ") + 1
        rows = [lines[i - 1]]
        for row in lines[i + 1 :]:
            if not row or re.fullmatch(r"\(\d+ rows?\)", row):
                break
            rows.append(row)
        lines[i] = line[:start] + "-" * max(1, *(len(r) - start for r in rows))
    return lines


def _blank_tail(out: list[str]) -> tuple[list[str], list[str]]:
    """(the output without its trailing blank lines, those blank lines)."""
    n = len(out)
    while n and not out[n - 1].strip():
        n -= 1
    return out[:n], out[n:]


def _cat_input(step: Step, work: Path) -> bool:
    """``$ cat FILE`` of a file the page brings: write it from the lines shown."""
    words = shlex.split(step.cmd[0]) if len(step.cmd) == 1 else []
    if len(step.cmd) == 1 and len(words) == 2 and words[0] == "cat" and not (work / words[1]).exists():
        (work / words[1]).parent.mkdir(parents=True, exist_ok=True)
        (work / words[1]).write_text("\n".join(step.out) + "\n")
        return True
    return False


def run_page(path: Path, update: bool, log=print) -> list[str]:
    """Run one page's examples; returns the diffs (empty when nothing drifted). With ``update``
    the page is rewritten where an output drifted."""
    text = path.read_text()
    opts, blocks = parse_page(text)
    if opts is None:
        return []
    lines = text.split("\n")
    session = Session(int(opts.get("timeout", 600)), models="slow" in opts.get("marks", "").split(","))
    diffs: list[str] = []
    replacements: list[tuple[int, int, list[str]]] = []
    try:
        for block in blocks:
            for cmd in block.setup:
                t0 = time.perf_counter()
                session.run(cmd)
                log(f"{path.name}:{block.start + 1}: {time.perf_counter() - t0:5.1f} s  (setup) {cmd[:90]}")
            if block.skip or not block.steps:  # a block without a command shows output alone
                if block.skip:
                    log(f"{path.name}:{block.start + 1}: skipped ({block.skip})")
                continue
            new_body: list[str] = []
            for step in block.steps:
                cmd = "\n".join(step.cmd)
                new_body += ["$ " + step.cmd[0], *step.cmd[1:]]
                if _cat_input(step, session.work):
                    new_body += step.out
                    continue
                t0 = time.perf_counter()
                actual = session.run(cmd)
                log(f"{path.name}:{block.start + 1}: {time.perf_counter() - t0:5.1f} s  $ {step.cmd[0][:90]}")
                shown, gap = _blank_tail(step.out)  # blank lines before the next command are layout
                if matches(shown, actual):
                    new_body += step.out
                    continue
                diffs.append(
                    "".join(
                        difflib.unified_diff(
                            [ln + "\n" for ln in shown],
                            [ln + "\n" for ln in actual],
                            f"{path.name}:{block.start + 1} (page): $ {step.cmd[0][:80]}",
                            "(now)",
                        )
                    )
                )
                new_body += updated(shown, actual) + gap
            replacements.append(
                (block.start + 1, block.end, [(block.indent + ln) if ln else ln for ln in new_body])
            )
    finally:
        session.close()
    if update and diffs:
        for start, end, body in reversed(replacements):
            lines[start:end] = body
        path.write_text("\n".join(lines))
    return diffs


def pages(args: list[str]) -> list[Path]:
    return [Path(a).resolve() for a in args] if args else sorted((ROOT / "docs").glob("*.md"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="print a diff and exit 1 when an example drifted")
    mode.add_argument("--update", action="store_true", help="rewrite drifted outputs in place")
    ap.add_argument("pages", nargs="*", help="docs pages (default: docs/*.md that take part)")
    a = ap.parse_args(argv)
    drifted = 0
    for page in pages(a.pages):
        diffs = run_page(page, a.update, log=lambda s: print(s, file=sys.stderr))
        for d in diffs:
            print(d)
        drifted += len(diffs)
    verb = "updated" if a.update else "drifted"
    print(f"docs examples: {drifted} output(s) {verb}", file=sys.stderr)
    return 1 if drifted and a.check else 0


if __name__ == "__main__":
    sys.exit(main())
