"""``ctxprior ingest table SOURCE``: bring your own dataset, in one of two shapes.

The column mapping comes from options or a spec file (``--spec FILE``, YAML or JSON, with the
options' names as keys: ``question: q``; options given on the command line win over the file).

*Templated facts* (``--shape facts``): a row per fact, ``relation``, ``entity`` and ``answer``
columns; the relations' query templates (``{entity}``, and ``{answer}`` for a closed form) and
context templates (``{entity}`` and ``{answer}``) from ``--query-template`` / ``--context-template
TYPE=TEMPLATE`` (every relation), or per relation in the spec (``relations: {REL: {query_templates:
[...], context_templates: {TYPE: [...]}}}``). It lands in the tables yago-qec fills, so ``ctxprior
sample`` works as for yago-qec.

*Fixed contexts* (``--shape contexts``, the default): an item (``question``, optional ``item`` key
and ``entity``), its ``gold`` answer and one or more passages, each with a type and the answer it
supports. Passages come in one of three layouts:
- wide: ``--context TYPE=TEXT_COLUMN[:ANSWER_COLUMN]`` per passage column (NQ-Swap's
  ``org_context`` / ``sub_context``);
- long: a row per passage, ``--context-text``, ``--context-label`` (and ``--context-answer``)
  columns, rows grouped by ``item`` (else by question);
- nested: ``--context-list COL``, a list of objects per row whose keys are ``--context-text`` etc.
Labels of the long and nested layouts must be listed: ``--label LABEL`` or ``--label LABEL=TYPE``
(a dataset's own label mapped to gold / conflicting / irrelevant, or kept); where the data holds
each passage's type itself, ``--context-type COL`` reads it from there (the label is still kept).
Each item becomes its own relation (as DynamicQA's disputable facts): ``schema/fixed.py``.

Every row is validated before the warehouse is opened; an error names the file, the row and the
column; the dataset is written in one transaction with its source and sha256.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..errors import UserError
from ..options import DATASET_NAME
from .builder import SEPARATOR, DatasetBuilder
from .registry import IngestSource, Param, ingest_source
from .table_read import Record, Table, read_table
from .table_spec import read_spec

SHAPES = ("contexts", "facts")
OPEN_FORMAT = "Q: {question}\nA:"
CLOSED_FORMAT = "Q: {question} Is it {answer}?\nA:"
_MISSING = object()


class Bad(Exception):
    """A value that is not what the mapping needs: (column, problem); the caller adds the row."""

    def __init__(self, column: str, problem: str):
        super().__init__(problem)
        self.column, self.problem = column, problem


@dataclass
class Mapping:
    """Which columns hold what (module docstring); built from options and a spec file by ``mapping``."""

    shape: str = "contexts"
    item: str | None = None
    question: str | None = None
    entity: str | None = None
    gold: str | None = None
    contexts: list[tuple[str, str, str | None]] = field(default_factory=list)  # (type, text col, answer col)
    context_list: str | None = None
    context_text: str | None = None
    context_label: str | None = None
    context_answer: str | None = None
    context_type: str | None = None  # a passage's type read from a column (else: labels[label])
    labels: dict[str, str] = field(default_factory=dict)  # dataset label -> type
    answer_labels: list[str] = field(default_factory=list)  # the answer space (schema/answer_labels.py)
    query_format: str = OPEN_FORMAT
    closed_format: str | None = CLOSED_FORMAT
    separator: str = SEPARATOR  # between a passage and the query (builder.SEPARATOR)
    relation: str | None = None
    answer: str | None = None
    query_templates: list[str] = field(default_factory=list)
    context_templates: dict[str, list[str]] = field(default_factory=dict)
    relations: dict[str, dict] = field(default_factory=dict)
    derive: Callable[[dict], dict] | None = None  # a preset's record -> flat record
    skip: Callable[[dict], bool] | None = None  # a preset's rows to leave out (skip_note says which)
    skip_note: str = ""
    source_format: str = "table"
    description: str | None = None


# -- the mapping: options and spec file -------------------------------------------------------------


def _pairs(values, option: str, sep: str = "=") -> list[tuple[str, str]]:
    out = []
    for v in values or ():
        k, found, rest = str(v).partition(sep)
        if not found or not k.strip() or not rest.strip():
            raise UserError(f"{option} {v}: expected TYPE{sep}VALUE")
        out.append((k.strip(), rest))
    return out


def _wide(pairs: list[tuple[str, str]]) -> list[tuple[str, str, str | None]]:
    return [(t, v.partition(":")[0], v.partition(":")[2] or None) for t, v in pairs]


def _labels(values) -> dict[str, str]:
    if isinstance(values, dict):
        return {str(k): str(v) for k, v in values.items()}
    return {
        str(v).partition("=")[0]: str(v).partition("=")[2] or str(v).partition("=")[0] for v in values or ()
    }


def mapping(spec: str | None = None, **options: Any) -> Mapping:
    """The mapping from ``spec`` (a file) and the options (None / empty: not given)."""
    d = read_spec(spec)  # validated by its schema (table_spec.Spec)
    d["contexts"] = d.get("contexts") or []
    d["labels"] = _labels(d.get("labels"))
    for k in ("query_templates", "answer_labels"):
        d[k] = list(d.get(k) or [])
    d["context_templates"] = {
        t: v if isinstance(v, list) else [v] for t, v in (d.get("context_templates") or {}).items()
    }
    if options.get("closed_format") == "" or d.get("closed_format") == "":
        d["closed_format"] = None  # '' (empty): no closed query form; a non-empty option still wins
    if options.get("separator") is not None:  # '' (no separator) is a value here
        d["separator"] = options.pop("separator")
    if "separator" in d:
        d["separator"] = separator_value(d["separator"])
    given = {k: v for k, v in options.items() if v not in (None, (), [], "")}
    if "contexts" in given:
        d["contexts"] = _wide(_pairs(given.pop("contexts"), "--context"))
    if "labels" in given:
        d["labels"] = _labels(given.pop("labels"))
    if "context_templates" in given:
        ct: dict[str, list[str]] = defaultdict(list)
        for t, v in _pairs(given.pop("context_templates"), "--context-template"):
            ct[t].append(v)
        d["context_templates"] = dict(ct)
    for k in ("query_templates", "answer_labels"):
        if k in given:
            d[k] = list(given.pop(k))
    d.update(given)
    m = Mapping(**d)
    _check_mapping(m)
    return m


def separator_value(v: Any) -> str:
    """``--separator``'s value (a spec's ``separator:``) with its \\n and \\t escapes decoded."""
    if not isinstance(v, str):
        raise UserError(f"--separator {v!r}: expected text (\\n and \\t escapes allowed)")
    return v.replace("\\n", "\n").replace("\\t", "\t")


def _check_mapping(m: Mapping) -> None:
    """What the mapping itself must hold, before any row is read."""
    if m.shape not in SHAPES:
        raise UserError(f"--shape {m.shape}: expected one of {', '.join(SHAPES)}")
    if m.shape == "facts":
        for opt in ("relation", "entity", "answer"):
            if not getattr(m, opt):
                raise UserError(f"--{opt}: the column of each fact's {opt} is needed with --shape facts")
        return
    for opt in ("question", "gold"):
        if not getattr(m, opt):
            raise UserError(f"--{opt}: the column of each item's {opt} is needed with --shape contexts")
    layouts = [bool(m.contexts), bool(m.context_list), bool(m.context_text and not m.context_list)]
    if sum(layouts) != 1:
        raise UserError(
            "--context / --context-text / --context-list: give the passages in one layout: "
            "--context TYPE=TEXT_COLUMN[:ANSWER_COLUMN] (wide), --context-text COL --context-label COL "
            "(a row per passage) or --context-list COL --context-text KEY --context-label KEY (nested)"
        )
    if not m.contexts and not (m.context_text and m.context_label and m.labels):
        raise UserError(
            "--context-label / --label: passages in rows or lists need their label column and the "
            "labels the mapping knows (--label LABEL or --label LABEL=TYPE, repeatable)"
        )
    if m.answer_labels and len(set(m.answer_labels)) < 2:
        raise UserError(
            f"--answer-label {', '.join(m.answer_labels)}: an answer space needs at least two "
            "different labels"
        )
    if "{question}" not in m.query_format:
        raise UserError(f"--query-format {m.query_format!r}: has no {{question}} placeholder")
    if m.closed_format and not all(p in m.closed_format for p in ("{question}", "{answer}")):
        raise UserError(f"--closed-format {m.closed_format!r}: needs {{question}} and {{answer}}")


# -- values ------------------------------------------------------------------------------------------


def lookup(data: dict, column: str) -> Any:
    """``data[column]``, else the dotted path (``requested_rewrite.subject``); _MISSING when absent."""
    if column in data:
        return data[column]
    cur: Any = data
    for part in column.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def optional_text(data: dict, column: str | None, *, key: bool = False) -> str | None:
    """The text in ``column``: a string (a list of strings: its first, e.g. NQ-Swap's answers; a
    key may be an integer); None when it is empty. Missing or another type -> :class:`Bad`."""
    if column is None:
        raise Bad("(none)", "no column is mapped here; give it in the options or the spec")
    v = lookup(data, column)
    if v is _MISSING:
        cols = ", ".join(list(data)[:12])
        raise Bad(column, f"no such column (the row has: {cols})")
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        v = v[0] if v else None
    if key and isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()):
        return None
    if not isinstance(v, str):
        raise Bad(column, f"expected text, got {type(v).__name__} {str(v)[:40]!r}")
    return v


def text(data: dict, column: str | None, *, key: bool = False) -> str:
    """:func:`optional_text`, and empty is :class:`Bad` too."""
    v = optional_text(data, column, key=key)
    if v is None:
        raise Bad(column or "(none)", "empty")
    return v


def _fail(r: Record, column: str | None, problem: str) -> UserError:
    return UserError(f"{r.where}: row {r.row}, column '{column}': {problem}; fix the data or the mapping")


# -- fixed contexts ----------------------------------------------------------------------------------


@dataclass
class Passage:
    label: str
    type: str
    text: str
    answer: str | None
    row: int


@dataclass
class Item:
    key: str
    row: int
    question: str
    entity: str
    gold: str
    passages: list[Passage] = field(default_factory=list)


def _item_head(m: Mapping, r: Record, data: dict) -> Item:
    q = text(data, m.question)
    key = (
        text(data, m.item, key=True)
        if m.item
        else (q if m.context_text and not m.context_list else str(r.row))
    )
    entity = text(data, m.entity) if m.entity else q
    return Item(key.strip(), r.row, q, entity.strip(), text(data, m.gold).strip())


def _label(m: Mapping, data: dict, column: str | None) -> tuple[str, str]:
    if column is None:
        raise Bad("(none)", "no --context-label column is mapped; give one")
    v = lookup(data, column)
    lab = str(v) if isinstance(v, (int, bool)) else text(data, column)
    if lab not in m.labels:
        raise Bad(
            column,
            f"context label {lab!r} is not in the mapping (it knows {', '.join(m.labels)}); add --label {lab}[=TYPE]",
        )
    return lab, m.labels[lab]


def _passage(m: Mapping, data: dict, row: int) -> Passage:
    lab, typ = _label(m, data, m.context_label)
    if m.context_type:
        typ = text(data, m.context_type).strip()
    ans = optional_text(data, m.context_answer) if m.context_answer else None
    return Passage(lab, typ, text(data, m.context_text), ans, row)


def _passages(m: Mapping, r: Record, data: dict) -> list[Passage]:
    """The passages one row holds (wide columns, or its nested list)."""
    if m.contexts:
        return [
            Passage(t, t, text(data, col), optional_text(data, acol) if acol else None, r.row)
            for t, col, acol in m.contexts
        ]
    if not m.context_list:
        return [_passage(m, data, r.row)]
    lst = lookup(data, m.context_list)
    if lst is _MISSING:
        raise Bad(m.context_list, "no such column")
    if not isinstance(lst, list) or not lst:
        raise Bad(
            m.context_list,
            "empty context list"
            if isinstance(lst, list) or lst is None
            else f"expected a list, got {type(lst).__name__}",
        )
    out = []
    for j, el in enumerate(lst):
        if not isinstance(el, dict):
            raise Bad(f"{m.context_list}[{j}]", f"expected an object, got {type(el).__name__}")
        try:
            out.append(_passage(m, el, r.row))
        except Bad as e:
            raise Bad(f"{m.context_list}[{j}].{e.column}", e.problem) from None
    return out


def _row_item(m: Mapping, r: Record) -> Item:
    try:
        data = m.derive(r.data) if m.derive else r.data
        it = _item_head(m, r, data)
        it.passages = _passages(m, r, data)
    except Bad as e:
        raise _fail(r, e.column, e.problem) from None
    return it


def parse_items(records: list[Record], m: Mapping) -> list[Item]:
    """Every item with its passages, validated (UserError naming the row and the column)."""
    if not records:
        raise UserError("the table has no rows")
    items: dict[str, Item] = {}
    long = bool(m.context_text and not m.context_list and not m.contexts)
    for r in records:
        it = _row_item(m, r)
        old = items.get(it.key)
        if old is None:
            items[it.key] = it
        elif not long:
            col = m.item or "(row number)"
            raise _fail(r, col, f"duplicate item {it.key!r} (first at row {old.row})")
        elif (old.question, old.gold) != (it.question, it.gold):
            raise _fail(
                r, m.question, f"item {it.key!r} has another question or gold answer than at row {old.row}"
            )
        else:
            old.passages += it.passages
    for it in items.values():
        seen: dict[tuple[str, str], int] = {}
        for p in it.passages:
            if (p.label, p.text) in seen:
                raise UserError(
                    f"{records[0].where}: row {p.row}: item {it.key!r} repeats a {p.label} passage (row {seen[p.label, p.text]}); remove the duplicate"
                )
            seen[p.label, p.text] = p.row
    return list(items.values())


def build_items(items: list[Item], m: Mapping, b: DatasetBuilder) -> list[tuple[Item, int, list[int | None]]]:
    """Relations, facts, query forms and fixed context templates of the items; returns, per item,
    its gold answer's and each passage's answer's builder index."""
    out = []
    for pos, it in enumerate(items):
        rel = b.add_relation(f"item:{it.key}")
        rel.short_name = f"item:{it.key}"
        rel.query_forms.append(("open", 0, m.query_format.replace("{question}", it.question)))
        if m.closed_format:
            rel.query_forms.append(("closed", 0, m.closed_format.replace("{question}", it.question)))
        gold = b.answer(it.gold)
        rel.facts.append(
            {"entity": b.entity(it.entity, "real"), "answer": gold, "kind": "real", "position": pos}
        )
        per_type: dict[str, int] = defaultdict(int)
        for p in it.passages:
            rel.context_templates.append((p.type, per_type[p.type], p.text))
            per_type[p.type] += 1
        out.append(
            (it, gold, [None if p.answer is None else b.answer(p.answer.strip()) for p in it.passages])
        )
    return out


def _fixed_rows(built, ds_id: int, ids: dict[str, int]) -> tuple[dict[str, list], dict[str, list]]:
    items: dict[str, list] = defaultdict(list)
    ctx: dict[str, list] = defaultdict(list)
    ct = ids["context_template"]
    for i, (it, gold, answers) in enumerate(built):
        fid = ids["fact"] + i
        for k, v in (
            ("fact_id", fid),
            ("dataset_id", ds_id),
            ("relation_id", ids["relation"] + i),
            ("item_key", it.key),
            ("source_row", it.row),
            ("question", it.question),
            ("gold_answer_id", ids["answer"] + gold),
        ):
            items[k].append(v)
        for j, (p, a) in enumerate(zip(it.passages, answers)):
            for k, v in (
                ("context_template_id", ct),
                ("fact_id", fid),
                ("dataset_id", ds_id),
                ("ordinal", j),
                ("label", p.label),
                ("context_type", p.type),
                ("answer_id", None if a is None else ids["answer"] + a),
                ("source_row", p.row),
                ("text", p.text),
            ):
                ctx[k].append(v)
            ct += 1
    return items, ctx


_INT_COLS = {
    "fact_id",
    "dataset_id",
    "relation_id",
    "source_row",
    "gold_answer_id",
    "context_template_id",
    "ordinal",
    "answer_id",
}


def _arrow(cols: dict[str, list]) -> pa.Table:
    return pa.table({k: pa.array(v, pa.int32() if k in _INT_COLS else pa.string()) for k, v in cols.items()})


# -- templated facts ---------------------------------------------------------------------------------


def _templates_of(m: Mapping, rel: str) -> tuple[list[str], dict[str, list[str]]]:
    own = m.relations.get(rel) or {}
    q = own.get("query_templates") or m.query_templates
    c = own.get("context_templates") or m.context_templates
    return list(q), {t: v if isinstance(v, list) else [v] for t, v in c.items()}


def _check_template(t: Any, where: str, need: tuple[str, ...]) -> str:
    if not isinstance(t, str):
        raise UserError(f"{where}: expected a template string, got {type(t).__name__}")
    for ph in need:
        if "{" + ph + "}" not in t:
            raise UserError(f"{where}: template {t!r} has no {{{ph}}} placeholder")
    return t


def _fact_templates(m: Mapping, rel_name: str):
    qts, cts = _templates_of(m, rel_name)
    if not qts or not cts:
        raise UserError(
            f"relation '{rel_name}': no {'query' if not qts else 'context'} templates; give "
            "--query-template / --context-template TYPE=TEMPLATE or relations.<REL> in the spec"
        )
    forms: list = []
    n: defaultdict[str, int] = defaultdict(int)
    for t in qts:
        qtype = "closed" if "{answer}" in str(t) else "open"
        forms.append(
            (qtype, n[qtype], _check_template(t, f"relation '{rel_name}': query template", ("entity",)))
        )
        n[qtype] += 1
    ctx = [
        (ct, j, _check_template(t, f"relation '{rel_name}': context template {ct}", ("entity", "answer")))
        for ct, ts in cts.items()
        for j, t in enumerate(ts)
    ]
    return forms, ctx


def build_facts(records: list[Record], m: Mapping, b: DatasetBuilder) -> int:
    """Relations (in first-seen order), their facts and templates into ``b``; returns the facts."""
    if not records:
        raise UserError("the table has no rows")
    rels: dict[str, Any] = {}
    seen: dict[tuple[str, str], int] = {}
    for r in records:
        try:
            data = m.derive(r.data) if m.derive else r.data
            rn, e, a = (text(data, c).strip() for c in (m.relation, m.entity, m.answer))
        except Bad as err:
            raise _fail(r, err.column, err.problem) from None
        if (rn, e) in seen:
            raise _fail(r, m.entity, f"duplicate fact ({rn}, {e}) (first at row {seen[rn, e]})")
        seen[rn, e] = r.row
        if rn not in rels:
            rels[rn] = b.add_relation(rn)
            rels[rn].query_forms, rels[rn].context_templates = _fact_templates(m, rn)
        rel = rels[rn]
        rel.facts.append(
            {"entity": b.entity(e, "real"), "answer": b.answer(a), "kind": "real", "position": len(rel.facts)}
        )
    return len(seen)


# -- the source --------------------------------------------------------------------------------------


@dataclass
class Prepared:
    builder: DatasetBuilder
    built: list | None  # fixed contexts: build_items' result
    shape: str
    left_out: str | None = None  # the rows the preset leaves out (Mapping.skip), as a line says it
    answer_labels: list[str] = field(default_factory=list)  # the declared answer space, if any


def prepare_table(table: Table, m: Mapping, name: str) -> Prepared:
    """Validate every row and collect the dataset's rows (nothing is written)."""
    b = DatasetBuilder(
        name,
        m.source_format,
        source_path=table.origin,
        source_sha256=table.sha256,
        description=m.description,
        separator=m.separator,
    )
    records = [r for r in table.records if not (m.skip and m.skip(r.data))]
    skipped = len(table.records) - len(records)
    if skipped and not records:
        raise UserError(f"{table.origin}: every row is left out ({m.skip_note}); is it the right file?")
    left_out = f"left out {skipped} of {len(table.records)} rows: {m.skip_note}" if skipped else None
    if m.shape == "facts":
        build_facts(records, m, b)
        return Prepared(b, None, "facts", left_out, _answer_space(m, b, table.origin))
    built = build_items(parse_items(records, m), m, b)
    return Prepared(b, built, "contexts", left_out, _answer_space(m, b, table.origin, built))


def _answer_space(m: Mapping, b: DatasetBuilder, where: str, built: list | None = None) -> list[str]:
    """The declared answer labels (deduplicated, order kept), after checking that every gold answer
    and every passage's answer is one of them (UserError naming the item and the answer)."""
    labels = list(dict.fromkeys(a.strip() for a in m.answer_labels))
    if not labels:
        return []
    names = b.answer_names()
    for it, gold, answers in built or ():
        for a in (gold, *answers):
            if a is not None and names[a] not in labels:
                raise UserError(
                    f"{where}: row {it.row}: item {it.key!r} has the answer {names[a]!r}, which is not "
                    f"one of the declared answer labels ({', '.join(labels)}); add it with --answer-label"
                )
    if built is None and (extra := sorted(set(names) - set(labels))):
        raise UserError(
            f"{where}: the answer {extra[0]!r} is not one of the declared answer labels "
            f"({', '.join(labels)}); add it with --answer-label"
        )
    return labels


def write_table(store, p: Prepared) -> dict[str, Any]:
    """Write a prepared dataset (and, for fixed contexts, ``fixed_item`` / ``fixed_context``) in
    one transaction."""
    with store.transaction():
        ids = {t: store.next_id(t, f"{t}_id") for t in ("relation", "answer", "fact", "context_template")}
        stats = p.builder.write(store)
        if p.built is not None:
            items, ctx = _fixed_rows(p.built, stats["dataset_id"], ids)
            store.insert_arrow("fixed_item", _arrow(items))
            store.insert_arrow("fixed_context", _arrow(ctx))
        if p.answer_labels:
            n = len(p.answer_labels)
            store.insert_arrow(
                "answer_label",
                pa.table(
                    {
                        "dataset_id": pa.array([stats["dataset_id"]] * n, pa.int32()),
                        "ordinal": pa.array(range(n), pa.int32()),
                        "label": pa.array(p.answer_labels, pa.string()),
                    }
                ),
            )
    return {
        **stats,
        "shape": p.shape,
        "source": p.builder.source_path,
        "sha256": p.builder.source_sha256,
        "left_out": p.left_out,
    }


def table_lines(s: dict[str, Any]) -> list[str]:
    what = (
        f"{s['facts']} items, {s['context_templates']} context passages"
        if s["shape"] == "contexts"
        else f"{s['relations']} relations, {s['facts']} facts, {s['query_forms']} query forms, "
        f"{s['context_templates']} context templates"
    )
    return [
        f"ingested dataset '{s['dataset']}': {what}, {s['entities']} entities, {s['answers']} answers",
        *([s["left_out"]] if s.get("left_out") else []),
        f"source: {s['source']} (sha256 {s['sha256']})",
    ]


MAPPING_OPTIONS = (
    "shape",
    "item",
    "question",
    "entity",
    "gold",
    "contexts",
    "context_list",
    "context_text",
    "context_label",
    "context_answer",
    "context_type",
    "labels",
    "answer_labels",
    "query_format",
    "closed_format",
    "separator",
    "relation",
    "answer",
    "query_templates",
    "context_templates",
)


def _prepare(path, spec=None, name="table", sha256=None, file=None, **options) -> dict:
    m = mapping(spec, **{k: options.get(k) for k in MAPPING_OPTIONS})
    return {"prepared": prepare_table(read_table(str(path), sha256, file), m, name)}


SEPARATOR_PARAM = Param(
    "separator",
    "--separator",
    "What joins a passage (context) to the query in every prompt: passage + separator + query; "
    "recorded with the dataset. Default: a newline; '' for none; \\n and \\t escapes allowed.",
    metavar="TEXT",
)

SOURCE_PARAMS = (
    Param("path", metavar="FILE|FOLDER|hf://datasets/OWNER/REPO[@REV]/FILE|URL"),
    Param("name", "--name", "Dataset name in the warehouse.", default="table", pattern=DATASET_NAME),
    Param(
        "sha256",
        "--sha256",
        "Expected sha256 of the file; a different file is refused before anything is written.",
        metavar="HEX",
    ),
    Param(
        "file",
        "--file",
        "In a folder (e.g. a Hub dataset download): the data files to read, a glob relative to it (data/dev-*).",
        metavar="GLOB",
    ),
)

SOURCE = ingest_source(
    IngestSource(
        name="table",
        help="Load your own dataset from a table file (CSV, TSV, JSONL, JSON or Parquet: a local file, a "
        "folder such as a Hub dataset download, hf://datasets/... or a URL) with a column mapping given by options "
        "or --spec FILE: templated facts (--shape facts, as yago-qec) or items with fixed context passages "
        "(--shape contexts, scored with `ctxprior sample --design fixed`). See docs/datasets.md.",
        params=SOURCE_PARAMS
        + (
            Param(
                "spec",
                "--spec",
                "A YAML or JSON file of the mapping, keyed by these options' names "
                "(question: q); options given here win.",
                metavar="FILE",
            ),
            Param(
                "shape",
                "--shape",
                "contexts: items with fixed passages (default); facts: templated facts.",
                choices=SHAPES,
            ),
            Param(
                "item",
                "--item",
                "Column of each item's key (default: the row number; rows per passage: the question).",
                metavar="COL",
            ),
            Param(
                "question", "--question", "Column of each item's question (--shape contexts).", metavar="COL"
            ),
            Param(
                "entity",
                "--entity",
                "Column of the entity (facts: required; items: default the question).",
                metavar="COL",
            ),
            Param("gold", "--gold", "Column of each item's gold answer (a list: its first).", metavar="COL"),
            Param(
                "contexts",
                "--context",
                "A passage column per row: TYPE=TEXT_COLUMN[:ANSWER_COLUMN], "
                "e.g. gold=org_context:org_answer; repeatable.",
                metavar="TYPE=COL[:COL]",
                multiple=True,
            ),
            Param(
                "context_list",
                "--context-list",
                "Column holding a list of passage objects (keys: --context-text, --context-label, --context-answer).",
                metavar="COL",
            ),
            Param(
                "context_text",
                "--context-text",
                "Column (or list key) of a passage's text, with a row (or list element) per passage.",
                metavar="COL",
            ),
            Param(
                "context_label",
                "--context-label",
                "Column (or list key) of a passage's label.",
                metavar="COL",
            ),
            Param(
                "context_answer",
                "--context-answer",
                "Column (or list key) of the answer a passage supports (optional).",
                metavar="COL",
            ),
            Param(
                "context_type",
                "--context-type",
                "Column (or list key) of a passage's type, where the data holds it "
                "(default: the type --label maps its label to).",
                metavar="COL",
            ),
            Param(
                "labels",
                "--label",
                "A passage label the mapping knows, kept or mapped to a type: "
                "LABEL or LABEL=TYPE (e.g. supports=gold); repeatable. Another label is an error.",
                metavar="LABEL[=TYPE]",
                multiple=True,
            ),
            Param(
                "answer_labels",
                "--answer-label",
                "An answer of the dataset's answer space (e.g. True, False, None), repeatable: under "
                "the answer-set estimator every open query is scored over these labels (not over its "
                "own gold and passage answers); each gold and passage answer must be one of them.",
                metavar="LABEL",
                multiple=True,
            ),
            Param(
                "query_format",
                "--query-format",
                "The open query form of an item, with {question}. Default: 'Q: {question}\\nA:'.",
                metavar="TEXT",
            ),
            Param(
                "closed_format",
                "--closed-format",
                "The closed query form of an item, with {question} and {answer}; '' (empty) for none, "
                "so items get the open form only. Default: 'Q: {question} Is it {answer}?\\nA:'.",
                metavar="TEXT",
            ),
            SEPARATOR_PARAM,
            Param("relation", "--relation", "Column of each fact's relation (--shape facts).", metavar="COL"),
            Param("answer", "--answer", "Column of each fact's answer (--shape facts).", metavar="COL"),
            Param(
                "query_templates",
                "--query-template",
                "A query template of every relation with {entity} "
                "({answer} too: a closed form) (--shape facts); repeatable.",
                metavar="TEMPLATE",
                multiple=True,
            ),
            Param(
                "context_templates",
                "--context-template",
                "A context template of every relation, TYPE=TEMPLATE "
                "with {entity} and {answer} (--shape facts); repeatable.",
                metavar="TYPE=TEMPLATE",
                multiple=True,
            ),
        ),
        prepare=_prepare,
        load=lambda store, prepared: write_table(store, prepared),
        lines=table_lines,
    )
)
