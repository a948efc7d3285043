"""The suite's own rules: the quick tier (``-m quick``, ``bash scripts/test.sh --quick``) covers
every package of src/ctxprior, and a test file imports shared helpers from helper modules
(tests/*_helpers.py, *_fixtures.py, conftest.py), never from another test file.

"Covers" is read from the source, not guessed from file names: a package is covered when a quick
test uses a name imported from one of its modules, in its own body, in a fixture or helper of its
file that it uses, or in a function of a helper module it calls (followed through). A test is
quick when it, its class or its module (``pytestmark``) carries ``pytest.mark.quick``."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

pytestmark = pytest.mark.quick

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "ctxprior"
PACKAGES = sorted(".".join(("ctxprior", *p.parent.relative_to(SRC).parts)) for p in SRC.rglob("__init__.py"))


def _is_module(dotted: str) -> bool:
    """ctxprior.a.b is a module or package of the source tree."""
    rel = SRC.joinpath(*dotted.split(".")[1:])
    return dotted.split(".")[0] == "ctxprior" and (rel.with_suffix(".py").is_file() or rel.is_dir())


def package_of(dotted: str) -> str | None:
    """The innermost package holding ``dotted`` (a module or a name in one), or None outside ctxprior."""
    parts = dotted.split(".")
    while parts and not _is_module(".".join(parts)):
        parts.pop()
    while parts and ".".join(parts) not in PACKAGES:
        parts.pop()
    return ".".join(parts) or None


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(names)]) if isinstance(node, ast.Name) else None


def _is_quick(node: ast.AST) -> bool:
    return any(_dotted(n) == "pytest.mark.quick" for n in ast.walk(node))


def _bindings(nodes) -> dict[str, str]:
    """Local name -> what it imports (a dotted path) for the import statements among ``nodes``."""
    out = {}
    for n in nodes:
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            for a in n.names:
                out[a.asname or a.name] = f"{n.module}.{a.name}"
    return out


@functools.cache
def _module(name: str) -> tuple[dict[str, str], dict[str, ast.AST]] | None:
    """(imports, top-level definitions) of tests/<name>.py, or None when it is not a test-side file."""
    path = TESTS / f"{name}.py"
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text())
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return _bindings(tree.body), defs


def _uses(module: str, node: ast.AST, seen: set) -> set[str]:
    """The ctxprior packages whose names ``node`` (in tests/<module>.py) uses, followed through
    the file's own functions and fixtures and into helper modules."""
    imports, defs = _module(module)
    imports = {**imports, **_bindings(ast.walk(node))}
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if isinstance(node, ast.FunctionDef):
        names |= {a.arg for a in node.args.args}  # fixtures
    out = set()
    for d in filter(None, (_dotted(n) for n in ast.walk(node) if isinstance(n, ast.Attribute))):
        head, _, rest = d.partition(".")
        if imports.get(head, "").startswith("ctxprior"):
            out.add(package_of(f"{imports[head]}.{rest}"))
        elif _module(imports.get(head, "")) and (imports[head], rest.split(".")[0]) not in seen:
            # a helper module imported whole (``import sources_helpers as port``): port.f(...)
            helper, attr = imports[head], rest.split(".")[0]
            seen.add((helper, attr))
            if attr in _module(helper)[1]:
                out |= _uses(helper, _module(helper)[1][attr], seen)
    for name in names:
        target = imports.get(name, "")
        if target.startswith("ctxprior"):
            out.add(package_of(target))
        elif (module, name) not in seen and name in defs:
            seen.add((module, name))
            out |= _uses(module, defs[name], seen)
        elif target and _module(target.rpartition(".")[0]) and (target, name) not in seen:
            seen.add((target, name))
            helper, _, attr = target.rpartition(".")
            if attr in _module(helper)[1]:
                out |= _uses(helper, _module(helper)[1][attr], seen)
    return out - {None}


def quick_tests() -> dict[str, ast.FunctionDef]:
    """'file::test' -> the function, for every quick test."""
    out = {}
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text())
        marked = any(
            isinstance(n, ast.Assign) and any(_dotted(t) == "pytestmark" for t in n.targets) and _is_quick(n)
            for n in tree.body
        )
        for n in tree.body:
            funcs = [n] if isinstance(n, ast.FunctionDef) else getattr(n, "body", [])
            for f in funcs:
                if isinstance(f, ast.FunctionDef) and f.name.startswith("test_"):
                    decorators = [*n.decorator_list, *f.decorator_list] if f is not n else f.decorator_list
                    if marked or any(_is_quick(d) for d in decorators):
                        out[f"{path.stem}::{f.name}"] = f
    return out


def test_every_package_has_a_quick_test():
    covered: dict[str, list[str]] = {}
    for test_id, func in quick_tests().items():
        for pkg in _uses(test_id.split("::")[0], func, set()):
            covered.setdefault(pkg, []).append(test_id)
    missing = [p for p in PACKAGES if p not in covered]
    assert not missing, (
        f"no quick test uses {', '.join(missing)}: mark a fast test that calls into it with "
        "@pytest.mark.quick (the inner loop, DEVELOPERS.md)"
    )


def test_the_coverage_reader_follows_helpers_and_fixtures():
    tests = quick_tests()
    assert "test_test_suite::test_every_package_has_a_quick_test" in tests
    assert package_of("ctxprior.scoring.runs.score.score_sample") == "ctxprior.scoring.runs"
    assert package_of("ctxprior.scoring.runs") == "ctxprior.scoring.runs"
    assert package_of("ctxprior.errors.UserError") == "ctxprior"
    assert package_of("numpy.array") is None
    func = ast.parse("def test_x(db_path):\n    _demo(db_path)\n").body[0]  # _demo: test_scoring's import
    assert {"ctxprior.storage", "ctxprior.ingest"} <= _uses("test_scoring", func, set())


def test_no_quick_test_is_slow():
    slow = [
        t
        for t, f in quick_tests().items()
        if any(_dotted(n) == "pytest.mark.slow" for d in f.decorator_list for n in ast.walk(d))
    ]
    assert not slow, f"marked both quick and slow: {slow}"


def test_test_files_import_helpers_not_other_test_files():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else []
            if isinstance(n, ast.ImportFrom):
                mods = [n.module or ""]
            bad = [m for m in mods if m.rpartition(".")[2].startswith("test_")]
            offenders += [f"{path.relative_to(TESTS)}:{n.lineno} imports {m}" for m in bad]
    assert not offenders, (
        f"{offenders}: move what is shared into a helper module (tests/<area>_helpers.py) and import it from there"
    )
