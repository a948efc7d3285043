"""Context answers are drawn as the authors' code does (the full answer list, frequent answers
proportionally more often, without replacement) unless `--answer-sampling distinct`; namesakes are
never both queried in one relation's sample."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ctxprior.errors import UserError
from ctxprior.ingest.yago_qec import parse_yago_qec, write_yago_qec
from ctxprior.sampling.draw import draw_sample
from ctxprior.storage import open_store

Y = "http://yago-knowledge.org/resource/"


def _yago_file(path, entities, answers, degrees):
    n = len(entities)
    rel = {
        "query_forms": {
            "open": ["Q: Where was {entity} born?\nA:", "{entity} was born in"],
            "closed": [
                "Q: Was {entity} born in {answer}?\nA:",
                "Q: Is {answer} the birthplace of {entity}?\nA:",
            ],
        },
        "context_templates": {
            "base": "{entity} was born in {answer}.\n",
            "assertive": "Definitely, {entity} was born in {answer}.\n",
            "negation": "{entity} was not born in {answer}.\n",
        },
        "entities": entities,
        "answers": answers,
        "entity_uris": [f"{Y}e{i}" for i in range(n)],
        "answer_uris": [f"{Y}{a.replace(' ', '_')}" for a in answers],
        "gpt_fake_entities": [f"Fakeperson {i}" for i in range(n)],
        "entity_types": {"Person": 1.0},
        "answer_types": {"City": 1.0},
        "entity_uri_to_degree": degrees,
    }
    path.write_text(json.dumps({"http://schema.org/birthPlace": rel}))
    return str(path)


def _db(tmp_path, entities, answers, degrees):
    db = str(tmp_path / "wh.duckdb")
    with open_store(db) as store:
        write_yago_qec(store, parse_yago_qec(_yago_file(tmp_path / "y.json", entities, answers, degrees)))
    return db


def _answers(wh, sid):
    return Counter(
        r[0]
        for r in wh.query(
            "SELECT a.name FROM context c JOIN answer a USING (answer_id) WHERE c.sample_id = ?", [sid]
        )
    )


def test_authors_sampling_follows_answer_frequency_without_replacement(tmp_path):
    # 10 real facts: 7 born in London, 1 each in Paris, Rome, Oslo
    ents = [f"Person {i}" for i in range(10)]
    answers = ["London"] * 7 + ["Paris", "Rome", "Oslo"]
    db = _db(tmp_path, ents, answers, list(range(100, 90, -1)))
    with open_store(db) as store:
        # 4 entities x 24 contexts: each (entity, context type) group holds 8 contexts, 8 distinct
        # positions of the 10-answer list: at most 7 London and at most 1 of each other answer
        sid = draw_sample(store, "yago_qec", n_entities=4, n_contexts=96, seed=11)
        groups = store.query(
            """SELECT c.entity_id, c.context_type, a.name, count(*) FROM context c
                             JOIN answer a USING (answer_id) WHERE c.sample_id = ? GROUP BY ALL""",
            [sid],
        )
        assert all(n <= (7 if name == "London" else 1) for _, _, name, n in groups)
        total = _answers(store, sid)
        assert sum(total.values()) == 96 and total["London"] >= 12 * 5  # >= 5 of every group's 8
        params = json.loads(store.scalar("SELECT params_json FROM sample WHERE sample_id = ?", [sid]))
        assert params["answer_sampling"] == "authors" and params["entity_dedup"] == "name"
        dist = draw_sample(
            store, "yago_qec", n_entities=4, n_contexts=96, seed=11, answer_sampling="distinct"
        )
        got = _answers(store, dist)
        assert sum(got.values()) == 96 and got["London"] < 48  # uniform over the 4 distinct answers
        assert (
            json.loads(store.scalar("SELECT params_json FROM sample WHERE sample_id = ?", [dist]))[
                "answer_sampling"
            ]
            == "distinct"
        )
        # more contexts of a type per entity than the list has answers: refused, as the authors' code fails
        n_before = store.scalar("SELECT count(*) FROM sample")
        with pytest.raises(UserError, match="without replacement"):
            draw_sample(store, "yago_qec", n_entities=2, n_contexts=66, seed=11)
        assert store.scalar("SELECT count(*) FROM sample") == n_before


def test_namesakes_are_never_both_selected(tmp_path):
    # the two highest-degree entities share a name (two URIs): only one of them may be queried
    ents = ["John Smith", "John Smith", "Ada Lovelace", "Alan Turing", "Grace Hopper"]
    answers = ["London", "Leeds", "London", "London", "New York City"]
    db = _db(tmp_path, ents, answers, [50, 40, 30, 20, 10])
    with open_store(db) as store:
        sid = draw_sample(store, "yago_qec", n_entities=4, n_contexts=12, seed=11)
        names = [
            r[0]
            for r in store.query(
                "SELECT e.name FROM sample_fact s JOIN fact f USING (fact_id) "
                "JOIN entity e USING (entity_id) WHERE s.sample_id = ? AND e.kind = 'real' "
                "ORDER BY s.ordinal",
                [sid],
            )
        ]
    assert names == ["John Smith", "Ada Lovelace"]


def test_cli_option(run_cli, tmp_path, db_path):
    assert run_cli("ingest", "demo").exit_code == 0
    res = run_cli(
        "sample",
        "--dataset",
        "demo",
        "--relation",
        "capital",
        "--entities",
        "2",
        "--contexts",
        "6",
        "--answer-sampling",
        "distinct",
    )
    assert res.exit_code == 0, res.output
    res = run_cli("sample", "--dataset", "demo", "--answer-sampling", "sometimes")
    assert res.exit_code == 2


def test_case_study_sample_can_be_kept_small(run_cli):
    """--design all with --templates-per-type and a name count balanced over the entity classes,
    scored on the first query forms only (what the demo does for the gender study)."""

    assert run_cli("ingest", "demo", "--only", "gender").exit_code == 0
    res = run_cli(
        "sample",
        "--dataset",
        "gender",
        "--design",
        "all",
        "--entities",
        "6",
        "--templates-per-type",
        "2",
        "--context-types",
        "feminine_stereotype,masculine_stereotype,feminine_swapped,masculine_swapped",
    )
    assert res.exit_code == 0, res.output
    sid = int(res.output.strip().splitlines()[-1])
    res = run_cli(
        "sql",
        f"SELECT entity_class, count(*) AS n FROM v_sample_entity WHERE sample_id = {sid} "
        "GROUP BY ALL ORDER BY 1",
        "--format",
        "csv",
    )
    assert res.output.strip().splitlines()[1:] == ["feminine,3", "masculine,3"]  # balanced over the classes
    res = run_cli(
        "sql",
        f"SELECT context_type, count(*) AS n FROM v_context WHERE sample_id = {sid} GROUP BY ALL",
        "--format",
        "csv",
    )
    assert sorted(res.output.strip().splitlines()[1:]) == [
        "feminine_stereotype,2",
        "feminine_swapped,2",
        "masculine_stereotype,2",
        "masculine_swapped,2",
    ]
    res = run_cli("sample", "--dataset", "gender", "--templates-per-type", "2")
    assert res.exit_code == 2 and "--design all" in res.output
