"""The tables of docs/*.md made from declarations (scripts/docs_tables.py) are what the declarations
make now: the options of ``ctxprior score`` (docs/scoring.md) from ``SCORE_OPTIONS``, the stored
measures (docs/concepts.md) from ``RELIANCE_MEASURES``. When this fails, run
``python scripts/docs_tables.py --update`` and review the diff; never edit a block by hand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ctxprior.api.options import command_options
from ctxprior.measures import RELIANCE_MEASURES

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
docs_tables = importlib.util.module_from_spec(_spec)
sys.modules["docs_tables"] = docs_tables
_spec.loader.exec_module(docs_tables)

# the pages whose tables are generated, and the blocks each must hold
BLOCKS = {"scoring.md": ["options score"], "concepts.md": ["measures"]}


def _specs(text: str) -> list[str]:
    return [m.group(1) for line in text.split("\n") if (m := docs_tables._OPEN.match(line))]


def test_every_generated_table_is_what_its_declarations_make():
    """The ``--check`` logic on every page of docs/ (in process: the declarations are imported once)."""
    stale = {}
    for page in docs_tables.pages([]):
        _fresh, changed = docs_tables.regenerate(page.read_text())
        if changed:
            stale[page.name] = changed
    assert not stale, f"{stale}: run python scripts/docs_tables.py --update and review the diff"


def test_the_tables_stay_generated():
    """The option and measure tables keep their markers (a table pasted back by hand would pass
    the check above unseen)."""
    for name, specs in BLOCKS.items():
        assert _specs((ROOT / "docs" / name).read_text()) == specs, name


def test_each_declaration_has_its_row():
    """Every flag of ``score`` and every measure is named once in its page's table."""
    scoring = (ROOT / "docs/scoring.md").read_text()
    for opt in command_options("score"):
        assert docs_tables.option_row(opt) in scoring, opt.name
    concepts = (ROOT / "docs/concepts.md").read_text()
    for m in RELIANCE_MEASURES:
        assert concepts.count(f"\n| `{m.name}` |") == 1, m.name


def test_check_names_the_page_and_block_and_update_rewrites_it(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- tables: measures -->\n| old | row |\n<!-- /tables -->\n\nAfter.\n")
    assert docs_tables.main(["--check", str(page)]) == 1
    assert f"{page}: differs from its declarations: <!-- tables: measures -->" in capsys.readouterr().out
    assert docs_tables.main(["--update", str(page)]) == 0
    text = page.read_text()
    assert "| old | row |" not in text and text.endswith("<!-- /tables -->\n\nAfter.\n")
    assert docs_tables.main(["--check", str(page)]) == 0
    assert docs_tables.main(["--update", str(page)]) == 0 and page.read_text() == text  # idempotent


@pytest.mark.parametrize(
    "text, message",
    [
        ("<!-- tables: nosuch -->\n<!-- /tables -->\n", "unknown table 'nosuch'"),
        ("<!-- tables: measures -->\n| row |\n", "has no <!-- /tables -->"),
    ],
)
def test_a_bad_block_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        docs_tables.regenerate(text)


def test_cells_escape_what_markdown_reads():
    assert docs_tables._cell("a | b\n  <db>.shards") == "a \\| b &lt;db>.shards"
