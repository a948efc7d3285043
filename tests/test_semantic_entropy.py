"""Semantic entropy in its two forms, and the likelihood shift: the released code (Kuhn et al.'s
function) subtracts 5 from each cluster log-likelihood before averaging, so its Monte-Carlo SE is
the plain one + 5 (computed from per-token mean log-likelihoods, --se-form authors, it is the
paper's Table 2 quantity; tests/test_dynamicqa_authors.py)."""

from __future__ import annotations

import math

import pytest
from fixtures.make_dynamicqa import add_dynamic_run

from ctxprior.dynamicqa import semantic as sem
from ctxprior.storage import open_store


def test_worked_example():
    lps, labels = [-1.0, -2.0, -3.0], [0, 0, 1]
    l0 = math.log(math.exp(-1) + math.exp(-2))  # cluster 0: log(p1 + p2)
    plain = -(l0 + -3.0) / 2
    assert sem.semantic_entropy_mc(lps, labels) == pytest.approx(plain, abs=1e-12)
    assert plain == pytest.approx(1.84336916, abs=1e-8)
    # the released code: -(1/K) sum_k (log p(k) - 5)
    assert sem.semantic_entropy_mc(lps, labels, shift=sem.LIKELIHOOD_SHIFT) == pytest.approx(
        plain + 5, abs=1e-12
    )
    assert sem.LIKELIHOOD_SHIFT == 5.0


def test_summary_columns_are_on_the_papers_scale(tmp_path):
    db = tmp_path / "wh.duckdb"
    rid = add_dynamic_run(db, tmp_path)
    from ctxprior.dynamicqa.analyses import analyze_dynamicqa

    with open_store(str(db), threads=1) as store:
        analyze_dynamicqa(store, [rid])
        rows = store.query(
            """SELECT s.partition, s.se_mc_with_context, s.se_mc_without_context,
                                  avg(d.semantic_entropy_mc) FILTER (WHERE d.condition <> 'none'),
                                  avg(d.semantic_entropy_mc) FILTER (WHERE d.condition = 'none')
                           FROM dynamicqa_summary s JOIN dynamicqa_score d USING (run_id)
                           JOIN dynamicqa_fact f ON f.fact_id = d.fact_id AND f.partition = s.partition
                           WHERE s.run_id = ? GROUP BY ALL""",
            [rid],
        )
    assert len(rows) == 3
    for part, with_ctx, without, raw_with, raw_without in rows:
        assert with_ctx == pytest.approx(raw_with + 5, abs=1e-9), part
        assert without == pytest.approx(raw_without + 5, abs=1e-9), part
