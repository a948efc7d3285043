"""Imports point down the layers (cli/commands -> api -> ingest/scoring/queries/covariates/publish
-> schema), with no circles, and the installed package imports no test or benchmark harness."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxprior"
LAYER = {"errors": 0, "sqlfiles": 0, "faults": 0, "schema": 1,
         "ingest": 2, "scoring": 2, "queries": 2, "covariates": 2, "publish": 2, "info": 2, "sqlshell": 2,
         "fakes": 2, "dynamicqa": 2,
         "api": 3, "pipeline": 4, "cli": 5, "commands": 5, "__main__": 6, "__init__": 6}


def _edges():
    edges = defaultdict(set)
    for f in SRC.rglob("*.py"):
        rel = f.relative_to(SRC).parts
        top = rel[0].removesuffix(".py")
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(rel[:-1])
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                mod = base + (node.module.split(".") if node.module else [])
                tgt = (mod[0] if mod else node.names[0].name).removesuffix(".py")
                if tgt != top:
                    edges[top].add(tgt)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for n in names:
                    assert not n.split(".")[0] in ("tests", "benchmarks", "loadtest", "scale_helpers"), (f, n)
                    if n.startswith("ctxprior.") and n.split(".")[1] != top:
                        edges[top].add(n.split(".")[1])
    return edges


def test_every_module_is_in_a_layer():
    tops = {p.relative_to(SRC).parts[0].removesuffix(".py") for p in SRC.rglob("*.py")}
    assert tops <= set(LAYER), tops - set(LAYER)


def test_imports_point_down_and_have_no_circles():
    edges = _edges()
    up = [(a, b) for a, bs in edges.items() for b in bs if b in LAYER and LAYER[b] > LAYER[a]]
    assert not up, f"imports that point up the layers: {up}"
    seen, stack = set(), set()

    def visit(n, path):
        assert n not in stack, f"import circle: {' -> '.join(path + [n])}"
        if n in seen:
            return
        seen.add(n)
        stack.add(n)
        for m in sorted(edges.get(n, ())):
            if m in LAYER:
                visit(m, path + [n])
        stack.discard(n)

    for n in sorted(edges):
        visit(n, [])
