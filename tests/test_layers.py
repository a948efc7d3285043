"""Imports point down the layers (cli/commands -> api -> ingest/scoring/queries/covariates/publish
-> schema), with no circles, and the installed package imports no test or benchmark harness."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxprior"
LAYER = {"errors": 0, "sqlfiles": 0, "faults": 0, "digest": 0, "schema": 1,
         "ingest": 2, "scoring": 2, "queries": 2, "covariates": 2, "publish": 2, "info": 2, "sqlshell": 2,
         "fakes": 2, "dynamicqa": 2,
         "api": 3, "pipeline": 3, "cli": 5, "commands": 5, "__main__": 6, "__init__": 6}


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


def _module_edges() -> dict[str, set[str]]:
    """module -> modules of ctxprior it imports (lazy imports inside functions included); the
    root package is left out (modules take only ``__version__`` from it)."""
    mods = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    edges: dict[str, set[str]] = {}
    for m, f in mods.items():
        base_pkg = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        out: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = base_pkg[:len(base_pkg) - (node.level - 1)]
                    mod = ".".join(base + (node.module.split(".") if node.module else []))
                elif node.module and node.module.startswith("ctxprior"):
                    mod = node.module
                else:
                    continue
                out.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in mods)
        edges[m] = {t for t in out if t in mods and t not in (m, "ctxprior")}
    return edges


def test_no_module_import_circles():
    """Not even between two modules of one package (e.g. schema.warehouse <-> schema.migrations)."""
    edges = _module_edges()
    done: set[str] = set()

    def visit(n, path):
        assert n not in path, f"import circle: {' -> '.join(path[path.index(n):] + [n])}"
        if n in done:
            return
        for m in sorted(edges[n]):
            visit(m, path + [n])
        done.add(n)

    for n in sorted(edges):
        visit(n, [])


# docs/architecture.md, "Packages and what each may import": the layer-2 packages and the
# pipeline may import only what their row names (plus layer 0)
MAY_IMPORT = {"ingest": {"schema", "covariates"}, "scoring": {"schema"},
              "dynamicqa": {"schema", "ingest", "scoring"}, "queries": {"schema", "dynamicqa", "covariates"},
              "covariates": {"schema"}, "fakes": {"schema", "ingest", "scoring"}, "publish": {"schema"},
              "info": {"schema", "sqlshell"}, "sqlshell": {"schema"}, "pipeline": set()}


def test_packages_import_only_what_the_architecture_page_names():
    edges = _edges()
    base = {t for t, layer in LAYER.items() if layer == 0} | {"__version__"}
    extra = {p: sorted(edges.get(p, set()) - allowed - base) for p, allowed in MAY_IMPORT.items()}
    assert not any(extra.values()), f"imports the architecture page does not list: {extra}"
