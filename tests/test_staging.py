"""The staging SQL layer (schema/views/05_staging.sql) and the quoting helpers of ctxprior.sqlfiles."""

from __future__ import annotations

import pytest
from analysis_fixtures import add_dynamic, add_friend_enemy, add_gender, make_yago_like

from ctxprior.sqlfiles import body, ident, literal
from ctxprior.storage import open_store

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

STAGING = [
    "stg_analysis_result",
    "stg_context",
    "stg_cooccurrence_shard",
    "stg_covariate",
    "stg_dynamicqa_fact",
    "stg_dynamicqa_score",
    "stg_fact",
    "stg_fixed_context",
    "stg_fixed_item",
    "stg_generation",
    "stg_known_attribute",
    "stg_known_entity",
    "stg_persuasion",
    "stg_persuasion_cell",
    "stg_persuasion_context",
    "stg_persuasion_generation",
    "stg_persuasion_kappa",
    "stg_persuasion_text",
    "stg_persuasion_type",
    "stg_query_form",
    "stg_reliance",
    "stg_run",
    "stg_run_sample",
    "stg_sample_fact",
    "stg_susceptibility",
    "stg_susceptibility_cell",
    "stg_susceptibility_layer",
    "stg_susceptibility_type",
]


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    w = open_store(str(tmp_path_factory.mktemp("staging") / "wh.duckdb"))
    make_yago_like(w, n_relations=2, n_entities=4)
    add_friend_enemy(w, n_pairs=4)
    add_gender(w, n_names=2)
    add_dynamic(w, n_facts=3)
    yield w
    w.close()


def test_staging_views_exist_but_are_not_listed_for_export(wh):
    assert wh.view_names(staging=True) == sorted([*wh.view_names(), *STAGING])
    assert not [v for v in wh.view_names() if v.startswith("stg_")]


def test_one_row_per_score(wh):
    for stg, table in (
        ("stg_persuasion", "persuasion"),
        ("stg_susceptibility", "susceptibility"),
        ("stg_generation", "generation"),
        ("stg_context", "context"),
        ("stg_fact", "fact"),
        ("stg_dynamicqa_score", "dynamicqa_score"),
    ):
        assert wh.scalar(f"SELECT count(*) FROM {stg}") == wh.scalar(f"SELECT count(*) FROM {table}") > 0, stg


def test_readable_views_are_projections_of_staging(wh):
    """v_persuasion / v_susceptibility / v_entity hold exactly the staging rows (same values)."""
    cols = "run_id, query_form_id, fact_id, context_id, relation, entity, answer, context_answer, is_relevant"
    a = wh.query(f"SELECT {cols}, persuasion FROM v_persuasion ORDER BY ALL")
    b = wh.query(f"SELECT {cols}, persuasion FROM stg_persuasion ORDER BY ALL")
    assert a == b
    a = wh.query("SELECT fact_id, dataset, relation, entity, entity_kind, answer FROM v_entity ORDER BY ALL")
    b = wh.query("SELECT fact_id, dataset, relation, entity, entity_kind, answer FROM stg_fact ORDER BY ALL")
    assert a == b


def test_case_study_flag(wh):
    rows = dict(wh.query("SELECT source_format, bool_and(in_case_study) FROM stg_fact GROUP BY ALL"))
    assert rows["friend_enemy"] is True and rows["gender"] is True
    assert rows["demo"] is False and rows["dynamicqa"] is False
    assert wh.scalar("SELECT count(*) FROM stg_persuasion WHERE in_case_study IS NULL") == 0


def test_relevance_comes_from_entity_ids(wh):
    n_bad = wh.scalar(
        "SELECT count(*) FROM stg_persuasion "
        "WHERE is_relevant <> (context_entity_id IS NOT DISTINCT FROM entity_id)"
    )
    assert n_bad == 0


def _tables_read(sql: str) -> set[str]:
    """The names in FROM / JOIN of ``sql`` (CTEs included), from DuckDB's parse tree (no binding)."""
    from ctxprior.schema.declared import tables_read

    return set(tables_read(sql))


def test_analyses_read_staging_not_base_tables():
    """Marts read staging only: no analyses/*.sql names a table of the schema; a join it needs is a
    ``stg_*`` view in schema/views/05_staging.sql (its analyses' chain, join for join)."""
    from pathlib import Path

    import ctxprior.analyses
    from ctxprior.schema import metadata

    files = sorted(Path(ctxprior.analyses.__file__).parent.glob("*.sql"))
    assert len(files) >= 14
    assert _tables_read("SELECT * FROM persuasion p JOIN stg_fact f USING (fact_id)") == {
        "persuasion",
        "stg_fact",
    }
    for f in files:
        base = _tables_read(f.read_text()) & set(metadata.tables)
        assert not base, (
            f"analyses/{f.name} reads the base table(s) {sorted(base)}: read a stg_* view instead"
        )


def _view_bodies() -> list[tuple[str, str, str]]:
    """(file, view, its SELECT) of every CREATE VIEW in schema/views/*.sql."""
    import re

    from ctxprior.schema.declared import view_scripts
    from ctxprior.sqlfiles import split_statements

    out = []
    for name, text in view_scripts():
        for stmt in split_statements(text):
            m = re.match(r"\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\s+(.*)", body(stmt), re.S | re.I)
            assert m, f"views/{name}: a statement that is not CREATE OR REPLACE VIEW: {stmt[:60]!r}"
            out.append((name, m.group(1), m.group(2)))
    return out


def test_readable_views_read_staging_not_base_tables():
    """Every view of schema/views/ outside 05_staging.sql (the v_* views, analysis_runs,
    analysis_replicates) reads stg_* views or other views, never a table: its join chain is a
    ``stg_*`` view of 05_staging.sql, which holds only stg_* views. Nothing is allowed through."""
    from ctxprior.schema import metadata

    views = _view_bodies()
    readable = [(f, v, sql) for f, v, sql in views if f != "05_staging.sql"]
    assert {v for f, v, _ in views if f == "05_staging.sql"} == set(STAGING)
    assert len(readable) >= 19 and not [v for _, v, _ in readable if v.startswith("stg_")]
    for f, v, sql in readable:
        base = _tables_read(sql) & set(metadata.tables)
        assert not base, f"views/{f}: {v} reads the base table(s) {sorted(base)}: read a stg_* view instead"


def test_ident_and_literal_quote():
    assert ident('cov_a"b') == '"cov_a""b"'
    assert literal("it's") == "'it''s'"
    assert literal(3) == "3" and literal(None) == "NULL"
    with pytest.raises(TypeError):
        literal(True)
    with pytest.raises(TypeError):
        literal([1, 2])


def test_body_drops_the_leading_comment_block():
    assert body("-- a\n-- b\n\nSELECT 1\n-- c\nFROM t") == "SELECT 1\n-- c\nFROM t"
