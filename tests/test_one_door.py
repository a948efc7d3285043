"""One door: every module of ``commands/`` imports, of ctxprior, only ``commands/`` itself, ``ctxprior.api``
and ``ctxprior.errors`` (at the top or inside a function), so each command reaches the library through
the Python API."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from architecture_helpers import MAY_IMPORT

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

COMMANDS = Path(__file__).resolve().parents[1] / "src" / "ctxprior" / "commands"
# the commands/ row of docs/architecture.md's table (layer 0 beyond it is not allowed here)
ALLOWED = {f"ctxprior.{n}" for n in MAY_IMPORT["commands"]}


def _imported(path: Path) -> set[str]:
    """Absolute names of the ctxprior modules (or module.name) that ``path`` imports."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative to ctxprior.commands
                base = ["ctxprior", "commands"][: 3 - node.level]
                mod = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "ctxprior":
                out.update(f"{mod}.{a.name}" if mod == "ctxprior" else mod for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "ctxprior")
    return out


def _outside(name: str) -> bool:
    return not (
        name in ALLOWED
        or name.startswith(tuple(f"{a}." for a in ALLOWED))
        or name == "ctxprior.commands"
        or name.startswith("ctxprior.commands.")
    )


@pytest.mark.parametrize("module", [p.name for p in sorted(COMMANDS.glob("*.py"))])
def test_commands_import_only_app_api_and_errors(module):
    bad = sorted(n for n in _imported(COMMANDS / module) if _outside(n))
    assert not bad, f"commands/{module} imports {bad}; call a ctxprior.api method instead"


def test_the_check_sees_library_imports_at_the_top_and_inside_functions(tmp_path):
    f = tmp_path / "cmd.py"
    f.write_text(
        "from ..schema import open_store\nfrom .. import api\nfrom ..errors import UserError\n"
        "from .app import pass_app\nimport ctxprior.sqlshell\n"
        "def f():\n    from ..analyses.analyses import parse_only\n    from .. import info\n"
    )
    bad = sorted(n for n in _imported(f) if _outside(n))
    assert bad == ["ctxprior.analyses.analyses", "ctxprior.info", "ctxprior.schema", "ctxprior.sqlshell"]
