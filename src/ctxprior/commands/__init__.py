"""CLI command modules: each defines click commands and lists them in ``COMMANDS``; a command
parses its options, calls one method of the Python API (``ctxprior.api``), and prints.

Import rules: the package table in docs/architecture.md.
"""

from __future__ import annotations

import ast
import functools
from importlib import resources


@functools.cache
def found() -> dict[str, str]:
    """command name -> the module of this package that lists it in ``COMMANDS``, read from the
    modules' text (not imported: the command line imports only the module of the command it runs).
    A command's name is its decorator's first argument, else its function's name with dashes, as
    click names it (``tests/test_cli_lazy.py`` checks this against the imported modules)."""
    out: dict[str, str] = {}
    for f in sorted(resources.files(__package__).iterdir(), key=lambda f: f.name):
        if not f.name.endswith(".py") or f.name.startswith("_"):
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        listed = next(
            (
                [e.id for e in node.value.elts if isinstance(e, ast.Name)]
                for node in tree.body
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "COMMANDS" for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))
            ),
            [],
        )
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in listed:
                out[_command_name(node)] = f.name.removesuffix(".py")
    return out


def _command_name(fn: ast.FunctionDef) -> str:
    for dec in fn.decorator_list:
        if (
            isinstance(dec, ast.Call)
            and isinstance(dec.func, ast.Attribute)
            and dec.func.attr in ("command", "group")
            and dec.args
            and isinstance(dec.args[0], ast.Constant)
            and isinstance(dec.args[0].value, str)
        ):
            return dec.args[0].value
    return fn.name.replace("_", "-")
