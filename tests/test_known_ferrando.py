"""`covariates known --rule ferrando` (the default) against an independent, literal port of
Ferrando et al.'s released code (tests/ferrando_helpers.py): the judging of one completion (a pure
function, tested directly on real-shaped answers), and what ctxprior stores for a warehouse whose
entities have 3 or 4 attributes (names, years, teams, countries), with stubbed greedy
completions; the CLI with a tiny random model."""

from __future__ import annotations

import json
import random
import re

import ferrando_helpers as port
import pytest
from analysis_fixtures import make_yago_like

from ctxprior.covariates import ferrando
from ctxprior.covariates import known as kn
from ctxprior.storage import open_store

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CITIES = ["Buenos Aires", "Saint Petersburg", "Los Angeles", "Mississauga", "Hamburg", "Athens"]
YEARS = ["1987", "1952", "2001", "1969", "1990", "1978"]
TEAMS = ["Manchester United", "Real Madrid", "FC Barcelona", "Hamburger SV", "Boca Juniors", "Ajax"]
COUNTRIES = [
    "United States of America",
    "Argentina",
    "People's Republic of China",
    "Germany",
    "Greece",
    "Canada",
]
GOLDS = [CITIES, YEARS, TEAMS, COUNTRIES]
REFUSALS = [
    "I'm sorry, I don't have information about that player.",
    "Unfortunately, I couldn't find it.",
    "The answer is unknown.",
    "There doesn't seem to be a record.",  # upper-case in the source's list: not a refusal there
    "I am not aware of this person",
    "not awarenot familiar",
    "As an AI I cannot say",
    "There is no such team",
]


def completions(gold: str, rng: random.Random) -> list[str]:
    """Real-shaped closed-book answers to one attribute: right, nearly right, wrong, refusals."""
    if gold.isdigit():
        y = int(gold)
        near = [f"{y + d}" for d in (-3, -2, -1, 1, 2, 3, 5)] + [
            f"born in {y}.",
            f"{y - 2}-{y + 9}",
            "in the 1980s",
        ]
        return near + ["1,987", f"{y}", "unknown year", rng.choice(REFUSALS)]
    typo = gold[: len(gold) // 2] + gold[len(gold) // 2 + 1 :]
    return [
        gold,
        f"{gold.lower()}, of course.",
        typo,
        f"{gold}-based club",
        gold.split()[0],
        f"St. {gold.split()[-1]}",
        "United States",
        "USA",
        "China",
        "Lyon",
        f"It is {gold}\nQ: next",
        *rng.sample(REFUSALS, 3),
    ]


@pytest.mark.quick
def test_token_set_ratio_is_thefuzz():
    for s1, s2, value in port.FUZZ_VALUES:
        assert ferrando.token_set_ratio(s1, s2) == value, (s1, s2)
        assert port.token_set_ratio(s1, s2) == value, (s1, s2)
    rng = random.Random(3)
    alpha = "ab cdé_-.,Ł北1 "
    for _ in range(500):
        s1 = "".join(rng.choice(alpha) for _ in range(rng.randint(0, 9)))
        s2 = "".join(rng.choice(alpha) for _ in range(rng.randint(0, 9)))
        assert ferrando.token_set_ratio(s1, s2) == port.token_set_ratio(s1, s2), (s1, s2)


@pytest.mark.quick
def test_one_completion_is_labelled_as_the_released_code_labels_it():
    rng = random.Random(0)
    n = {"correct": 0, "refusal": 0, "error": 0}
    for golds, fn in [
        (CITIES, "player_place_birth"),
        (YEARS, "movie_release_year"),
        (TEAMS, "player_teams_list"),
    ]:
        for gold in golds:
            for text in completions(gold, rng):
                kind, label = ferrando.label(text, [gold])
                assert kind == ("number" if gold.isdigit() else "name")
                assert label == port.get_label(text, gold, port.CORRECTNESS[fn]), (text, gold)
                n[label] += 1
    for gold in COUNTRIES:  # the source's widened country names
        for text in completions(gold, rng):
            assert ferrando.label(text, [gold])[1] == port.get_label(
                text, gold, port.CORRECTNESS["city_country"]
            )
    assert min(n.values()) >= 10, n  # every label occurs
    for text in REFUSALS:
        assert ferrando.is_refusal(text) == port.is_generation_refusal(text), text
    assert not ferrando.is_refusal("There doesn't seem to be a record.")  # the source's upper-case entry
    assert ferrando.label("Buenos Aires", ["Buenos Aires", "1987"])[0] == "name"
    assert ferrando.label("1990", ["1987", "1989"]) == ("number", "correct")  # any gold
    assert ferrando.label("Sorry, 1950", ["1987"]) == ("number", "refusal")


def _warehouse(path: str) -> str:
    """A warehouse whose 12 entities (6 real, 6 fake) each have 4 attributes (rel0..rel3: a city, a
    year, a team, a country), except entities 4 and 5 (3: no rel3 in the run)."""
    with open_store(path) as w:
        make_yago_like(w, n_relations=4, n_entities=6, per_type=1, fake_effect=1.0)
        for r in (1, 2, 3):
            w.execute(
                "UPDATE fact SET entity_id = (SELECT e0.entity_id FROM entity e0, entity e1 "
                "WHERE e1.entity_id = fact.entity_id AND e0.name = replace(e1.name, ?, ?)) "
                "WHERE relation_id = (SELECT relation_id FROM relation WHERE short_name = ?)",
                [f"{r}_", "0_", f"rel{r}"],
            )
        for r, golds in enumerate(GOLDS):
            for i, g in enumerate(golds):
                w.execute("UPDATE answer SET name = ? WHERE name = ?", [g, f"answer{r}_{i}"])
        w.execute(
            "DELETE FROM susceptibility WHERE fact_id IN (SELECT f.fact_id FROM fact f JOIN entity e "
            "USING (entity_id) JOIN relation r USING (relation_id) WHERE r.short_name = 'rel3' "
            "AND (e.name LIKE '%\\_4' ESCAPE '\\' OR e.name LIKE '%\\_5' ESCAPE '\\'))"
        )
    return path


@pytest.fixture(scope="module")
def four(tmp_path_factory) -> str:
    return _warehouse(str(tmp_path_factory.mktemp("ferrando") / "wh.duckdb"))


def _copy(src: str, tmp_path) -> str:
    db = str(tmp_path / "w.duckdb")
    open(db, "wb").write(open(src, "rb").read())
    return db


def _port_entities(p: kn.KnownPlan, texts: list[str]) -> dict[int, str]:
    """The port's label of each entity: its attributes as the released code's records (rel0..rel3
    in the slots of the city rule, or of the player rule for 3 attributes), judged by the port."""
    slots4 = ["city_country", "city_location", "city_population", "city_elevation"]
    slots3 = ["player_place_birth", "player_date_birth", "player_teams_list"]
    by_entity: dict[int, list] = {}
    for (rel, ent), golds, text in zip(p.attributes, p.golds, texts):
        fn = "movie_release_year" if all(g.isdigit() for g in golds) else "player_place_birth"
        label = max(
            (port.get_label(kn.first_line(text), g, port.CORRECTNESS[fn]) for g in golds),
            key=LABEL_ORDER.index,
        )
        by_entity.setdefault(ent, []).append((rel, text, label))
    out = {}
    for ent, attrs in by_entity.items():
        attrs.sort()
        slots = slots4 if len(attrs) == 4 else slots3
        rec = {s: {"generation": kn.first_line(t), "score": port.score(lab), "extra_data": {"multiple_generations": []}}
               for s, (_, t, lab) in zip(slots, attrs)}  # fmt: skip
        known_slot = "city_is_known" if len(attrs) == 4 else "player_is_known"
        rec[known_slot] = {"generation": "", "extra_data": {"multiple_generations": []}}  # not asked
        rule = port.llama3_filter_city_is_known if len(attrs) == 4 else port.llama3_filter_player_is_known
        out[ent] = {"other": "partial"}.get(rule(rec), rule(rec))
    return out


LABEL_ORDER = [
    "error",
    "refusal",
    "correct",
]  # several golds: correct if any is; refusal does not depend on the gold


def test_stored_labels_equal_the_port_on_real_shaped_rows(four, tmp_path):
    db = _copy(four, tmp_path)
    rng = random.Random(11)
    with open_store(db) as w:
        p = kn.plan(w, 1)
        assert p.rule == "ferrando" and p.params["max_new_tokens"] == 32
        texts = []
        for (_, _, _, entity, _), golds in zip(p.prompts, p.golds):  # mostly right for real entities
            pool = completions(golds[0], rng)
            if entity.startswith("fake") and rng.random() < 0.8:
                pool = ["Lyon", "no idea", *REFUSALS]
            texts.append(" " + (rng.choice(pool[:2]) if rng.random() < 0.55 else rng.choice(pool)))
        rep = kn.store_labels(w, p, texts)
        stored = dict(w.query("SELECT entity_id, familiarity FROM stg_known_entity WHERE run_id = 1"))
        labels = w.query("SELECT relation_id, entity_id, check_kind, label FROM closed_book_attribute")
        cov = w.df("SELECT * FROM cov_known_r1")
        params = json.loads(w.scalar("SELECT params_json FROM covariate WHERE name = 'known_r1'"))
    expected = _port_entities(p, texts)
    refused = {e for _, e, _, lab in labels if lab == "refusal"}
    n_attr = {e: sum(1 for _, x in p.attributes if x == e) for e in expected}
    for e, lab in expected.items():
        if n_attr[e] == 3 and e in refused and lab == "known":
            assert stored[e] == "partial"  # the departure: no refusal allowed for 3 attributes either
        else:
            assert stored[e] == lab, e
    assert sorted(n_attr.values()) == [3] * 4 + [4] * 8
    assert {"known", "unknown", "partial"} <= set(stored.values())
    assert rep["n_attributes"] == len(p.attributes) == 44 and rep["n_refused_attributes"] > 0
    judged = {(r, e): (k, lab) for r, e, k, lab in labels}
    for (rel, ent), golds, text in zip(p.attributes, p.golds, texts):
        assert judged[rel, ent] == ferrando.label(kn.first_line(text), golds)
    assert set(cov.attribute_label) <= set(ferrando.LABELS) and (cov.fact_answers == 1).all()
    assert params["rule"] == "ferrando" and params["definition"] == ferrando.SOURCE


def test_entity_rule_cases(four, tmp_path):
    """max(2, n - 1) correct and no refusal: known; none correct: unknown; else partial."""
    db = _copy(four, tmp_path)
    with open_store(db) as w:
        p = kn.plan(w, 1)
        ents = sorted({e for _, e in p.attributes})
        plan = {
            e: i % 5 for i, e in enumerate(ents)
        }  # 0: all right, 1: one wrong, 2: one refused, 3: two wrong, 4: none
        seen: dict[int, int] = {}
        texts = []
        for (_, e), golds in zip(p.attributes, p.golds):
            k = seen[e] = seen.get(e, -1) + 1
            case = plan[e]
            wrong = case == 4 or (case in (1, 3) and k == 0) or (case == 3 and k == 1)
            texts.append(
                " I'm sorry, no idea" if case == 2 and k == 0 else " Lyon 1500" if wrong else f" {golds[0]}"
            )
        kn.store_labels(w, p, texts)
        got = dict(w.query("SELECT entity_id, familiarity FROM stg_known_entity WHERE run_id = 1"))
        n = dict(w.query("SELECT entity_id, n_attributes FROM stg_known_entity WHERE run_id = 1"))
    for e, case in plan.items():
        want = {0: "known", 1: "known", 2: "partial", 4: "unknown"}.get(case)
        if case == 3:
            want = "partial" if n[e] in (3, 4) else want
        assert got[e] == want, (e, case, n[e])


def test_cli_default_rule_with_a_tiny_model(four, tmp_path, run_cli, monkeypatch):
    from scoring_helpers import tiny

    import ctxprior.api.inmemory as inmemory

    db = _copy(four, tmp_path)
    lm = tiny()
    monkeypatch.setattr(inmemory, "_as_model", lambda *a, **k: lm)
    r = run_cli("covariates", "known", "--run", "1", "--max-new-tokens", "3", db=db)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    head = "cov_known_r1: run 1, rule ferrando (released code's labels, greedy, 3 tokens): "
    assert re.fullmatch(re.escape(head) + r"\d+ of 44 attributes correct, \d+ refused", lines[0]), lines[0]
    assert re.fullmatch(
        r"12 entities: \d+ known \(>= max\(2, n-1\) of n correct, none refused\), .*", lines[1]
    )
    with open_store(db, read_only=True) as w:
        assert w.scalar("SELECT count(*) FROM closed_book_attribute") == 44
        assert w.scalar("SELECT count(*) FROM closed_book_sample") == 0
    again = run_cli("covariates", "known", "--run", "1", "--max-new-tokens", "3", db=db)
    assert "nothing to do" in again.output
    other = run_cli("covariates", "known", "--run", "1", db=db)
    assert other.exit_code == 2 and "max_new_tokens 3" in other.output


def test_an_old_sampled_ferrando_covariate_is_not_taken_for_the_new_rule(four, tmp_path):
    """A covariate stored by ctxprior's earlier `ferrando` (the sampled rule, params without
    `definition`) is refused rather than reused; its rows read as ctxprior-samples."""
    db = _copy(four, tmp_path)
    with open_store(db) as w:
        p = kn.plan(w, 1, rule="ctxprior-samples", samples=2, min_correct=1)
        kn.store_samples(w, p, [[" x", " y"]] * len(p.prompts))
        old = json.loads(w.scalar("SELECT params_json FROM covariate"))
        old = {k: v for k, v in old.items() if k != "definition"} | {"rule": "ferrando"}
        w.execute("UPDATE covariate SET params_json = ?", [json.dumps(old)])
        assert {r[0] for r in w.query("SELECT rule FROM stg_known_entity")} == {"ctxprior-samples"}
        with pytest.raises(kn.UserError, match="other options"):
            kn.plan(w, 1, max_new_tokens=old["max_new_tokens"])
