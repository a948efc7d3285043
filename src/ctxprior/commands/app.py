"""What every command receives: the warehouse path and wait from the root options (``pass_app``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import click


@dataclass
class AppContext:
    db: str
    wait: float

    def api(self, write: bool = False):
        """The Python API's Warehouse for --db / --wait (read-only unless write=True). Opened by its
        first call, so a command's own input errors come before a missing warehouse's."""
        from .. import api

        return api.Warehouse(self.db, write=write, wait=self.wait, check=False)


pass_app = click.make_pass_decorator(AppContext)


def quiet_log(line: str) -> None:
    """The log of a ``--quiet`` command: status lines are dropped; a warning or a note that changes
    how to read the results ("warning: ...", "note: ...") still prints (stderr)."""
    if line.lstrip().startswith(("warning:", "note:")):
        click.echo(line, err=True)


def quiet_keywords(quiet: bool) -> dict:
    """What ``--quiet`` means for a long command's API call: no progress bar and no status lines
    (:func:`quiet_log`); its results (stdout) are printed all the same."""
    return {"progress": False, "log": quiet_log} if quiet else {"progress": True}


SUMMARY_MAX = 100
"""The longest summary ``--help`` lists; a command whose :func:`summary` is longer declares its own
``short_help`` (tests/test_first_hour.py checks every command), or loses its asides."""


def summary(text: str) -> str:
    """A command's line in its group's ``--help``: the first sentence of its help, cut at its
    first clause (``:`` or ``;``), each outside parentheses, so "(Du et al. 2024, App. C)" or
    "(Fig. 2-5)" stays whole (click's own summary stops at the first full stop and at 45
    characters: "Fake entities (Du et al.")."""
    text = " ".join(text.split("\n\n")[0].split())
    depth, first = 0, text
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        end = i + 1 == len(text) or text[i + 1] == " "
        if depth == 0 and end and ch in ".:;":
            first = text[: i + 1] if ch == "." else text[:i] + "."
            break
    return first if len(first) <= SUMMARY_MAX else _without_asides(first)


def _without_asides(text: str) -> str:
    """``text`` without its parenthesised asides: "Load NQ-Swap (Longpre et al. 2021; ...)." ->
    "Load NQ-Swap."."""
    out, depth = [], 0
    for i, ch in enumerate(text):
        depth += ch == "(" and (depth > 0 or text[i - 1 : i] == " ")  # "http(s)" is a word
        if not depth:
            out.append(ch)
        depth -= ch == ")" and depth > 0
    return re.sub(r"\s+([.,;:])", r"\1", " ".join("".join(out).split()))
