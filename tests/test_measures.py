"""The stored reliance measures are declared once (``ctxprior/measures.py``): the table, the
metrics' keys, the views and the card agree with that list (the docs table is written from it:
tests/test_docs_tables.py). Each failure names the one place to edit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from vocab_pass_helpers import one_query

from ctxprior.measures import RELIANCE_MEASURES, measure_names, sql_types
from ctxprior.publish.card import column_meaning
from ctxprior.schema import metadata
from ctxprior.scoring import metrics
from ctxprior.scoring.estimators import SCORE_KEYS

pytestmark = pytest.mark.quick

ROOT = Path(__file__).resolve().parents[1]
KEYS = ["run_id", "query_form_id", "fact_id", "context_id"]
DECLARED = [m.name for m in RELIANCE_MEASURES]


def test_the_table_is_made_from_the_declaration():
    t = metadata.tables["reliance"]
    assert [c.name for c in t.columns] == KEYS + DECLARED
    for m in RELIANCE_MEASURES:
        c = t.columns[m.name]
        assert isinstance(c.type, sql_types()[m.sql_type]) and c.nullable == m.nullable
        assert column_meaning("reliance", m.name) == m.description  # the card's text


def test_the_metrics_return_the_declared_measures():
    """``reliance_np`` and ``vocab_pass`` compute exactly the ``float`` and ``answer`` measures
    (a new one: its value in both, in scoring/metrics.py)."""

    rng = np.random.default_rng(0)
    lp = np.log(rng.dirichlet(np.ones(6), size=3))
    l0 = np.log(rng.dirichlet(np.ones(6)))
    ctx = np.array([0, 2, -1])
    want = set(measure_names("float") + measure_names("answer"))
    assert set(metrics.reliance_np(lp, l0, ctx, 1)) == want
    out = one_query(lp, l0, ctx, 1)
    assert set(out) - {*SCORE_KEYS, "prior_entropy", "prior_kl"} == want
    assert set(metrics.RELIANCE_KEYS) == want


def _view(sql: str, name: str) -> str:
    m = re.search(rf"CREATE OR REPLACE VIEW {name} AS(.*?);", sql, re.S)
    assert m, name
    return m.group(1)


def test_the_views_read_every_measure():
    """v_reliance passes every measure through; v_reliance_rates averages those with a ``mean``
    text (schema/views/22_reliance.sql; the declaration in ctxprior/measures.py)."""
    sql = (ROOT / "src/ctxprior/schema/views/22_reliance.sql").read_text()
    rows, rates = _view(sql, "v_reliance"), _view(sql, "v_reliance_rates")
    for m in RELIANCE_MEASURES:
        assert re.search(rf"\br\.{m.name}\b", rows), f"v_reliance does not select r.{m.name}"
        has_mean = re.search(rf"avg\({m.name}\) AS mean_{m.name}\b", rates) is not None
        assert has_mean == bool(m.mean), (
            f"v_reliance_rates.mean_{m.name}: declare its `mean` text in ctxprior/measures.py "
            "and average it in views/22_reliance.sql, or neither"
        )
