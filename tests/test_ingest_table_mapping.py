"""Issue 43 item 4: the ``ingest table`` mapping's keys are declared once (``ingest/table_spec.py``:
the fields of ``Mapping``), and the options and the spec file's schema are made from them, so a
key given as an option or in a spec file makes the same mapping; ``DatasetBuilder.write_ids``
returns the ids it assigns, and ``ingest table`` writes ``fixed_item`` / ``fixed_context`` with
those (no guessed ids), also when the warehouse holds other datasets."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

import ctxprior
from ctxprior.errors import UserError
from ctxprior.ingest.builder import DatasetBuilder
from ctxprior.ingest.table_spec import MAPPING_PARAMS, Mapping, Spec, mapping

BASE = {"question": "q", "gold": "g"}
WIDE = ("gold=c",)
# (key, its value as an option, the same in a spec file), where the two forms differ
FORMS = {
    "shape": ("facts", "facts"),
    "contexts": (("gold=c:a", "other=d"), ["gold=c:a", {"type": "other", "text": "d"}]),
    "labels": (("x", "y=gold"), ["x", "y=gold"]),
    "answer_labels": (("True", "False"), ["True", "False"]),
    "query_templates": (("{entity}?",), ["{entity}?"]),
    "context_templates": (("gold={entity} {answer}", "gold=x"), {"gold": ["{entity} {answer}", "x"]}),
    "separator": ("\\t", "\\t"),
    "closed_format": ("", ""),
    "query_format": ("Q: {question}", "Q: {question}"),
}


def _made(spec_path, **options):
    """The mapping, or the one-line error it gives."""
    try:
        return mapping(spec_path, **options)
    except UserError as e:
        return str(e)


@pytest.mark.quick
def test_the_keys_are_declared_once_and_the_doors_are_made_from_them():
    keys = [f.name for f in fields(Mapping) if f.metadata]
    assert list(Spec.model_fields) == keys  # the spec file's keys, in the declared order
    assert [p.name for p in MAPPING_PARAMS] == [
        k for k in keys if k not in ("relations", "source_format", "description")
    ]
    assert all(p.help and p.flag for p in MAPPING_PARAMS)


@pytest.mark.quick
@pytest.mark.parametrize("param", MAPPING_PARAMS, ids=[p.name for p in MAPPING_PARAMS])
def test_an_option_and_a_spec_key_make_the_same_mapping(tmp_path, param):
    option, in_spec = FORMS.get(param.name, ("col", "col"))
    base = {**BASE, "contexts": WIDE} if param.name != "contexts" else BASE
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({**base, param.name: in_spec}))
    by_spec = _made(str(spec))
    by_option = _made(None, **{**base, param.name: option})
    assert by_spec == by_option


@pytest.mark.quick
def test_options_win_over_the_spec_and_nulls_are_defaults(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("question: q\ngold: g\ncontexts: [gold=c]\nlabels: null\nquery_format: 'Q: {question}'\n")
    m = mapping(str(spec), question="q2", labels=None, query_format=None)
    assert (m.question, m.labels, m.query_format, m.shape) == ("q2", {}, "Q: {question}", "contexts")


def _builder(name: str) -> DatasetBuilder:
    b = DatasetBuilder(name, "test")
    for r in ("r1", "r2"):
        rel = b.add_relation(r)
        for pos, (e, a) in enumerate([("e1", "a1"), (f"e-{r}", "a2")]):
            rel.facts.append(
                {"entity": b.entity(e, "real"), "answer": b.answer(a), "kind": "real", "position": pos}
            )
        rel.query_forms += [("open", 0, "{entity}?"), ("closed", 0, "{entity} {answer}?")]
        rel.context_templates += [
            ("gold", 0, f"{r} {{entity}} {{answer}}"),
            ("gold", 1, "x {entity} {answer}"),
        ]
    return b


def test_the_builder_returns_the_ids_it_assigns(demo_db):
    wh = ctxprior.open(demo_db, write=True)  # the demo's datasets hold the first ids
    with wh.connect(write=True) as store, store.transaction():
        stats, a = _builder("mine").write_ids(store)
    assert stats["dataset_id"] == a.dataset and a.dataset > 0 and min(a.entity) > 0
    rows = wh.sql(
        "SELECT r.relation_id, r.name AS rel, f.fact_id, e.entity_id, e.name AS entity, an.answer_id, "
        "an.name AS answer FROM relation r JOIN fact f USING (relation_id) JOIN entity e USING (entity_id) "
        "JOIN answer an ON an.answer_id = f.answer_id WHERE r.dataset_id = ? ORDER BY f.fact_id",
        [a.dataset],
    )
    assert rows["relation_id"].drop_duplicates().tolist() == a.relation
    assert rows["fact_id"].tolist() == [f for rel in a.fact for f in rel]
    assert dict(zip(rows["entity"], rows["entity_id"])) == {
        "e1": a.entity[0],
        "e-r1": a.entity[1],
        "e-r2": a.entity[2],
    }
    assert dict(zip(rows["answer"], rows["answer_id"])) == {"a1": a.answer[0], "a2": a.answer[1]}
    for table, ids in (("query_form", a.query_form), ("context_template", a.context_template)):
        got = wh.sql(
            f"SELECT relation_id, {table}_id AS id FROM {table} WHERE list_contains(?, relation_id) ORDER BY id",
            [a.relation],
        )
        assert [got[got.relation_id == r]["id"].tolist() for r in a.relation] == ids


def test_fixed_tables_use_the_assigned_ids_after_other_datasets(tmp_path, demo_db):
    """Items with different numbers of passages, twice into a warehouse with the demo's datasets:
    every fixed row's ids are the builder's (its relation, its fact, its gold answer, its
    passage's template and answer)."""
    (tmp_path / "t.csv").write_text(
        "item,q,g,label,text,ans\n1,Q1?,A,gold,p1,A\n1,Q1?,A,conflicting,p2,B\n2,Q2?,B,gold,p3,B\n"
        "3,Q3?,C,gold,p4,C\n3,Q3?,C,gold,p5,\n3,Q3?,C,conflicting,p6,A\n"
    )
    opts = dict(
        item="item", question="q", gold="g", context_text="text", context_label="label",
        context_answer="ans", labels=["gold", "conflicting"],
    )  # fmt: skip
    wh = ctxprior.open(demo_db, write=True)
    for name in ("one", "two"):
        wh.datasets.ingest("table", str(tmp_path / "t.csv"), name=name, **opts)
    bad = wh.sql(
        "SELECT count(*) AS n FROM fixed_context fc JOIN fixed_item fi USING (fact_id) "
        "JOIN fact f USING (fact_id) JOIN context_template ct USING (context_template_id) "
        "LEFT JOIN answer a ON a.answer_id = fc.answer_id "
        "WHERE f.relation_id <> fi.relation_id OR f.answer_id <> fi.gold_answer_id "
        "OR ct.relation_id <> fi.relation_id OR ct.template <> fc.text OR ct.context_type <> fc.context_type "
        "OR coalesce(a.dataset_id, fc.dataset_id) <> fc.dataset_id OR fc.dataset_id <> fi.dataset_id "
        "OR (fc.answer_id IS NULL) <> (fc.text = 'p5')"
    )
    assert bad["n"].tolist() == [0]
    n = wh.sql("SELECT count(*) AS n, count(DISTINCT dataset_id) AS d FROM fixed_context")
    assert (n["n"].tolist(), n["d"].tolist()) == ([12], [2])
