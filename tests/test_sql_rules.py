"""The SQL house rules (DEVELOPERS.md, issue 22 item 3), checked on every module of src/ctxprior:

(a) no SQL string literal spans more than one source line: longer statements live in named .sql
    files read with ``sqlfiles.read_sql``;
(b) an f-string of SQL formats in only names quoted by ``ident(...)``, literals by ``literal(...)``
    / ``path_sql(...)``, or SQL text: a variable of the same function assigned only such pieces
    (string constants, f-strings of them, ``sep.join`` of them, a ``read_sql`` template filled
    with ``.format``), or one of the names in ``ALLOWED`` below. Values go as parameters.

An SQL string is a literal that starts with an SQL verb (the detection of
benchmarks/structure_counts.py, help texts and prose left out), or an f-string passed straight
to ``execute``/``query``/``df``/``scalar``/``arrow``/``sql`` (e.g. ``f"{verb} {ident(t)} ..."``).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from source_helpers import modules, parsed

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxprior"

SQL = re.compile(
    r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|COPY|ATTACH|DETACH|PRAGMA|"
    r"SET|BEGIN|COMMIT|ROLLBACK|CHECKPOINT|DESCRIBE|EXPORT|IMPORT|INSTALL|LOAD|TRUNCATE|"
    r"FROM|VALUES)\s"
)
PROSE = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|CHECKPOINT)\s+(?!TRANSACTION\b)[a-z]")  # "COMMIT returned"

QUOTING = {"ident", "literal", "path_sql"}  # sqlfiles: the only ways a name or a literal enters SQL text
# Functions and parameters whose value is SQL text, not a value, each with why:
ALLOWED = {
    "select_sql": "covariates/catalog.create_view's parameter: a view body its callers build from templates",
    "sql": "a parameter or method (TripleFiles.sql, kg_build passes) holding SQL text built from templates",
    "src": "publish/parquet: a parameter holding the SELECT of an export, built by _source_sql",
    "_safe_type": "publish/parquet: a column type from a manifest, checked to be a plain type name",
    "types": "publish/parquet._insert: the table's own column types, from the DuckDB catalog",
    "_condition": "covariates/user: the join condition of one of the fixed key names (dataset, entity, ...)",
}


def _sql_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    else:
        return None
    if not SQL.match(text) or PROSE.match(text) or len(text.split()) < 3:
        return None
    return text


def _skipped(tree: ast.AST) -> set[int]:
    """Nodes that are not SQL statements: parts of f-strings, docstrings, help= texts."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out |= {id(v) for v in node.values}
        elif isinstance(node, ast.Expr):
            out.add(id(node.value))
        elif isinstance(node, ast.keyword) and node.arg == "help":
            out |= {id(n) for n in ast.walk(node.value)}
    return out


RUNS_SQL = {"execute", "query", "df", "scalar", "arrow", "sql"}


def sql_literals(tree: ast.AST):
    """(node, text) of every SQL string literal in ``tree``."""
    skip = _skipped(tree)
    passed = {
        id(n.args[0])
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and _name(n.func) in RUNS_SQL
        and n.args
        and isinstance(n.args[0], ast.JoinedStr)
    }
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if (text := _sql_text(node)) is not None:
            yield node, text
        elif id(node) in passed:
            yield node, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Scope:
    """What the variables of one function are assigned (and which are its parameters)."""

    def __init__(self, fn: ast.AST | None, tree: ast.AST):
        self.tree = tree
        self.assigned: dict[str, list[ast.AST]] = {}
        self.params: set[str] = set()
        self.functions: dict[str, list[ast.AST]] = {}  # the module's functions and methods, by name
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, []).append(node)
        self.module = {
            t.id: [node.value]
            for node in getattr(tree, "body", [])  # module constants
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        root = fn or tree
        if fn is not None:
            self.params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        for node in ast.walk(root):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.assigned.setdefault(t.id, []).append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    self.assigned.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, (ast.For, ast.comprehension)):
                self._loop(node.target, node.iter)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
                and node.args
            ):
                self.assigned.setdefault(node.func.value.id, []).append(node.args[0])  # a list of pieces

    def _loop(self, target: ast.AST, it: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(it)
        elif (
            isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and isinstance(it, ast.Call)
            and _name(it.func) == "enumerate"
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            self.assigned.setdefault(target.elts[0].id, []).append(ast.Constant(0))  # an index
            self.assigned.setdefault(target.elts[1].id, []).append(it.args[0])


def _is_constant_strs(node: ast.AST) -> bool:
    """A tuple / list of string constants (a loop over fixed table names)."""
    return isinstance(node, (ast.Tuple, ast.List)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    )


def sql_text_ok(node: ast.AST, scope: _Scope, seen: frozenset = frozenset()) -> bool:
    """``node`` evaluates to SQL text made only of constants, quoted names/literals and templates."""

    def ok(n):
        return sql_text_ok(n, scope, seen)

    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, int)) and not isinstance(node.value, bool)
    if isinstance(node, ast.JoinedStr):
        return all(ok(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return ok(node.value)
    if isinstance(node, ast.IfExp):
        return ok(node.body) and ok(node.orelse)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return ok(node.left) and ok(node.right)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return ok(node.elt)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(ok(e) for e in node.elts)
    if isinstance(node, ast.Call):
        return _call_ok(node, scope, seen)
    if isinstance(node, ast.Name):
        name = node.id
        if name in seen:
            return False
        if name in scope.params and name not in scope.assigned:  # a parameter holding SQL text
            return name in ALLOWED
        values = scope.assigned.get(name) or scope.module.get(name)
        if not values:
            return False
        return all(_is_constant_strs(v) or sql_text_ok(v, scope, seen | {name}) for v in values)
    if isinstance(node, ast.Attribute):
        return node.attr in ALLOWED
    if isinstance(node, ast.Subscript):
        return _name(node.value) in ALLOWED
    return False


def _returns_sql(fn: str, scope: _Scope, seen: frozenset) -> bool:
    """Every ``return`` of the module's functions named ``fn`` gives SQL text (recursion counts as such)."""
    if ("def", fn) in seen:
        return True
    defs = scope.functions.get(fn, [])
    for d in defs:
        inner = _Scope(d, scope.tree)
        rets = [n.value for n in ast.walk(d) if isinstance(n, ast.Return) and n.value is not None]
        outer = frozenset(x for x in seen if isinstance(x, tuple)) | {("def", fn)}  # its own variables
        if not rets or not all(sql_text_ok(r, inner, outer) for r in rets):
            return False
    return bool(defs)


def _call_ok(node: ast.Call, scope: _Scope, seen: frozenset) -> bool:
    fn = _name(node.func)
    if fn in QUOTING or fn in ALLOWED or fn == "read_sql":
        return True
    if fn in scope.functions and fn != "format":  # a function of this module that returns SQL text
        return _returns_sql(fn, scope, seen)
    if fn == "body" and node.args:
        return sql_text_ok(node.args[0], scope, seen)
    if isinstance(node.func, ast.Attribute) and fn == "format":  # a template filled with SQL pieces
        return sql_text_ok(node.func.value, scope, seen) and all(
            sql_text_ok(k.value, scope, seen) for k in node.keywords
        )
    if isinstance(node.func, ast.Attribute) and fn == "replace" and len(node.args) == 2:
        return sql_text_ok(node.func.value, scope, seen) and sql_text_ok(node.args[1], scope, seen)
    if isinstance(node.func, ast.Attribute) and fn == "join" and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Call) and _name(arg.func) == "map" and arg.args:
            return _name(arg.args[0]) in QUOTING
        return sql_text_ok(arg, scope, seen)
    return False


def _functions(tree: ast.AST):
    """(node, enclosing function or None) for every node of the module."""
    out = {}

    def visit(node, fn):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else fn
            out[id(child)] = fn
            visit(child, inner)

    visit(tree, None)
    return out


def _modules():
    return modules()


@functools.cache
def _literals(f: Path) -> tuple:
    """sql_literals of one source file, found once per test process."""
    return tuple(sql_literals(parsed(f)))


def test_modules_found():
    assert len(_modules()) > 50


def test_no_multiline_sql_literals():
    bad = []
    for f in _modules():
        for node, text in _literals(f):
            if node.end_lineno > node.lineno:
                bad.append(f"{f.relative_to(SRC)}:{node.lineno}: {' '.join(text.split())[:60]}")
    assert not bad, (
        "SQL over more than one line; move it to a named .sql file (sqlfiles.read_sql):\n" + "\n".join(bad)
    )


def test_fstring_sql_formats_only_quoted_names_literals_and_templates():
    bad = []
    for f in _modules():
        tree = parsed(f)
        enclosing = _functions(tree)
        scopes: dict[int, _Scope] = {}
        for node, text in _literals(f):
            if not isinstance(node, ast.JoinedStr):
                continue
            fn = enclosing.get(id(node))
            scope = scopes.setdefault(id(fn), _Scope(fn if not isinstance(fn, ast.Lambda) else None, tree))
            for v in node.values:
                if isinstance(v, ast.FormattedValue) and not sql_text_ok(v.value, scope):
                    bad.append(
                        f"{f.relative_to(SRC)}:{node.lineno}: {{{ast.unparse(v.value)}}} in "
                        f"{' '.join(text.split())[:50]}"
                    )
    assert not bad, (
        "f-string SQL formats a value (or a name without sqlfiles.ident); pass it as a "
        "parameter, or quote it with ident()/literal():\n" + "\n".join(bad)
    )


def _is_template(node: ast.AST, scope: _Scope) -> bool:
    """``node`` is a named .sql file's text: read_sql(...), body(read_sql(...)), or a name assigned one."""
    if isinstance(node, ast.Call) and _name(node.func) == "read_sql":
        return True
    if isinstance(node, ast.Call) and _name(node.func) == "body" and node.args:
        return _is_template(node.args[0], scope)
    if isinstance(node, ast.Name):
        values = scope.assigned.get(node.id, [])
        return bool(values) and all(_is_template(v, scope) for v in values)
    return False


def test_sql_templates_are_filled_only_with_quoted_names_literals_and_sql():
    bad = []
    for f in _modules():
        tree = parsed(f)
        enclosing = _functions(tree)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"
            ):
                continue
            fn = enclosing.get(id(node))
            scope = _Scope(fn if not isinstance(fn, ast.Lambda) else None, tree)
            if not _is_template(node.func.value, scope):
                continue
            for k in node.keywords:
                if not sql_text_ok(k.value, scope):
                    bad.append(f"{f.relative_to(SRC)}:{node.lineno}: {k.arg}={ast.unparse(k.value)}")
            bad += [f"{f.relative_to(SRC)}:{node.lineno}: positional {ast.unparse(a)}" for a in node.args]
    assert not bad, (
        "a .sql template filled with a value (or a name without sqlfiles.ident); use "
        "ident()/literal() or a parameter:\n" + "\n".join(bad)
    )


def test_the_checks_catch_what_they_are_for():
    src = """
def f(wh, run_id, table, ids):
    wh.execute("SELECT a FROM t "
               "WHERE b = 1")
    wh.execute(f"SELECT * FROM run WHERE run_id = {run_id}")
    wh.execute(f"SELECT * FROM {table}")
    wh.execute(f"DELETE FROM t WHERE id IN ({', '.join(map(str, ids))})")
    ok = ", ".join(ident(c) for c in ids)
    wh.execute(f"SELECT {ok} FROM {ident(table)}")
    tpl = body(read_sql("p", "x.sql")).format(cols=ok)
    wh.execute(f"CREATE VIEW {ident(table)} AS {tpl}")
    wh.execute(f"SET threads = {literal(4)}")
    wh.execute(f'{verb} "{table}" SELECT 1')
"""
    tree = ast.parse(src)
    found = list(sql_literals(tree))
    assert [n.end_lineno > n.lineno for n, _ in found].count(True) == 1
    scope = _Scope(tree.body[0], tree)
    flagged = [
        n.lineno
        for n, _ in found
        if isinstance(n, ast.JoinedStr)
        and not all(sql_text_ok(v.value, scope) for v in n.values if isinstance(v, ast.FormattedValue))
    ]
    assert flagged == [5, 6, 7, 13]
    help_text = 'opt(help="SET VARIABLE NAME = VALUE before the query")\nx = "COMMIT returned, before it"'
    assert list(sql_literals(ast.parse(help_text))) == []
