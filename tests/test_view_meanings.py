"""Column meanings of the readable views live beside their SQL (schema/views/*.sql: the
``-- columns:`` block above each CREATE VIEW, the ``-- shared columns:`` block of 05_staging.sql),
and the dataset card reads them from there (publish/card.py)."""

from __future__ import annotations

import pytest

from ctxprior.publish.card import column_meaning
from ctxprior.schema.declared import parse_meanings, view_meanings
from ctxprior.storage import open_store

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)


@pytest.fixture(scope="module")
def columns(tmp_path_factory) -> tuple[list[str], dict[str, list[str]]]:
    """(public views, view -> its columns) of a real warehouse, staging views included."""
    wh = open_store(str(tmp_path_factory.mktemp("meanings") / "wh.duckdb"))
    try:
        cols = {
            v: [c for (c,) in wh.query("SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [v])]
            for v in wh.view_names(staging=True)
        }
        return wh.view_names(), cols
    finally:
        wh.close()


def test_every_column_of_every_public_view_has_a_meaning(columns):
    public, cols = columns
    assert len(public) >= 19
    missing = [f"{v}.{c}" for v in public for c in cols[v] if not column_meaning(v, c, "view")]
    assert not missing, f"no meaning for {missing}: add it to the view's `-- columns:` block (schema/views/)"


def test_every_meaning_names_a_column_of_its_view(columns):
    public, cols = columns
    vm = view_meanings()
    assert {"v_kappa", "v_reliance", "v_reliance_rates", "v_memorization"} <= set(vm.views)
    for view, meanings in vm.views.items():
        assert view in cols, f"a `-- columns:` block for {view}, which is not a view"
        extra = sorted(set(meanings) - set(cols[view]))
        assert not extra, f"{view} has no column(s) {extra}, but its `-- columns:` block explains them"
    unused = sorted(set(vm.shared) - {c for v in public for c in cols[v]})
    assert not unused, f"the shared block explains {unused}, which no public view has"


def test_the_card_reads_the_view_files():
    vm = view_meanings()
    assert column_meaning("v_kappa", "kappa", "view") == vm.views["v_kappa"]["kappa"]
    assert column_meaning("v_gamma", "relation", "view") == vm.shared["relation"]
    # passed through: the meaning where the column is made (a table's comment, another view's block)
    assert column_meaning("v_reliance", "shift", "view") == column_meaning("reliance", "shift")
    assert column_meaning("v_dynamicqa_score", "subject", "view") == vm.views["stg_dynamicqa_fact"]["subject"]
    assert vm.reads["v_kappa"] == ["stg_persuasion_kappa"]


def test_parse_meanings_reads_blocks_and_refuses_stray_lines():
    text = (
        "-- shared columns:\n--   run_id: the run\n\n"
        "-- A view.\n-- columns:\n--   a: first\n--     and more\n--   b: second\n"
        "CREATE OR REPLACE VIEW v_x AS SELECT 1 AS a, 2 AS b, 3 AS run_id;\n"
    )
    assert parse_meanings("f.sql", text) == (
        {"v_x": {"a": "first and more", "b": "second"}},
        {"run_id": "the run"},
    )
    for bad in (
        "-- columns:\n--   a: x\n-- prose after the meanings\nCREATE OR REPLACE VIEW v AS SELECT 1 AS a;",
        "-- columns:\n--   a: x\n\nCREATE OR REPLACE VIEW v AS SELECT 1 AS a;",  # not directly above
        "-- columns:\n--   a: x\n--   a: y\nCREATE OR REPLACE VIEW v AS SELECT 1 AS a;",
    ):
        with pytest.raises(ValueError, match=r"f\.sql"):
            parse_meanings("f.sql", bad)
