"""Outcomes from the greedy generation, labelled as the sources label them (issue 40, item 1):
ctxprior's rules (``scoring/outcomes.py``) against independent ports of CK-PLUG's ``get_score`` /
``eval`` and Longpre et al.'s exact match (``tests/sources_helpers.py``), on real rows: the first
lines of NQ-Swap (``fixtures/tables/nq-swap-real.jsonl``) and ConflictQA
(``fixtures/tables/conflictQA-strategyQA-chatgpt.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scoring_helpers import tiny
from sources_helpers import (
    ckplug_eval,
    ckplug_normalize_answer,
    ckplug_outcome,
    longpre_normalize_text,
    longpre_outcome,
)

import ctxprior
from ctxprior.scoring.outcomes import label, normalize

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
NQ_REAL = [json.loads(line) for line in (FIXTURES / "nq-swap-real.jsonl").read_text().splitlines()]
CONFLICTQA = FIXTURES / "conflictQA-strategyQA-chatgpt.json"


def _generations(org: str, sub: str) -> list[str]:
    """What a decoder model may write after the prompt: each answer alone, inside a sentence, with
    punctuation and articles, both, neither, nothing."""
    return [
        f" {org}",
        f" {sub}",
        f" The answer is {org}.\nQ: next",
        f" {sub.upper()}!",
        f" It was {sub}, not {org}.",
        " 2018-01-01 is the date",
        "",
        f" the {org.lower()}",
        f"{org[: len(org) // 2]}",
    ]


@pytest.mark.quick
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_normalisation_is_both_sources(s):
    assert normalize(s) == ckplug_normalize_answer(s) == longpre_normalize_text(s)


@pytest.mark.quick
@pytest.mark.parametrize("row", NQ_REAL, ids=[r["question"][:30] for r in NQ_REAL])
def test_labels_are_the_ports_on_real_nq_swap_rows(row):
    org, sub = row["org_answer"][0], row["sub_answer"][0]
    for g in _generations(org, sub):
        assert label(g, "recall", "open", org, sub) == ckplug_outcome(g, org, sub), g
        assert label(g, "exact", "open", org, sub) == longpre_outcome(g, org, sub), g


@pytest.mark.quick
def test_the_lupus_foundation_case_is_other():
    """The issue's row: after the conflicting passage the model writes ' 2018-01…', neither year."""
    g = " 2018-01-01, the Lupus Foundation of America"
    for rule in ("recall", "exact", "prefix"):
        assert label(g, rule, "open", "1977", "1967") == "OTHER"
    assert ckplug_outcome(g, "1977", "1967") == longpre_outcome(g, "1977", "1967") == "OTHER"
    # both years: CK-PLUG counts it for both ConR and MemR; ctxprior leaves it undecided
    assert label(" 1967, not 1977", "recall", "open", "1977", "1967") is None
    assert ckplug_eval([" 1967, not 1977"], ["1977"], ["1967"])[:2] == pytest.approx((100, 100), 1e-4)


def _nq_parquet(tmp: Path) -> Path:
    pq.write_table(pa.Table.from_pylist(NQ_REAL), tmp / "nq.parquet")
    return tmp / "nq.parquet"


@pytest.fixture(scope="module")
def scored_real(tmp_path_factory):
    """Both real files scored with the defaults by a tiny random model (16 new tokens, so fast)."""
    tmp = tmp_path_factory.mktemp("real")
    wh = ctxprior.open(str(tmp / "w.duckdb"), write=True)
    wh.datasets.ingest("nq-swap", str(_nq_parquet(tmp)))
    wh.datasets.ingest("conflictqa", str(CONFLICTQA))
    lm, runs = tiny(), []
    for name in ("nq_swap", "conflictqa"):
        sid = wh.samples.draw(name, design="fixed")
        run = wh.runs.score(sid, model=lm, query_types=("open",), max_new_tokens=16, progress=False, log=None)
        runs.append(run.id)
    return wh, runs


def _stored(wh, run_id: int):
    return wh.sql(
        "SELECT g.text, r.outcome, r.outcome_source, r.answer, r.context_answer, r.conflict, r.choice, "
        "r.context_type "
        "FROM v_reliance r JOIN generation g USING (run_id, query_form_id, fact_id, context_id) "
        f"WHERE r.run_id = {run_id} AND r.query_type = 'open'"
    )


def test_stored_outcomes_are_ckplugs_on_real_rows(scored_real):
    wh, runs = scored_real
    for run in runs:
        rows = _stored(wh, run)
        assert len(rows) and set(rows.outcome_source) == {"recall"} and rows.choice.notna().all()
        for r in rows.itertuples():
            want = ckplug_outcome(r.text, r.answer, r.context_answer)
            if not r.conflict and want is None:  # the context states the gold answer: ORIGINAL
                want = "ORIGINAL"
            assert (r.outcome if isinstance(r.outcome, str) else None) == want, r
        # the rates: ConR / MemR as CK-PLUG's ps / po where no row is undecided
        rates = wh.sql(
            "SELECT context_type, n_undecided, conr, memr, outcome_rule FROM v_reliance_rates "
            f"WHERE run_id = {run} AND scope = 'all relations' AND query_type = 'open' AND n_conflict > 0"
        )
        for r in rates.itertuples():
            c = rows[rows.conflict & (rows.context_type == r.context_type)]
            assert r.outcome_rule == "recall" and r.n_undecided == int(c.outcome.isna().sum())
            ps, po, _ = ckplug_eval(list(c.text), list(c.answer), list(c.context_answer))
            if r.n_undecided == 0:
                assert r.conr == pytest.approx(ps / 100, abs=1e-4)
                assert r.memr == pytest.approx(po / 100, abs=1e-4)


def test_outcome_rule_none_stores_no_generation_and_no_outcome(tmp_path):
    wh = ctxprior.open(str(tmp_path / "w.duckdb"), write=True)
    wh.datasets.ingest("nq-swap", str(_nq_parquet(tmp_path)))
    sid = wh.samples.draw("nq_swap", design="fixed")
    run = wh.runs.score(
        sid, model=tiny(), query_types=("open",), outcome_rule="none", progress=False, log=None
    ).id
    assert wh.sql(f"SELECT count(*) AS n FROM generation WHERE run_id = {run}").n[0] == 0
    r = wh.sql(f"SELECT outcome, outcome_source, choice FROM reliance WHERE run_id = {run}")
    assert r.outcome.isna().all() and r.outcome_source.isna().all() and r.choice.notna().all()
    rates = wh.sql(f"SELECT n, n_unlabelled, n_undecided, conr FROM v_reliance_rates WHERE run_id = {run}")
    assert (
        (rates.n == rates.n_unlabelled).all() and (rates.n_undecided == 0).all() and rates.conr.isna().all()
    )


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2_real_rows")  # the session's SmolLM2 runs (conftest.py)
def test_smollm2_on_real_rows_against_the_ports(smollm2_real_rows):
    """SmolLM2 with the defaults on the real NQ-Swap and ConflictQA rows: every stored outcome is
    CK-PLUG's label of its generation; prints how often the rules and the forced choice differ."""
    wh, _, runs = smollm2_real_rows
    for name in ("nq_swap", "conflictqa"):
        run = runs[name]
        rows = _stored(wh, run)
        got = [r if isinstance(r, str) else None for r in rows.outcome]
        want = [
            ckplug_outcome(t, a, c) or ("ORIGINAL" if not k else None)
            for t, a, c, k in rows[["text", "answer", "context_answer", "conflict"]].itertuples(False)
        ]
        assert got == want
        em = [
            longpre_outcome(t, a, c)
            for t, a, c in rows[["text", "answer", "context_answer"]].itertuples(False)
        ]
        print(
            f"{name}: {len(rows)} rows; recall {dict(zip(*np.unique([str(g) for g in got], return_counts=True)))}; "
            f"exact-match hits {sum(e != 'OTHER' for e in em)}; undecided {got.count(None)}; "
            f"choice != outcome {int((rows.choice != rows.outcome).sum())}"
        )
        for r in rows.itertuples():
            print(
                f"  {r.context_type:>12} {r.answer[:30]!r:34} {r.context_answer[:30]!r:34} "
                f"{r.outcome} / choice {r.choice}: {r.text[:60]!r}"
            )


@pytest.mark.quick
@pytest.mark.parametrize("rule", ["recall", "exact", "prefix"])
def test_a_closed_answer_is_its_first_word_under_every_rule(rule):
    """ "no" is a substring of "not", "know" and "none": a closed query reads the first word."""
    from ctxprior.scoring.outcomes import label

    assert label(" I do not know.", rule, "closed", "Paris", "Rome") == "OTHER"
    assert label(" None of them.", rule, "closed", "Paris", "Rome") == "OTHER"
    assert label(" Yes, it is.", rule, "closed", "Paris", "Rome") == "ORIGINAL"
    assert label("\nNo. It is not.", rule, "closed", "Paris", "Rome") == "CONTEXT"
