"""`ctxprior covariates known`: the model's own familiarity with each entity (Ferrando et al.,
"Do I Know This Entity? Knowledge Awareness and Hallucinations in Language Models", ICLR 2025,
§3: the known / unknown split of the entities).

A run's model answers the run's open queries q(e) with no context, in the run's prompt format
(``ctxprior.scoring.closed_book`` generates the answers). Three rules turn the answers into a
label per entity (the labels are declared once, in the views ``stg_known_attribute`` /
``stg_known_entity`` of schema/views/05_staging.sql):

- ``ferrando`` (the default): as Ferrando et al.'s released code does it (javiferran/sae_entities,
  ``create_wikidata_entity_queries.py`` ``get_label`` and ``filter_known_unknown_wikidata.py``
  ``llama3_filter_*_is_known``). An **attribute** is one entity's facts in one relation (ctxprior's
  counterpart of the code's entity attributes, e.g. a player's birthplace), asked once with the
  relation's first open query form the run scored. Its greedy completion (``max_new_tokens`` 32 as
  the code's) is labelled ``correct`` / ``refusal`` / ``error`` by the code's checks
  (``covariates/ferrando.py``: fuzzy names, numbers within 2, refusal strings), judged on the
  completion's first line. An entity with n attributes is **known** with at least max(2, n - 1)
  correct and none refused (the code's player rule, 2 of 3, and city rule, 3 of 4 with no
  refusal), **unknown** with none correct, left out (``partial``) otherwise. Stored one row per
  attribute in ``closed_book_attribute``.
- ``ctxprior-samples`` (ctxprior's earlier default, not the code's): the same attributes, each
  sampled ``samples`` (10) times at ``temperature`` (1.0) with ``seed``; correct when at least
  ``min_correct`` (3) samples match (``answer_matches``); known with at least ``min_attributes`` (2)
  correct attributes, unknown with none. Stored one row per sample in ``closed_book_sample``.
- ``greedy-majority`` (ctxprior's first rule): one greedy answer per open query form and fact,
  stored in ``closed_book_answer``; known when at least half of the entity's answers match
  (``answer_matches``), unknown when none does, partial otherwise.

``answer_matches`` (the two ctxprior rules' matching): a gold answer occurs as whole words in the
answer's first line after SQuAD normalization (case folded, punctuation and the articles a / an /
the removed, spaces collapsed; DynamicQA's alias matching, with Unicode case folding).

The rule and its parameters are the covariate's params (catalog row). The labels are exposed as
the covariate view ``cov_<name>`` (default name ``known_r<run>``), keyed like the other covariates
(dataset, relation, entity, answer) with ``known`` (1 / 0 / NULL for partial), ``familiarity``,
``rule``, the entity's attribute and answer counts and the attribute's own (``VALUE_COLUMNS``).
The ``known`` analysis compares χ of unknown vs known entities.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UserError
from ..sqlfiles import body, literal, read_sql
from . import catalog, ferrando

SQL = "ctxprior.covariates"
KEY_COLUMNS = ["dataset", "relation", "entity", "answer"]
VALUE_COLUMNS = [
    "known",
    "familiarity",
    "rule",
    "entity_attributes",
    "entity_correct_attributes",
    "entity_refused_attributes",
    "entity_accuracy",
    "entity_answers",
    "entity_correct",
    "attribute_correct",
    "attribute_label",
    "fact_answers",
    "fact_correct",
    "fact_accuracy",
]
MATCH = (
    "a gold answer (fact answer or alias) occurs as whole words in the answer's first line, both "
    "case folded without punctuation and a/an/the"
)
RULES = {
    "ferrando": (
        "Ferrando et al. 2025 as their released code ("
        + ferrando.SOURCE
        + ") labels: one greedy completion ({max_new_tokens} tokens) per attribute (an entity's facts "
        "in one relation, asked with the relation's first open query form), its first line labelled "
        "correct (names: thefuzz token_set_ratio > 90; numbers: within 2), refusal or error; an "
        "entity with n attributes is known with >= max(2, n - 1) correct and none refused, unknown "
        "with none correct, partial (left out) otherwise"
    ),
    "ctxprior-samples": (
        "ctxprior's sampled rule (not Ferrando et al.'s code): an attribute (an entity's facts in one "
        "relation, asked with the relation's first open query form) is correct when >= {min_correct} "
        "of {samples} answers sampled at temperature {temperature:g} match; entity known with >= "
        "{min_attributes} correct attributes, unknown with none, partial (left out) otherwise. "
        "Match: " + MATCH
    ),
    "greedy-majority": (
        "one greedy answer per open query form and fact; entity known when >= half of its answers "
        "match, unknown when none does, partial otherwise. Match: " + MATCH
    ),
}
RULE_PARAMS = {
    "ferrando": ("max_new_tokens", "definition"),
    "ctxprior-samples": (
        "samples",
        "temperature",
        "seed",
        "min_correct",
        "min_attributes",
        "max_new_tokens",
        "batch",
    ),
    "greedy-majority": ("max_new_tokens",),
}
"""The options each rule records in the covariate's params (and that must match to reuse it);
``definition``: the released code the ferrando rule follows (a covariate made by ctxprior's earlier
``ferrando``, the sampled rule, lacks it and is not taken for this one)."""

_PUNCT = re.compile(f"[{re.escape(string.punctuation)}‘’“”]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """Case folded (ß = ss), punctuation and articles removed, spaces collapsed (SQuAD-style)."""
    return " ".join(_ARTICLES.sub(" ", _PUNCT.sub(" ", text.casefold())).split())


def first_line(text: str) -> str:
    """The first line of the stripped text (a raw prompt's model goes on with the next question)."""
    return text.strip().split("\n")[0]


def answer_matches(text: str, golds: Sequence[str]) -> bool:
    """The matching rule: some normalized gold answer occurs as whole words in the normalized
    first line of ``text``."""
    line = f" {normalize(first_line(text))} "
    return any((g := normalize(a)) and f" {g} " in line for a in golds)


@dataclass
class KnownPlan:
    """What `covariates known` asks a run's model, checked before any model is loaded:
    ``prompts`` are (query_form_id, key, template, entity, answer) with key a fact_id
    (greedy-majority) or an index into ``attributes`` ((relation_id, entity_id), ferrando and
    ctxprior-samples)."""

    run_id: int
    name: str
    model: str
    dtype: str | None
    quantization: str | None
    config: dict
    rule: str = "ferrando"
    params: dict = field(default_factory=dict)
    prompts: list[tuple[int, int, str, str, str | None]] = field(default_factory=list)
    attributes: list[tuple[int, int]] = field(default_factory=list)
    golds: list[list[str]] = field(default_factory=list)
    unchanged: bool = False


def rule_params(rule: str = "ferrando", **options) -> dict:
    """The params a rule records: its name, its options (``RULE_PARAMS``) and its text. Default
    ``rule``: ferrando (``KNOWN_OPTIONS`` declares it)."""
    from .options import KNOWN_OPTIONS, MAX_NEW_TOKENS, SAMPLE_BATCH

    values = {o.name: o.default for o in KNOWN_OPTIONS}
    values.update({k: v for k, v in options.items() if v is not None})
    values["batch"] = values.get("batch_size") or SAMPLE_BATCH
    values["temperature"] = float(values["temperature"])
    values["max_new_tokens"] = values["max_new_tokens"] or MAX_NEW_TOKENS[rule]
    values["definition"] = ferrando.SOURCE
    if rule == "ctxprior-samples" and values["min_correct"] > values["samples"]:
        raise UserError(
            f"--min-correct {values['min_correct']}: more than --samples {values['samples']}; "
            "no attribute could be correct"
        )
    picked = {k: values[k] for k in RULE_PARAMS[rule]}
    return {"rule": rule, **picked, "rule_text": RULES[rule].format(**values)}


def plan(store, run_id: int, name: str | None = None, replace: bool = False, **options) -> KnownPlan:
    """The run's closed-book questions under ``options`` (``rule`` and its options); UserError for
    an unknown run, a run with no open queries, inconsistent options, a name taken by another
    covariate (unless ``replace``) or a run whose labels another covariate holds."""
    params = rule_params(**options)
    row = store.execute(
        "SELECT kind, model, dtype, quantization, config_json FROM run WHERE run_id = ?", [run_id]
    ).fetchone()
    if row is None:
        raise UserError(f"--run {run_id}: no such run; see `ctxprior runs`")
    if row[0] != "persuasion":
        raise UserError(
            f"--run {run_id}: a {row[0]} run; known labels need a persuasion run (`ctxprior score`)"
        )
    name = catalog.check_name(name or f"known_r{run_id}")
    p = KnownPlan(run_id, name, row[1], row[2], row[3], json.loads(row[4] or "{}"), params["rule"], params)
    p.unchanged = _check_existing(store, p, replace)
    if p.rule != "greedy-majority":
        rows = store.execute(read_sql(SQL, "sql/known_attributes.sql"), {"run_id": run_id}).fetchall()
        p.prompts = [(r[0], i, r[3], r[4], None) for i, r in enumerate(rows)]
        p.attributes = [(r[1], r[2]) for r in rows]
    else:
        rows = store.execute(read_sql(SQL, "sql/known_prompts.sql"), {"run_id": run_id}).fetchall()
        p.prompts = [r[:5] for r in rows]
    if not rows:
        raise UserError(
            f"--run {run_id}: scored no open query; the closed-book answers come from open queries "
            "(score with --query-types open)"
        )
    p.golds = [list(r[5]) for r in rows]
    return p


def _known_of_run(store, run_id: int) -> list[str]:
    """The names of the `known` covariates that hold run ``run_id``'s labels."""
    if "covariate" not in store.table_names():
        return []
    rows = store.query("SELECT name, params_json FROM covariate WHERE kind = 'known' ORDER BY covariate_id")
    return [n for n, params in rows if json.loads(params).get("run_id") == run_id]


def _check_existing(store, p: KnownPlan, replace: bool) -> bool:
    """True when covariate ``p.name`` already holds this run's labels made with the same options
    (and ``replace`` is off)."""
    others = [n for n in _known_of_run(store, p.run_id) if n != p.name]
    if others:
        raise UserError(
            f"--run {p.run_id}: its labels are covariate {others[0]}; use --name {others[0]} "
            "(with --replace to ask again)"
        )
    existing = catalog.get(store, p.name)
    if existing is None:
        return False
    if existing["kind"] != "known":
        raise UserError(
            f"--name {p.name}: already used by a {existing['kind']} covariate; choose another name"
        )
    stored = json.loads(existing["params_json"])
    if replace:
        return False
    if stored.get("run_id") != p.run_id:
        raise UserError(f"--name {p.name}: holds another run's labels; choose another name or pass --replace")
    mine = {k: v for k, v in p.params.items() if k != "rule_text"}
    if any(stored.get(k) != v for k, v in mine.items()):
        made = ", ".join(f"{k} {stored.get(k)}" for k in mine if stored.get(k) != mine[k])
        if stored.get("rule") != p.rule:
            made = f"rule {stored.get('rule')}"
        raise UserError(f"--name {p.name}: holds labels made with other options ({made}); pass --replace")
    return True


def _record(store, p: KnownPlan, data_table: str) -> int:
    """Delete the run's (and the name's previous run's) answers; the catalog row; its id."""
    existing = catalog.get(store, p.name)
    runs = [p.run_id]
    if existing is not None:
        runs.append(json.loads(existing["params_json"]).get("run_id"))
    store.execute("DELETE FROM closed_book_answer WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs])
    store.execute("DELETE FROM closed_book_sample WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs])
    store.execute("DELETE FROM closed_book_attribute WHERE run_id IN (SELECT unnest(?::INTEGER[]))", [runs])
    return catalog.upsert(
        store,
        name=p.name,
        kind="known",
        dataset_id=None,
        key_columns=KEY_COLUMNS,
        value_columns=VALUE_COLUMNS,
        params={**p.params, "run_id": p.run_id, "model": p.model},
        description=f"closed-book familiarity of run {p.run_id}'s model ({p.model}) with each entity "
        f"(rule {p.rule})",
        data_table=data_table,
    )


def _finish(store, p: KnownPlan, cid: int) -> dict:
    view = body(read_sql(SQL, "sql/known_view.sql")).format(run_id=literal(int(p.run_id)))
    catalog.create_view(store, p.name, view)
    rep = summary(store, p)
    store.execute(
        "UPDATE covariate SET n_rows = ?, n_matched = ? WHERE covariate_id = ?",
        [rep["n_answers"], rep["n_correct"], cid],
    )
    return rep


def store_answers(store, p: KnownPlan, texts: Sequence[str]) -> dict:
    """greedy-majority, one transaction: the judged greedy answers (one per prompt), the catalog
    row, the view ``cov_<name>``; the summary."""
    import pyarrow as pa

    if p.rule != "greedy-majority" or len(texts) != len(p.prompts):
        raise ValueError("one greedy answer per prompt of a greedy-majority plan expected")
    with store.transaction():
        cid = _record(store, p, "closed_book_answer")
        correct = [answer_matches(t, g) for t, g in zip(texts, p.golds)]
        table = {
            "run_id": pa.array([p.run_id] * len(texts), pa.int32()),
            "query_form_id": pa.array([r[0] for r in p.prompts], pa.int32()),
            "fact_id": pa.array([r[1] for r in p.prompts], pa.int32()),
            "covariate_id": pa.array([cid] * len(texts), pa.int32()),
            "text": pa.array(list(texts), pa.string()),
            "correct": pa.array(correct, pa.bool_()),
        }
        store.insert_arrow("closed_book_answer", pa.table(table))
        return _finish(store, p, cid)


def store_labels(store, p: KnownPlan, texts: Sequence[str]) -> dict:
    """ferrando, one transaction: each attribute's greedy completion labelled by the released
    code's checks (``ferrando.label`` on its first line), the catalog row, the view
    ``cov_<name>``; the summary."""
    import pyarrow as pa

    if p.rule != "ferrando" or len(texts) != len(p.prompts):
        raise ValueError("one greedy completion per attribute of a ferrando plan expected")
    judged = [ferrando.label(first_line(t), golds) for t, golds in zip(texts, p.golds)]
    with store.transaction():
        cid = _record(store, p, "closed_book_attribute")
        table = {
            "run_id": pa.array([p.run_id] * len(texts), pa.int32()),
            "relation_id": pa.array([a[0] for a in p.attributes], pa.int32()),
            "entity_id": pa.array([a[1] for a in p.attributes], pa.int32()),
            "query_form_id": pa.array([r[0] for r in p.prompts], pa.int32()),
            "covariate_id": pa.array([cid] * len(texts), pa.int32()),
            "text": pa.array(list(texts), pa.string()),
            "check_kind": pa.array([k for k, _ in judged], pa.string()),
            "label": pa.array([lab for _, lab in judged], pa.string()),
        }
        store.insert_arrow("closed_book_attribute", pa.table(table))
        return _finish(store, p, cid)


def store_samples(store, p: KnownPlan, samples: Sequence[Sequence[str]]) -> dict:
    """ctxprior-samples, one transaction: the judged samples (one row each), the catalog row, the
    view ``cov_<name>``; the summary."""
    import pyarrow as pa

    n = p.params["samples"]
    if p.rule != "ctxprior-samples" or len(samples) != len(p.prompts) or any(len(s) != n for s in samples):
        raise ValueError(f"{n} samples per prompt of a ctxprior-samples plan expected")
    with store.transaction():
        cid = _record(store, p, "closed_book_sample")
        rows = [
            (rel, ent, k, qf, t, answer_matches(t, golds))
            for (qf, *_), (rel, ent), golds, texts in zip(p.prompts, p.attributes, p.golds, samples)
            for k, t in enumerate(texts)
        ]
        cols = list(zip(*rows))
        table = {
            "run_id": pa.array([p.run_id] * len(rows), pa.int32()),
            "relation_id": pa.array(cols[0], pa.int32()),
            "entity_id": pa.array(cols[1], pa.int32()),
            "sample": pa.array(cols[2], pa.int32()),
            "query_form_id": pa.array(cols[3], pa.int32()),
            "covariate_id": pa.array([cid] * len(rows), pa.int32()),
            "text": pa.array(cols[4], pa.string()),
            "correct": pa.array(cols[5], pa.bool_()),
        }
        store.insert_arrow("closed_book_sample", pa.table(table))
        return _finish(store, p, cid)


def summary(store, p: KnownPlan, unchanged: bool = False) -> dict:
    """The view's name, the rule and its params, and the run's counts: entities known / unknown /
    partial, attributes and answers correct."""
    res = store.execute(read_sql(SQL, "sql/known_summary.sql"), {"run_id": p.run_id})
    counts = dict(zip([d[0] for d in res.description], res.fetchone()))
    return {
        "view": catalog.view_name(p.name),
        "run_id": p.run_id,
        **{k: v for k, v in p.params.items() if k != "rule_text"},
        **counts,
        "unchanged": unchanged,
    }
