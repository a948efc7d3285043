"""House rule: no function in ``src/`` runs over 60 lines of statements (its signature and
docstring not counted: the formatter puts one parameter per line). A longer one becomes named steps."""

from __future__ import annotations

import ast
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import pytest
from source_helpers import nodes
from structure_counts import body_lines

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

LIMIT = 60


def test_no_function_body_runs_over_60_lines():
    long = []
    for f in sorted((ROOT / "src" / "ctxprior").rglob("*.py")):
        for node in nodes(f):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > LIMIT:
                long.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({body_lines(node)} lines)")
    assert not long, "split into named steps: " + "; ".join(long)


def test_body_lines_leaves_out_the_signature_and_docstring():
    fn = ast.parse(
        'def f(\n    a,\n    b,\n):\n    """Doc\n    string."""\n    x = a\n    return x + b\n'
    ).body[0]
    assert body_lines(fn) == 2
