"""`ctxprior covariates known`: the model's own familiarity with each entity (Ferrando et al. 2025).

A run's model answers each of the run's open queries q(e) with no context (a greedy, closed-book
answer; ``ctxprior.scoring.closed_book`` generates them). Each answer is judged here by
``answer_matches`` (the one matching rule): a gold answer (the fact's answer and, for DynamicQA
facts, its aliases) occurs as whole words in the answer's first line after SQuAD normalization
(case folded, punctuation and the articles a / an / the removed, spaces collapsed; DynamicQA's
alias matching, with Unicode case folding instead of lower-casing). The per-entity label is the view
``stg_known_entity`` (schema/views/05_staging.sql): ``known`` when at least half of the entity's
answers in the run are correct, ``unknown`` when none is, ``partial`` otherwise. Ferrando et al.
call an entity known when the model gets most of its attributes right and unknown when it gets
none, and leave the rest out; the ``known`` analysis compares χ of unknown vs known entities.

The answers are stored in ``closed_book_answer`` (one row per run, open query form and fact) and
exposed as the covariate view ``cov_<name>`` (default name ``known_r<run>``), keyed like the other
covariates (dataset, relation, entity, answer) with ``known`` (1 / 0 / NULL for partial),
``familiarity``, ``entity_accuracy`` and ``fact_accuracy``.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UserError
from ..sqlfiles import body, literal, read_sql
from . import catalog

SQL = "ctxprior.covariates"
KEY_COLUMNS = ["dataset", "relation", "entity", "answer"]
VALUE_COLUMNS = [
    "known",
    "familiarity",
    "entity_accuracy",
    "entity_answers",
    "entity_correct",
    "fact_accuracy",
]
RULE = (
    "correct: a gold answer (fact answer or alias) occurs as whole words in the first line of the "
    "greedy closed-book answer, both lower-cased without punctuation and a/an/the; entity known: "
    ">= half of its answers correct, unknown: none, partial: otherwise"
)

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
    """What `covariates known` asks a run's model, checked before any model is loaded."""

    run_id: int
    name: str
    model: str
    dtype: str | None
    quantization: str | None
    config: dict
    prompts: list[tuple[int, int, str, str, str | None]] = field(default_factory=list)
    golds: list[list[str]] = field(default_factory=list)
    unchanged: bool = False


def plan(store, run_id: int, name: str | None = None, replace: bool = False) -> KnownPlan:
    """The run's closed-book questions; UserError for an unknown run, a run with no open queries,
    or a name taken by another covariate (unless ``replace``)."""
    row = store.execute(
        "SELECT kind, model, dtype, quantization, config_json FROM run WHERE run_id = ?", [run_id]
    ).fetchone()
    if row is None:
        raise UserError(f"--run {run_id}: no such run; see `ctxprior runs list`")
    if row[0] != "persuasion":
        raise UserError(
            f"--run {run_id}: a {row[0]} run; known labels need a persuasion run (`ctxprior score`)"
        )
    name = catalog.check_name(name or f"known_r{run_id}")
    p = KnownPlan(run_id, name, row[1], row[2], row[3], json.loads(row[4] or "{}"))
    p.unchanged = _check_existing(store, p, replace)
    rows = store.execute(read_sql(SQL, "sql/known_prompts.sql"), {"run_id": run_id}).fetchall()
    if not rows:
        raise UserError(
            f"--run {run_id}: scored no open query; the closed-book answers come from open queries "
            "(score with --query-types open)"
        )
    p.prompts = [r[:5] for r in rows]
    p.golds = [list(r[5]) for r in rows]
    return p


def _check_existing(store, p: KnownPlan, replace: bool) -> bool:
    """True when covariate ``p.name`` already holds this run's answers (and ``replace`` is off)."""
    existing = catalog.get(store, p.name)
    if existing is None:
        return False
    if existing["kind"] != "known":
        raise UserError(
            f"--name {p.name}: already used by a {existing['kind']} covariate; choose another name"
        )
    same_run = json.loads(existing["params_json"]).get("run_id") == p.run_id
    if not same_run and not replace:
        raise UserError(f"--name {p.name}: holds another run's labels; choose another name or pass --replace")
    return same_run and not replace


def store_answers(store, p: KnownPlan, texts: Sequence[str], params: dict) -> dict:
    """One transaction: the judged answers, the catalog row, the view ``cov_<name>``; the summary."""
    import pyarrow as pa

    if len(texts) != len(p.prompts):
        raise ValueError("one answer per prompt expected")
    with store.transaction():
        existing = catalog.get(store, p.name)
        if existing is not None:
            old = json.loads(existing["params_json"]).get("run_id")
            store.execute("DELETE FROM closed_book_answer WHERE run_id IN (?, ?)", [old, p.run_id])
        else:
            store.execute("DELETE FROM closed_book_answer WHERE run_id = ?", [p.run_id])
        cid = catalog.upsert(
            store,
            name=p.name,
            kind="known",
            dataset_id=None,
            key_columns=KEY_COLUMNS,
            value_columns=VALUE_COLUMNS,
            params={**params, "run_id": p.run_id, "model": p.model, "rule": RULE},
            description=f"closed-book familiarity of run {p.run_id}'s model ({p.model}) with each entity",
            data_table="closed_book_answer",
        )
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
        view = body(read_sql(SQL, "sql/known_view.sql")).format(run_id=literal(int(p.run_id)))
        catalog.create_view(store, p.name, view)
        rep = summary(store, p)
        store.execute(
            "UPDATE covariate SET n_rows = ?, n_matched = ? WHERE covariate_id = ?",
            [rep["n_answers"], rep["n_correct"], cid],
        )
    return rep


def summary(store, p: KnownPlan, unchanged: bool = False) -> dict:
    """The view's name and the run's counts: entities known / unknown / partial, answers correct."""
    res = store.execute(read_sql(SQL, "sql/known_summary.sql"), {"run_id": p.run_id})
    counts = dict(zip([d[0] for d in res.description], res.fetchone()))
    return {"view": catalog.view_name(p.name), "run_id": p.run_id, **counts, "unchanged": unchanged}
