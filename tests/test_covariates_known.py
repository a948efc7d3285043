"""`covariates known`: the matching rule of ctxprior's two rules (property tests), the stored
answers and samples, the view, the per-entity label under ctxprior-samples (checked against an
independent implementation) and under greedy-majority, the `known` analysis on a synthetic warehouse, and the
CLI / API (tiny model: sampling reproducible with the seed; bad values refused alike)."""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections import Counter

import pytest
from analysis_fixtures import make_yago_like
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxprior
from ctxprior.analyses.driver import analyze
from ctxprior.covariates import known as kn
from ctxprior.dynamicqa.semantic import contains_answer
from ctxprior.errors import UserError
from ctxprior.storage import open_store

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
    """Store greedy-majority answers for run 1: the gold answer when ``correct_for(entity, qf)``."""
    with open_store(db) as store:
        p = kn.plan(store, 1, rule="greedy-majority", max_new_tokens=4)
        texts = [f" {a}\n" if correct_for(e, qf) else " no idea" for qf, _, _, e, a in p.prompts]
        kn.store_answers(store, p, texts)
    return p


def _plant_samples(db: str, matches, **options) -> kn.KnownPlan:
    """Store ctxprior-samples samples for run 1: ``matches(entity, i)`` of each attribute's samples are
    the gold answer (one of them in an answer sentence), the others wrong."""
    with open_store(db) as store:
        p = kn.plan(store, 1, rule="ctxprior-samples", **options)
        n = p.params["samples"]
        drawn = []
        for i, ((_, _, _, e, _), golds) in enumerate(zip(p.prompts, p.golds)):
            m = matches(e, i)
            drawn.append([f" It is {golds[0]}.\nQ:" if k == 0 else f" {golds[0]}" for k in range(m)])
            drawn[-1] += [" no idea"] * (n - m)
        kn.store_samples(store, p, drawn)
    return p


def _samples_rule(attributes, min_correct=3, min_attributes=2):
    """The ctxprior-samples rule, written independently: ``attributes`` maps (relation, entity) to
    the number of its samples that match; an attribute is correct with >= min_correct, an entity
    known with >= min_attributes correct attributes, unknown with none, left out otherwise."""
    correct = Counter()
    for (_, entity), m in attributes.items():
        correct[entity] += m >= min_correct
    return {
        e: "known" if c >= min_attributes else "unknown" if c == 0 else "partial" for e, c in correct.items()
    }


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("known") / "wh.duckdb")
    with open_store(db) as w:
        make_yago_like(w, n_relations=2, n_entities=8, per_type=3, fake_effect=1.0)
    return db


@pytest.fixture(scope="module")
def shared(synth, tmp_path_factory) -> str:
    """The synthetic warehouse with the even-numbered entities of rel1 made the same entities as
    those of rel0: they have two attributes, the others one (each asked two ways, 2 open forms)."""
    db = str(tmp_path_factory.mktemp("shared") / "wh.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    with open_store(db) as w:
        w.execute(
            "UPDATE fact SET entity_id = (SELECT e0.entity_id FROM entity e0, entity e1 "
            "WHERE e1.entity_id = fact.entity_id AND e0.name = replace(e1.name, '1_', '0_')) "
            "WHERE relation_id = (SELECT relation_id FROM relation WHERE short_name = 'rel1') "
            "AND (SELECT CAST(split_part(name, '_', 2) AS INTEGER) % 2 = 0 FROM entity WHERE entity_id = fact.entity_id)"
        )
    return db


def _copy(src: str, tmp_path) -> str:
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(src, "rb").read())
    return db


def test_samples_rule_against_an_independent_implementation(shared, tmp_path):
    db = _copy(shared, tmp_path)
    rng = random.Random(7)
    counts = {}

    def matches(entity, i):  # around the threshold: 0..4 matching samples, sometimes all 10
        counts[i] = rng.choice([0, 0, 1, 2, 3, 3, 4, 10])
        return counts[i]

    p = _plant_samples(db, matches)
    assert p.rule == "ctxprior-samples" and p.params["samples"] == 10 and p.params["min_correct"] == 3
    attributes = {p.attributes[i]: m for i, m in counts.items()}
    with open_store(db, read_only=True) as w:
        # one attribute per (relation, entity), asked once (the first open form), 10 rows each
        n_facts = w.scalar(
            "SELECT count(DISTINCT fact_id) FROM susceptibility s JOIN query_form q USING (query_form_id) "
            "WHERE run_id = 1 AND q.query_type = 'open'"
        )
        assert len(p.prompts) == len(set(p.attributes)) == n_facts
        first = {
            r[0]
            for r in w.query("SELECT query_form_id FROM query_form WHERE query_type = 'open' AND ordinal = 0")
        }
        assert {qf for qf, *_ in p.prompts} == first
        assert w.scalar("SELECT count(*) FROM closed_book_sample") == 10 * n_facts
        lab = dict(w.query("SELECT entity_id, familiarity FROM stg_known_entity WHERE run_id = 1"))
        cov = w.df("SELECT * FROM cov_known_r1")
        cov_known = w.query("SELECT entity_id, known FROM cov_known_r1")
        params = json.loads(w.scalar("SELECT params_json FROM covariate WHERE name = 'known_r1'"))
    expected = _samples_rule(attributes)
    assert lab == expected
    assert {"known", "unknown", "partial"} <= set(expected.values())  # every case occurs
    assert Counter(len([a for a in attributes if a[1] == e]) for e in expected) == Counter({1: 16, 2: 8})
    assert len(cov_known) == n_facts
    for e, k in cov_known:  # 1 / 0 / NULL for left out
        assert k == {"known": 1, "unknown": 0}.get(lab[e])
    assert (cov.attribute_correct == (cov.fact_correct >= 3)).all() and (cov.fact_answers == 10).all()
    assert params["rule"] == "ctxprior-samples" and params["seed"] == 0 and params["min_attributes"] == 2
    assert "not Ferrando" in params["rule_text"] and params["run_id"] == 1


def test_one_attribute_asked_two_ways_is_never_known_under_the_samples_rule(synth, tmp_path):
    """The flaw of the greedy-majority rule: one attribute asked two ways, 1 of 2 rephrasings
    right, makes an entity known. Under ctxprior-samples the attribute is asked once, and one
    correct attribute leaves the entity out (known needs 2)."""
    db = _copy(synth, tmp_path)
    with open_store(db, read_only=True) as w:
        first = {
            r[0]
            for r in w.query("SELECT query_form_id FROM query_form WHERE query_type = 'open' AND ordinal = 0")
        }
    _plant(db, lambda e, qf: qf in first)
    with open_store(db, read_only=True) as w:
        assert set(r[0] for r in w.query("SELECT familiarity FROM stg_known_entity")) == {"known"}
    _plant_samples(db, lambda e, i: 10, replace=True)  # every sample right: still one attribute
    with open_store(db, read_only=True) as w:
        lab = w.df("SELECT * FROM stg_known_entity WHERE run_id = 1")
        assert w.scalar("SELECT count(*) FROM closed_book_answer") == 0  # replaced
    assert (lab.n_attributes == 1).all() and (lab.n_correct_attributes == 1).all()
    assert set(lab.familiarity) == {"partial"} and set(lab["rule"]) == {"ctxprior-samples"}
    _plant_samples(db, lambda e, i: 3, min_attributes=1, replace=True)
    with open_store(db, read_only=True) as w:
        assert set(r[0] for r in w.query("SELECT familiarity FROM stg_known_entity")) == {"known"}
    _plant_samples(db, lambda e, i: 2, min_attributes=1, replace=True)  # 2 of 10: not correct
    with open_store(db, read_only=True) as w:
        assert set(r[0] for r in w.query("SELECT familiarity FROM stg_known_entity")) == {"unknown"}


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
        assert json.loads(cat.params_json[0])["rule"] == "greedy-majority"
        assert set(cov["rule"]) == {"greedy-majority"} and cov.attribute_correct.isna().all()


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


@pytest.mark.parametrize("rule", ["ctxprior-samples", "greedy-majority"])
def test_known_analysis_finds_unknown_entities_more_susceptible(synth, tmp_path, rule):
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    if rule == "ctxprior-samples":  # one attribute per entity here: known from 1 correct attribute
        _plant_samples(db, lambda e, i: 0 if e.startswith("fake") else 5, min_attributes=1)
    else:
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
        # out-of-range and unknown values of declared options: tests/test_command_options.py's walk
        (["--run", "9"], "--run 9: no such run"),
        (["--run", "1", "--name", "Bad-Name"], "--name 'Bad-Name'"),
        (
            ["--run", "1", "--rule", "ctxprior-samples", "--min-correct", "11"],
            "--min-correct 11: more than --samples 10",
        ),
        (
            ["--run", "1", "--rule", "ctxprior-samples", "--samples", "2", "--min-correct", "3"],
            "--min-correct 3: more than --samples 2",
        ),
        (["--run", "1", "--name", "taken"], "--name taken: already used by a user covariate"),
    ],
)
def test_cli_and_api_refuse_bad_input_alike_in_one_line_and_write_nothing(
    synth, tmp_path, run_cli, args, message
):
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
    if "--rule" in args and "majority" in args:
        return  # click's choice check; the API's is the declared one (test_options)
    flags = dict(zip(args[::2], args[1::2]))
    kwargs = {f.lstrip("-").replace("-", "_"): v for f, v in flags.items()}
    run = int(kwargs.pop("run"))
    kwargs = {
        k: (v if k in ("name", "rule") else float(v) if k == "temperature" else int(v))
        for k, v in kwargs.items()
    }
    with pytest.raises(UserError) as err:
        w.covariates.known(run, progress=False, **kwargs)
    assert message in f"Error: {err.value}" and "\n" not in str(err.value)
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
    rep = w.covariates.known(1, model=tiny(), rule="greedy-majority", max_new_tokens=3, progress=False)
    assert rep["view"] == "cov_known_r1" and not rep["unchanged"] and rep["rule"] == "greedy-majority"
    assert rep["n_answers"] == w.sql("SELECT count(*) AS n FROM closed_book_answer").n[0] > 0
    assert rep["n_known"] + rep["n_unknown"] + rep["n_partial"] == rep["n_entities"]
    texts = w.sql("SELECT text FROM closed_book_answer ORDER BY ALL").text.tolist()
    again = w.covariates.known(1, model=tiny(), rule="greedy-majority", max_new_tokens=3, progress=False)
    assert again["unchanged"] and again["n_answers"] == rep["n_answers"]
    with pytest.raises(UserError, match=r"made with other options .*max_new_tokens 3"):
        w.covariates.known(1, model=tiny(), rule="greedy-majority", progress=False)
    w.covariates.known(
        1, model=tiny(), rule="greedy-majority", max_new_tokens=3, replace=True, progress=False
    )
    assert w.sql("SELECT text FROM closed_book_answer ORDER BY ALL").text.tolist() == texts  # deterministic
    assert "known_r1" in w.covariates.list().name.tolist()
    with pytest.raises(UserError, match="--run 1: its labels are covariate known_r1"):
        w.covariates.known(1, name="other", model=tiny(), progress=False)


def _samples(w) -> list:
    return w.sql(
        "SELECT relation_id, entity_id, sample, text FROM closed_book_sample ORDER BY ALL"
    ).values.tolist()


def test_sampling_with_a_tiny_model_is_reproducible_with_the_seed(synth, tmp_path):
    from scoring_helpers import tiny

    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    w = ctxprior.open(db, write=True)
    kw = dict(
        model=tiny(),
        rule="ctxprior-samples",
        samples=4,
        min_correct=1,
        max_new_tokens=3,
        batch_size=5,
        progress=False,
    )
    rep = w.covariates.known(1, seed=11, **kw)
    assert (
        rep["rule"] == "ctxprior-samples" and rep["seed"] == 11 and rep["batch"] == 5 and not rep["unchanged"]
    )
    n_attributes = w.sql(
        "SELECT count(*) AS n FROM (SELECT DISTINCT relation_id, entity_id FROM closed_book_sample)"
    ).n[0]
    assert rep["n_attributes"] == n_attributes > 5  # more than one batch
    assert rep["n_answers"] == 4 * n_attributes == len(_samples(w))
    first = _samples(w)
    assert len({t for *_, t in first}) > n_attributes  # sampled: the answers vary
    assert w.covariates.known(1, seed=11, **kw)["unchanged"]
    w.covariates.known(1, seed=11, replace=True, **kw)
    assert _samples(w) == first  # the same seed: the same samples
    w.covariates.known(1, seed=12, replace=True, **kw)
    assert _samples(w) != first
    params = json.loads(w.sql("SELECT params_json FROM covariate WHERE name = 'known_r1'").params_json[0])
    assert {k: params[k] for k in ("rule", "samples", "temperature", "seed", "min_correct", "batch")} == {
        "rule": "ctxprior-samples",
        "samples": 4,
        "temperature": 1.0,
        "seed": 12,
        "min_correct": 1,
        "batch": 5,
    }


def test_cli_prints_the_rule_and_the_entities_that_cannot_be_known(synth, tmp_path, run_cli, monkeypatch):
    from scoring_helpers import tiny

    import ctxprior.api.inmemory as inmemory

    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(synth, "rb").read())
    lm = tiny()
    monkeypatch.setattr(inmemory, "_as_model", lambda *a, **k: lm)
    r = run_cli(
        "covariates",
        "known",
        "--run",
        "1",
        "--rule",
        "ctxprior-samples",
        "--samples",
        "2",
        "--min-correct",
        "1",
        "--max-new-tokens",
        "2",
        db=db,
    )
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith(
        "cov_known_r1: run 1, rule ctxprior-samples (2 samples at temperature 1, seed 0): "
    )
    assert (
        lines[2]
        == "32 entities have fewer than 2 attributes asked: they can be unknown or left out, never known"
    )
