"""`covariates known`: the matching rule (property tests), the stored answers, the view, the
per-entity label, the `known` analysis on a synthetic warehouse, and the CLI / API (tiny model)."""

from __future__ import annotations

import hashlib
import string

import pytest
from analysis_fixtures import make_yago_like
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxprior
from ctxprior.covariates import known as kn
from ctxprior.dynamicqa.semantic import contains_answer
from ctxprior.queries.driver import analyze
from ctxprior.schema import open_store

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORDS = st.text(alphabet=string.ascii_letters + string.digits + "éß", min_size=1, max_size=8)
PHRASE = st.lists(WORDS, min_size=1, max_size=3).map(" ".join)
NOISE = st.text(alphabet=string.ascii_letters + string.punctuation + " \n", max_size=20)


# ---------------------------------------------------------------- the matching rule


@settings(max_examples=200, deadline=None)
@given(gold=PHRASE, before=PHRASE, after=PHRASE)
def test_gold_inside_the_first_line_matches_whatever_the_case_punctuation_and_articles(gold, before, after):
    if not kn.normalize(gold):
        return
    text = f"  The {before.upper()}, {gold.swapcase()}! ({after})\nsecond line"
    assert kn.answer_matches(text, [gold])
    assert kn.answer_matches(text, ["nothing-like-it-zz", f"the {gold}."])  # any gold; articles ignored
    assert not kn.answer_matches(f"{before}\n{gold}", [gold]) or kn.normalize(gold) in kn.normalize(before)


@settings(max_examples=300, deadline=None)
@given(text=NOISE, golds=st.lists(PHRASE | NOISE, max_size=3))
def test_rule_is_dynamicqa_alias_matching_on_the_first_line(text, golds):
    """On ASCII text (where case folding is lower-casing) the rule is DynamicQA's alias matching."""
    assert kn.answer_matches(text, golds) == contains_answer(kn.first_line(text), golds)


def test_rule_examples():
    assert kn.answer_matches(" Paris, of course.\nQ: next", ["Paris"])
    assert kn.answer_matches("the U.S.A.", ["USA"]) is False  # punctuation is removed, not a space
    assert kn.answer_matches("U.S.A.", ["U.S.A"])
    assert not kn.answer_matches("Parisian", ["Paris"])  # whole words only
    assert not kn.answer_matches("Lyon\nParis", ["Paris"])  # only the first line counts
    assert not kn.answer_matches("anything", ["", "..."])  # a gold with no words never matches


# ---------------------------------------------------------------- storage, label, analysis


def _plant(db: str, correct_for) -> kn.KnownPlan:
    """Store closed-book answers for run 1: the gold answer when ``correct_for(entity, qf)``."""
    with open_store(db) as store:
        p = kn.plan(store, 1)
        texts = [f" {a}\n" if correct_for(e, qf) else " no idea" for qf, _, _, e, a in p.prompts]
        kn.store_answers(store, p, texts, {"max_new_tokens": 4})
    return p


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("known") / "wh.duckdb")
    with open_store(db) as w:
        make_yago_like(w, n_relations=2, n_entities=8, per_type=3, fake_effect=1.0)
    return db


def test_labels_view_and_catalog(synth, tmp_path):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    # real entities: every answer correct; fake: none
    _plant(db, lambda e, qf: not e.startswith("fake"))
    with open_store(db, read_only=True) as w:
        n_open = w.scalar(
            "SELECT count(*) FROM susceptibility s JOIN query_form q USING (query_form_id) "
            "WHERE run_id = 1 AND q.query_type = 'open'"
        )
        assert w.scalar("SELECT count(*) FROM closed_book_answer WHERE run_id = 1") == n_open
        lab = w.df(
            "SELECT e.name AS entity, k.* FROM stg_known_entity k JOIN entity e USING (entity_id) WHERE run_id = 1"
        )
        assert set(lab.loc[lab.entity.str.startswith("fake"), "familiarity"]) == {"unknown"}
        assert set(lab.loc[~lab.entity.str.startswith("fake"), "familiarity"]) == {"known"}
        cov = w.df("SELECT * FROM cov_known_r1")
        assert set(cov.known) == {0, 1} and cov.entity_accuracy.between(0, 1).all()
        cat = w.df("SELECT * FROM covariate WHERE name = 'known_r1'")
        assert cat.kind[0] == "known" and cat.data_table[0] == "closed_book_answer"


def test_partial_entities_and_the_half_rule(synth, tmp_path):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    with open_store(db, read_only=True) as w:
        sql = "SELECT min(query_form_id) FROM query_form WHERE query_type = 'open' GROUP BY relation_id"
        first = {r[0] for r in w.query(sql)}
    p = _plant(db, lambda e, qf: qf in first)  # one of the 2 open forms of each relation correct
    with open_store(db) as w:
        lab = w.df("SELECT * FROM stg_known_entity WHERE run_id = 1")
        assert (lab.n_answers == 2).all() and (lab.n_correct == 1).all()
        assert set(lab.familiarity) == {"known"}  # half is enough
        # a third, wrong answer per fact (another open form, inserted directly): 1 of 3 is partial
        w.execute(
            "INSERT INTO query_form SELECT 1000 + relation_id, relation_id, 'open', 9, 'open_9', 'Q {entity}?' "
            "FROM relation"
        )
        w.execute(
            "INSERT INTO closed_book_answer SELECT 1, 1000 + f.relation_id, f.fact_id, ?, 'no idea', false "
            "FROM fact f WHERE f.fact_id IN (SELECT unnest(?::INTEGER[]))",
            [
                w.scalar("SELECT covariate_id FROM covariate WHERE name = 'known_r1'"),
                sorted({r[1] for r in p.prompts}),
            ],
        )
        lab = w.df("SELECT * FROM stg_known_entity WHERE run_id = 1")
        assert (lab.n_answers == 3).all() and set(lab.familiarity) == {"partial"}
        assert w.scalar("SELECT count(*) FROM cov_known_r1 WHERE known IS NULL") == len(lab)


def test_known_analysis_finds_unknown_entities_more_susceptible(synth, tmp_path):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    _plant(db, lambda e, qf: not e.startswith("fake"))  # fakes (planted more susceptible) unknown
    with open_store(db, threads=1) as w:
        counts = analyze(w, run_ids=[1], k=200, log=lambda m: None)  # in the defaults: run 1 has answers
        res = w.df("SELECT * FROM analysis_result WHERE analysis = 'known'")
    assert counts["known"] == len(res) > 0
    assert set(res.test) == {"independent", "entity_mean"}
    assert (res.label1 == "unknown").all() and (res.alternative == "greater").all()
    assert (res.mean1 > res.mean2).all()
    assert res.p_adj.notna().all() and res.significant.any()


def test_analysis_without_answers_stores_nothing(synth, tmp_path):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    with open_store(db, threads=1) as w:
        assert "known" not in analyze(w, run_ids=[1], k=20, log=lambda m: None)  # not a default then
        logs = []
        assert analyze(w, only=["known"], run_ids=[1], k=20, log=logs.append) == {"known": 0}
        assert w.scalar("SELECT count(*) FROM analysis_result WHERE analysis = 'known'") == 0
    assert "known: no data in runs [1]" in " ".join(logs)


# ---------------------------------------------------------------- CLI and API


def _sha(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--run", "9"], "--run 9: no such run"),
        (["--run", "1", "--name", "Bad-Name"], "--name 'Bad-Name'"),
        (["--run", "1", "--max-new-tokens", "0"], "--max-new-tokens 0"),
        (["--run", "1", "--name", "taken"], "--name taken: already used by a user covariate"),
    ],
)
def test_cli_bad_input_is_one_line_and_writes_nothing(synth, tmp_path, run_cli, args, message):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    import pandas as pd

    w = ctxprior.open(db, write=True)
    w.covariates.add(pd.DataFrame({"entity": ["fake0_0"], "x": [1]}), on="entity", name="taken")
    before = _sha(db)
    r = run_cli("covariates", "known", *args, db=db)
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and message in r.output, r.output
    assert _sha(db) == before


def test_closed_only_run_is_a_user_error(synth, tmp_path, run_cli):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    with open_store(db) as w:
        w.execute(
            "DELETE FROM susceptibility WHERE query_form_id IN "
            "(SELECT query_form_id FROM query_form WHERE query_type = 'open')"
        )
    r = run_cli("covariates", "known", "--run", "1", db=db)
    assert r.exit_code == 2 and "scored no open query" in r.output and r.output.count("\n") == 1


def test_api_with_a_tiny_model_then_unchanged_then_replace(synth, tmp_path):
    from scoring_helpers import tiny

    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    w = ctxprior.open(db, write=True)
    rep = w.covariates.known(1, model=tiny(), max_new_tokens=3, progress=False)
    assert rep["view"] == "cov_known_r1" and not rep["unchanged"]
    assert rep["n_answers"] == w.sql("SELECT count(*) AS n FROM closed_book_answer").n[0] > 0
    assert rep["n_known"] + rep["n_unknown"] + rep["n_partial"] == rep["n_entities"]
    texts = w.sql("SELECT text FROM closed_book_answer ORDER BY ALL").text.tolist()
    again = w.covariates.known(1, model=tiny(), progress=False)
    assert again["unchanged"] and again["n_answers"] == rep["n_answers"]
    w.covariates.known(1, model=tiny(), max_new_tokens=3, replace=True, progress=False)
    assert w.sql("SELECT text FROM closed_book_answer ORDER BY ALL").text.tolist() == texts  # deterministic
    assert "known_r1" in w.covariates.list().name.tolist()
