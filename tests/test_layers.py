"""Imports point down the layers, a package imports only what its row names, there are no circles,
and the installed package imports no test or benchmark harness.

The rules live in one place: the table "Packages and what each may import" in
docs/architecture.md. This test reads it (``layer_table``); the package docstrings link to it."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from architecture_helpers import LAYER, MAY_IMPORT
from source_helpers import nodes, parsed

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ctxprior"


def _edges():
    edges = defaultdict(set)
    for f in SRC.rglob("*.py"):
        rel = f.relative_to(SRC).parts
        top = rel[0].removesuffix(".py")
        for node in nodes(f):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(rel[:-1])
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = base + (node.module.split(".") if node.module else [])
                tgt = (mod[0] if mod else node.names[0].name).removesuffix(".py")
                if not mod and tgt not in LAYER:
                    tgt = "__init__"  # `from .. import name`: the root package itself
                if tgt != top:
                    edges[top].add(tgt)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for n in names:
                    assert n.split(".")[0] not in ("tests", "benchmarks", "loadtest", "scale_helpers"), (f, n)
                    if n.startswith("ctxprior.") and n.split(".")[1] != top:
                        edges[top].add(n.split(".")[1])
                    elif n == "ctxprior" and top != "__init__":
                        edges[top].add("__init__")
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
    """module -> modules of ctxprior it imports (lazy imports inside functions included), the root
    package ``ctxprior`` included."""
    mods = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    edges: dict[str, set[str]] = {}
    for m, f in mods.items():
        base_pkg = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        out: set[str] = set()
        for node in nodes(f):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = base_pkg[: len(base_pkg) - (node.level - 1)]
                    mod = ".".join(base + (node.module.split(".") if node.module else []))
                elif node.module and node.module.startswith("ctxprior"):
                    mod = node.module
                else:
                    continue
                out.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in mods)
        edges[m] = {t for t in out if t in mods and t != m}
    return edges


def test_no_module_import_circles():
    """Not even between two modules of one package (e.g. storage.store <-> storage.migrations)."""
    edges = _module_edges()
    done: set[str] = set()

    def visit(n, path):
        assert n not in path, f"import circle: {' -> '.join(path[path.index(n) :] + [n])}"
        if n in done:
            return
        for m in sorted(edges[n]):
            visit(m, path + [n])
        done.add(n)

    for n in sorted(edges):
        visit(n, [])


def test_the_table_is_read():
    """The page's table parses into every layer and the rows that restrict imports."""
    assert set(LAYER.values()) == set(range(7)), LAYER
    assert LAYER["version"] == 0 and LAYER["schema"] == 1 and LAYER["storage"] == 2 and LAYER["api"] == 4
    assert MAY_IMPORT["schema"] == set() and MAY_IMPORT["storage"] == {"schema"}
    assert MAY_IMPORT["ingest"] == {"schema", "storage", "covariates"}
    assert all(n in LAYER for allowed in MAY_IMPORT.values() for n in allowed or ()), MAY_IMPORT


def test_packages_import_only_what_the_architecture_page_names():
    edges = _edges()
    base = {t for t, layer in LAYER.items() if layer == 0}
    extra = {
        p: sorted(edges.get(p, set()) - (allowed or set()) - (base if LAYER[p] > 0 else set()))
        for p, allowed in MAY_IMPORT.items()
        if allowed is not None or LAYER[p] == 0
    }
    assert not any(extra.values()), f"imports the architecture page does not list: {extra}"


def test_no_module_imports_the_root_package():
    """``ctxprior/__init__.py`` is the top layer (it re-exports the API); ``__version__`` comes from
    the layer-0 ``version`` module."""
    edges = _edges()
    assert not [a for a, bs in edges.items() if "__init__" in bs], dict(edges)


def test_package_docstrings_link_to_the_rules_instead_of_restating_them():
    for f in sorted(SRC.glob("*/__init__.py")):
        doc = ast.get_docstring(parsed(f)) or ""
        assert "may import" not in doc.lower(), f"{f}: the rule lives in docs/architecture.md; link to it"
