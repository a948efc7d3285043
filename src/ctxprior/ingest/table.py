"""``ctxprior ingest table SOURCE``: bring your own dataset, in one of two shapes.

The column mapping comes from options or a spec file (``--spec FILE``, YAML or JSON, with the
options' names as keys: ``question: q``; options given on the command line win over the file);
its keys, and so the options and the spec's schema, are declared once in ``table_spec.py``.

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
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..errors import UserError
from ..options import DATASET_NAME
from .builder import Assigned, DatasetBuilder
from .registry import IngestSource, Param, ingest_source
from .table_read import Record, Table, read_table
from .table_spec import MAPPING_PARAMS, Mapping, mapping

_MISSING = object()


class Bad(Exception):
    """A value that is not what the mapping needs: (column, problem); the caller adds the row."""

    def __init__(self, column: str, problem: str):
        super().__init__(problem)
        self.column, self.problem = column, problem


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


def _fixed_rows(built, a: Assigned) -> tuple[dict[str, list], dict[str, list]]:
    """The ``fixed_item`` and ``fixed_context`` columns of ``build_items``' result (item i is
    relation i, its one fact, and a context template per passage), with the ids ``a`` assigned."""
    items: dict[str, list] = defaultdict(list)
    ctx: dict[str, list] = defaultdict(list)
    for i, (it, gold, answers) in enumerate(built):
        fid = a.fact[i][0]
        for k, v in (
            ("fact_id", fid),
            ("dataset_id", a.dataset),
            ("relation_id", a.relation[i]),
            ("item_key", it.key),
            ("source_row", it.row),
            ("question", it.question),
            ("gold_answer_id", a.answer[gold]),
        ):
            items[k].append(v)
        for j, (p, ans, ct) in enumerate(zip(it.passages, answers, a.context_template[i])):
            for k, v in (
                ("context_template_id", ct),
                ("fact_id", fid),
                ("dataset_id", a.dataset),
                ("ordinal", j),
                ("label", p.label),
                ("context_type", p.type),
                ("answer_id", None if ans is None else a.answer[ans]),
                ("source_row", p.row),
                ("text", p.text),
            ):
                ctx[k].append(v)
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
        stats, assigned = p.builder.write_ids(store)
        if p.built is not None:
            items, ctx = _fixed_rows(p.built, assigned)
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


def _prepare(path, spec=None, name="table", sha256=None, file=None, **options) -> dict:
    m = mapping(spec, **options)
    return {"prepared": prepare_table(read_table(str(path), sha256, file), m, name)}


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
        )
        + MAPPING_PARAMS,
        prepare=_prepare,
        load=lambda store, prepared: write_table(store, prepared),
        lines=table_lines,
    )
)
