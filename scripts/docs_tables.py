#!/usr/bin/env python
"""Write the tables of docs/*.md that are made from declarations (as cog does), or check them.

    python scripts/docs_tables.py --check               # exit 1 naming each page and block that differs
    python scripts/docs_tables.py --update              # rewrite the blocks in place
    python scripts/docs_tables.py --check docs/scoring.md

It also writes ``src/ctxprior/schema/tables.sql``, the warehouse's DuckDB DDL, from the SQLAlchemy
tables (``schema.declared.compiled_ddl``) when the tables the file makes differ from theirs
(``tests/test_declared.py`` checks it; a SQLAlchemy that only writes the text differently changes
nothing).

A block is the lines between two marker comments; what is between them is generated, never edited::

    <!-- tables: options score -->        a command's options: ctxprior.api.command_options("score")
    <!-- /tables -->

    <!-- tables: measures -->             the stored measures: ctxprior.measures.RELIANCE_MEASURES
    <!-- /tables -->

The option table has one row per declared ``Option`` (flag or API keyword, its values, default,
help); the measure table one row per ``Measure`` (column, SQL type, description, source, schema
version). Adding an option or a measure touches its declaration and the code that reads it, then
``--update`` here (docs/architecture.md, "Where to add"). ``tests/test_docs_tables.py`` runs the
check on every page. The markers are plain HTML comments: mkdocs shows nothing of them, and
``scripts/docs_examples.py`` (``<!-- docs-examples: ... -->``) does not read them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_OPEN = re.compile(r"^<!--\s*tables:\s*(.*?)\s*-->\s*$")
_CLOSE = re.compile(r"^<!--\s*/tables\s*-->\s*$")


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: pipes escaped, no line breaks, no HTML tag."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _values(opt) -> str:
    """What an option takes, as ``--help`` would hint it: ``auto|N``, ``open,closed``, ``[chi|psi]``."""
    if opt.kind is bool:
        return ""
    names = opt.names()
    if names:
        shown = ("," if opt.listed else "|").join(names)
    else:
        shown = opt.metavar or {int: "N", float: "X"}.get(opt.kind, "TEXT")
    if opt.auto:
        shown = f"auto|{shown}"
    return f"[{shown}]" if opt.bare else shown


def _default(opt) -> str:
    if opt.kind is bool:
        return "off" if not opt.default else "on"
    if opt.default is None or opt.default == ():
        return "auto" if opt.auto else "—"
    return f"`{opt.text(opt.default)}`"


def option_row(opt) -> str:
    """One option's row: ``| `--flag VALUES` (`keyword`) | default | help |``."""
    values = _values(opt)
    if opt.flag:
        head = f"`{opt.flag}{' ' + values if values else ''}` (`{opt.name}`)"
    else:  # an API keyword (the command line spells it its own way, or it is an argument)
        head = f"`{opt.name}` ({'argument' if opt.argument else 'API only'}{', ' + values if values else ''})"
    more = " (required)" if opt.required else ""
    return f"| {_cell(head)} | {_cell(_default(opt))} | {_cell(opt.help_text())}{more} |"


def options_table(command: str) -> list[str]:
    from ctxprior.api.options import command_options

    rows = [option_row(o) for o in command_options(command)]
    return ["| option (API keyword) | default | meaning |", "|---|---|---|", *rows]


def measures_table() -> list[str]:
    from ctxprior.measures import RELIANCE_MEASURES

    rows = [
        f"| `{m.name}` | {m.sql_type}{'' if m.nullable else ', NOT NULL'} | {_cell(m.description)} "
        f"| {_cell(m.source) or '—'} | v{m.since} |"
        for m in RELIANCE_MEASURES
    ]
    return ["| column | type | definition | source | since |", "|---|---|---|---|---|", *rows]


TABLES: dict[str, Callable[..., list[str]]] = {"options": options_table, "measures": measures_table}
"""Block kind -> the function that writes its lines (the marker's further words are its arguments)."""


def render(spec: str) -> list[str]:
    """The lines of the block ``<!-- tables: SPEC -->``; a SPEC naming no table raises ValueError."""
    kind, *args = spec.split(maxsplit=1)
    if kind not in TABLES:
        raise ValueError(f"unknown table {kind!r} (known: {', '.join(TABLES)})")
    return TABLES[kind](*args)


def regenerate(text: str) -> tuple[str, list[str]]:
    """(``text`` with every block rewritten, the specs of the blocks that differed)."""
    lines = text.split("\n")
    out: list[str] = []
    changed: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        m = _OPEN.match(lines[i])
        i += 1
        if not m:
            continue
        end = next((j for j in range(i, len(lines)) if _CLOSE.match(lines[j])), None)
        if end is None:
            raise ValueError(f"<!-- tables: {m.group(1)} --> has no <!-- /tables --> after it")
        fresh = ["", *render(m.group(1)), ""]
        if lines[i:end] != fresh:
            changed.append(m.group(1))
        out += fresh
        i = end
    return "\n".join(out), changed


def _tables_sql(update: bool) -> int:
    """``schema/tables.sql`` checked against the declarations (rewritten with ``update``): 1 when it differed."""
    from importlib import resources

    from ctxprior.schema import declared

    ours = declared.ddl_statements()
    fresh = declared.compiled_ddl()
    if not declared.ddl_differences(ours, fresh):
        return 0
    path = Path(str(resources.files("ctxprior.schema").joinpath(declared.TABLES_SQL)))
    print(f"{path}: {'rewrote' if update else 'differs from its declarations'}")
    if update:
        path.write_text(declared.tables_text(fresh))
        declared.ddl_statements.cache_clear()
    return 1


def pages(args: list[str]) -> list[Path]:
    return [Path(a) for a in args] if args else sorted((ROOT / "docs").glob("*.md"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when a block differs")
    mode.add_argument("--update", action="store_true", help="rewrite the blocks")
    parser.add_argument("pages", nargs="*", help="docs pages (default: docs/*.md)")
    args = parser.parse_args(argv)
    differ = 0 if args.pages else _tables_sql(args.update)
    for page in pages(args.pages):
        text = page.read_text()
        fresh, changed = regenerate(text)
        for spec in changed:
            verb = "rewrote" if args.update else "differs from its declarations:"
            print(f"{page}: {verb} <!-- tables: {spec} -->")
        differ += len(changed)
        if args.update and fresh != text:
            page.write_text(fresh)
    if differ and args.check:
        print("run: python scripts/docs_tables.py --update", file=sys.stderr)
    return 1 if differ and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
