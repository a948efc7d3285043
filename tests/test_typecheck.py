"""scripts/typecheck.py's baseline comparison (pure string functions; mypy itself is not run here)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("typecheck", ROOT / "scripts" / "typecheck.py")
typecheck = importlib.util.module_from_spec(_spec)
sys.modules["typecheck"] = typecheck
_spec.loader.exec_module(typecheck)

A = 'src/ctxprior/a.py:12: error: Item "None" of "str | None" has no attribute "x"  [union-attr]'
B = 'src/ctxprior/b.py:3: error: Name "f" already defined on line 1  [no-redef]'
NOTE = "src/ctxprior/a.py:12: note: See https://mypy.rtfd.io"


def test_normalise_strips_line_numbers_and_skips_notes():
    assert typecheck.normalise(A) == (
        'src/ctxprior/a.py: error: Item "None" of "str | None" has no attribute "x"  [union-attr]'
    )
    assert (
        typecheck.normalise(B) == 'src/ctxprior/b.py: error: Name "f" already defined on line N  [no-redef]'
    )
    assert typecheck.normalise("src/ctxprior/a.py:12:5: error: m  [c]") == "src/ctxprior/a.py: error: m  [c]"
    assert typecheck.normalise(NOTE) is None
    assert typecheck.normalise("Found 2 errors in 2 files") is None


def test_same_errors_on_other_lines_pass():
    baseline = typecheck.render_baseline(f"{A}\n{NOTE}\n{B}\n")
    moved = A.replace(":12:", ":40:") + "\n" + B.replace(":3:", ":9:").replace("line 1", "line 7")
    assert typecheck.compare(moved, baseline) == ([], [])
    assert typecheck.report([], []) == []


def test_new_error_fails_and_is_shown_where_it_is():
    baseline = typecheck.render_baseline(A)
    new, gone = typecheck.compare(f"{A}\n{B}", baseline)
    assert new == [B] and gone == []
    assert any("new mypy error" in line for line in typecheck.report(new, gone))


def test_a_second_copy_of_an_allowed_error_is_new():
    baseline = typecheck.render_baseline(A)
    second = A.replace(":12:", ":30:")
    new, gone = typecheck.compare(f"{A}\n{second}", baseline)
    assert len(new) == 1 and gone == []


def test_fixed_error_fails_until_the_baseline_shrinks():
    baseline = typecheck.render_baseline(f"{A}\n{B}")
    new, gone = typecheck.compare(A, baseline)
    assert new == [] and gone == [typecheck.normalise(B)]
    assert "baseline can shrink: run scripts/typecheck.sh --update" in "\n".join(typecheck.report(new, gone))
    assert typecheck.compare(A, typecheck.render_baseline(A)) == ([], [])


def test_baseline_comments_and_blank_lines_are_ignored():
    assert typecheck.parse_baseline("# header\n\n" + typecheck.normalise(A) + "\n") == {
        typecheck.normalise(A): 1
    }
    assert typecheck.compare("", typecheck.HEADER) == ([], [])
