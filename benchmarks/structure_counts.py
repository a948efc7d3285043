"""Structure counts for issue 22 (run on two checkouts to compare):

    python benchmarks/structure_counts.py [SRC_DIR] [-v]

- inline SQL: string literals in Python (plain or f-strings) that start with an SQL verb; lines
  they span, how many span more than one line, and how many are f-strings (values or names
  formatted into SQL); docstrings, ``help=`` texts and prose that starts with a transaction verb
  ("COMMIT returned, ...") are not SQL;
- functions over 60 lines (``def`` to end);
- leaf CLI commands, and how many of them import nothing of ctxprior but ``api``, ``errors`` and
  their own ``commands`` package.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

SQL = re.compile(
    r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|COPY|ATTACH|DETACH|PRAGMA|"
    r"SET|BEGIN|COMMIT|ROLLBACK|CHECKPOINT|DESCRIBE|EXPORT|IMPORT|INSTALL|LOAD|TRUNCATE|"
    r"FROM|VALUES)\s"
)
PROSE = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|CHECKPOINT)\s+(?!TRANSACTION\b)[a-z]")


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def inline_sql(src: Path, verbose: bool = False) -> dict:
    lines = multi = fstr = n = 0
    for f in sorted(src.rglob("*.py")):
        tree = ast.parse(f.read_text())
        inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
        inner |= {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
        inner |= {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.keyword) and node.arg == "help"
            for n in ast.walk(node.value)
        }  # click help texts
        for node in ast.walk(tree):
            if id(node) in inner:
                continue
            s = _text(node)
            if s is None or not SQL.match(s) or PROSE.match(s) or len(s.split()) < 3:
                continue
            span = node.end_lineno - node.lineno + 1
            n += 1
            lines += span
            multi += span > 1
            fstr += isinstance(node, ast.JoinedStr)
            if verbose:
                kind = "f" if isinstance(node, ast.JoinedStr) else " "
                print(
                    f"  sql {kind} {span:3d}  {f.relative_to(src)}:{node.lineno}  {' '.join(s.split())[:70]}"
                )
    return {
        "inline SQL strings": n,
        "inline SQL lines": lines,
        "multi-line SQL strings": multi,
        "f-string SQL strings": fstr,
    }


def body_lines(node: ast.AST) -> int:
    """Lines of a function's statements: without its signature and docstring (the formatter puts
    one parameter per line, so a signature's length says nothing about the code's)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def long_functions(src: Path, limit: int = 60, verbose: bool = False) -> tuple[int, int]:
    """(functions over ``limit`` lines from ``def`` to end, functions whose body is)."""
    n = nb = 0
    for f in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                n += size > limit
                nb += body_lines(node) > limit
                if verbose and size > limit:
                    print(
                        f"  long {size:4d} (body {body_lines(node)})  {f.relative_to(src)}:{node.lineno} {node.name}"
                    )
    return n, nb


def _is_command(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "command"
        for d in fn.decorator_list
    )


def _ctx_imports(nodes) -> set[str]:
    out = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level:
            mod = node.module or ""
            out.add(("." * node.level) + mod)
    return out


def commands(src: Path, verbose: bool = False) -> tuple[int, int]:
    ok_mods = {"..api", "..errors", ".app", "."}
    total = through = 0
    for f in sorted((src / "commands").glob("*.py")):
        tree = ast.parse(f.read_text())
        top = _ctx_imports(tree.body)
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and _is_command(fn):
                total += 1
                mods = top | _ctx_imports(ast.walk(fn))
                bad = sorted(
                    m
                    for m in mods
                    if (m not in ok_mods and not m.startswith("."))
                    or (m.startswith("..") and m not in ok_mods)
                )
                src_text = ast.get_source_segment(f.read_text(), fn) or ""
                uses_api = "api" in src_text
                good = not bad and uses_api
                through += good
                if verbose and not good:
                    print(
                        f"  cmd  {f.name}:{fn.name} imports {bad or '-'}{'' if uses_api else ' (no api call)'}"
                    )
    return total, through


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="?", default=str(Path(__file__).resolve().parents[1] / "src" / "ctxprior"))
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    src = Path(a.src)
    if (src / "ctxprior").is_dir():
        src = src / "ctxprior"
    for k, v in inline_sql(src, a.verbose).items():
        print(f"{k:28s} {v}")
    n, nb = long_functions(src, verbose=a.verbose)
    print(f"{'functions over 60 lines':28s} {n}")
    print(f"{'function bodies over 60':28s} {nb}")
    total, through = commands(src, a.verbose)
    print(f"{'commands through the API':28s} {through}/{total}")
    sys.exit(0)


if __name__ == "__main__":
    main()
