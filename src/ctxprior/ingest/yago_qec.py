"""Ingest the paper authors' ``yago_qec.json`` (METHOD.md §2), fully validated before any write.

Format: a dict keyed by relation id (``http://schema.org/X``, ``http://yago-knowledge.org/resource/X``,
optionally prefixed ``reverse-``). Per relation: ``query_forms`` {open: [...], closed: [...]};
aligned lists ``entities``, ``answers``, ``entity_uris``, ``answer_uris``, ``gpt_fake_entities``;
``context_templates`` {type: template or null}; ``entity_types`` / ``answer_types`` {class: fraction};
aligned int lists ``entity_uri_to_degree``, ``entity_namesake_to_degree``,
``entity_namesake_to_num_uris``, ``entity_uri_to_predicate_degree``. ctxprior's own demo file
may add ``entity_classes`` / ``fake_entity_classes`` (aligned class names).

Real entities become entities of kind ``real``; GPT-4 fakes become kind ``fake`` and borrow the
answer of the real entity at the same index (a fact with the same ``position``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import check_input, read_input
from ..options import DATASET_NAME
from .builder import DatasetBuilder, RelationRows, short_relation_name
from .registry import IngestSource, Param, ingest_source
from .sources import discard_download, resolve_file

DEGREE_KEYS = {
    "entity_uri_to_degree": "uri_degree",
    "entity_namesake_to_degree": "namesake_degree",
    "entity_namesake_to_num_uris": "namesake_num_uris",
    "entity_uri_to_predicate_degree": "predicate_degree",
}
ALIGNED_STR_KEYS = (
    "answers",
    "entity_uris",
    "answer_uris",
    "gpt_fake_entities",
    "entity_classes",
    "fake_entity_classes",
)


def read_json_file(path: str | Path, label: str | None = None) -> Any:
    """Read a JSON file with one-line errors (naming ``label``, default the path) for the usual
    ways a file is broken."""
    p = Path(path)
    path = label or path
    if not p.exists():
        raise UserError(f"{path}: no such file")
    if p.is_dir():
        raise UserError(f"{path}: is a directory, expected a JSON file")
    check_input(p, str(path) if str(path) != str(p) else "")  # never the warehouse: ctxprior/inputs.py
    raw = read_input(p, str(path) if str(path) != str(p) else "")  # a regular file, never blocks
    if not raw.strip():
        raise UserError(f"{path}: file is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        what = "truncated JSON" if e.pos >= len(text.rstrip()) else "malformed JSON"
        msg = e.msg[:-3] if e.msg.endswith(" at") else e.msg  # "Unterminated string starting at"
        raise UserError(f"{path}: {what} ({msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply to read") from None
    except ValueError:  # Python's limit on the digits of an int (4300)
        raise UserError(f"{path}: holds an integer too long to read (over 4300 digits)") from None


class _Check:
    """Validation helpers that name the file and the JSON path of the problem."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, where: str, problem: str) -> None:
        raise UserError(f"{self.path}: {where}: {problem}")

    def dict_(self, v: Any, where: str) -> dict:
        if not isinstance(v, dict):
            self.fail(where, f"expected an object, got {type(v).__name__}")
        return v

    def str_list(self, v: Any, where: str, allow_none: bool = False) -> list:
        if not isinstance(v, list):
            self.fail(where, f"expected a list, got {type(v).__name__}")
        for i, x in enumerate(v):
            if x is None and allow_none:
                continue
            if not isinstance(x, str):
                self.fail(f"{where}[{i}]", f"expected a string, got {type(x).__name__}")
        return v

    def int_list(self, v: Any, where: str) -> list:
        if not isinstance(v, list):
            self.fail(where, f"expected a list, got {type(v).__name__}")
        for i, x in enumerate(v):
            if x is not None and (isinstance(x, bool) or not isinstance(x, int)):
                self.fail(f"{where}[{i}]", f"expected an integer, got {type(x).__name__}")
        return v

    def template(self, v: Any, where: str, need: Iterable[str]) -> str:
        if not isinstance(v, str):
            self.fail(where, f"expected a template string, got {type(v).__name__}")
        for ph in need:
            if "{" + ph + "}" not in v:
                self.fail(where, f"template {v!r} has no {{{ph}}} placeholder")
        try:
            v.format(entity="e", answer="a")
        except (KeyError, IndexError, ValueError) as e:
            self.fail(where, f"template {v!r} has an unknown or broken placeholder ({e})")
        return v


def resolve_relations(available: list[str], wanted: Iterable[str] | None, source: str) -> list[str]:
    """Map user-given relation names (full ids or short names) to ids; unknown -> UserError."""
    if not wanted:
        return available
    by_short: dict[str, list[str]] = {}
    for r in available:
        by_short.setdefault(short_relation_name(r), []).append(r)
    out: list[str] = []
    for w in wanted:
        if w in available:
            hits = [w]
        else:
            hits = by_short.get(w, [])
        if not hits:
            near = difflib.get_close_matches(w, list(by_short), n=3, cutoff=0.6)
            hint = (
                f"; did you mean {', '.join(near)}?" if near else f"; {source} has {len(available)} relations"
            )
            raise UserError(f"unknown relation '{w}' in {source}{hint}")
        if len(hits) > 1:
            raise UserError(f"relation '{w}' is ambiguous in {source}: {', '.join(hits)}; use the full id")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def parse_yago_qec(
    path: str | Path,
    name: str = "yago_qec",
    relations: Iterable[str] | None = None,
    source_format: str = "yago_qec",
    description: str | None = None,
    data: Any = None,
    origin: str | None = None,
    sha256: str | None = None,
    label: str | None = None,
) -> DatasetBuilder:
    """Validate the whole file and return the rows to write (nothing is written here).

    ``origin`` (recorded as ``dataset.source_path``) defaults to the file's absolute path,
    ``sha256`` to the file's hash, and ``label`` (the name errors use) to the path."""
    local = str(path)
    path = label or local
    data = read_json_file(local, path) if data is None else data
    chk = _Check(path)
    keep = _relations_to_keep(data, relations, path)
    if sha256 is None and Path(local).exists():
        sha256 = sha256_file(local)
    b = DatasetBuilder(
        name,
        source_format,
        source_path=origin or str(Path(local).resolve()),
        source_sha256=sha256,
        description=description,
        separator="",  # the paper's context templates end in "\n" (METHOD.md §1)
    )
    for rel_name in keep:
        _parse_relation(b, chk, rel_name, data[rel_name])
    return b


def _relations_to_keep(data: Any, relations: Iterable[str] | None, path: str) -> list[str]:
    """Check the top level (a non-empty object keyed by relation id); return the relations to read."""
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object keyed by relation id, got {type(data).__name__}")
    if not data:
        raise UserError(f"{path}: no relations in the file")
    return resolve_relations(list(data), relations, path)


def _parse_relation(b: DatasetBuilder, chk: _Check, rel_name: str, raw: Any) -> None:
    """Validate one relation's entry and add its relation, templates, classes and facts to ``b``."""
    rd = chk.dict_(raw, rel_name)
    for req in ("query_forms", "entities", "answers", "context_templates"):
        if req not in rd:
            chk.fail(rel_name, f"missing key '{req}'")
    entities, lists, degrees = _aligned_lists(chk, rel_name, rd)
    forms = _parse_query_forms(chk, rel_name, rd["query_forms"])
    templates = _parse_context_templates(chk, rel_name, rd["context_templates"])
    rel = b.add_relation(rel_name)
    rel.query_forms = forms
    rel.context_templates = templates
    _add_classes(chk, rel_name, rd, rel)
    _add_facts(b, rel, entities, lists.get("answers", rd["answers"]), lists, degrees)


def _aligned_lists(chk: _Check, rel_name: str, rd: dict) -> tuple[list, dict[str, list], dict[str, list]]:
    """The entity names, the string lists aligned with them (by key) and the degree lists (by
    ``fact`` column), each checked to have one item per entity."""
    entities = chk.str_list(rd["entities"], f"{rel_name}.entities")
    n = len(entities)
    if n == 0:
        chk.fail(f"{rel_name}.entities", "empty list")
    lists: dict[str, list] = {}
    for key in ALIGNED_STR_KEYS:
        if rd.get(key) is None:
            continue
        lists[key] = chk.str_list(
            rd[key], f"{rel_name}.{key}", allow_none=key.endswith("uris") or "classes" in key
        )
        if len(lists[key]) != n:
            chk.fail(f"{rel_name}.{key}", f"has {len(lists[key])} items but entities has {n}")
    degrees: dict[str, list] = {}
    for key, col in DEGREE_KEYS.items():
        if rd.get(key) is None:
            continue
        degrees[col] = chk.int_list(rd[key], f"{rel_name}.{key}")
        if len(degrees[col]) != n:
            chk.fail(f"{rel_name}.{key}", f"has {len(degrees[col])} items but entities has {n}")
    return entities, lists, degrees


def _parse_query_forms(chk: _Check, rel_name: str, raw: Any) -> list[tuple[str, int, str]]:
    """The relation's open and closed query forms as (type, ordinal, template); at least one."""
    qf = chk.dict_(raw, f"{rel_name}.query_forms")
    forms: list[tuple[str, int, str]] = []
    for qtype in ("open", "closed"):
        lst = qf.get(qtype) or []
        chk.str_list(lst, f"{rel_name}.query_forms.{qtype}")
        need = ("entity", "answer") if qtype == "closed" else ("entity",)
        for i, t in enumerate(lst):
            forms.append((qtype, i, chk.template(t, f"{rel_name}.query_forms.{qtype}[{i}]", need)))
    unknown_qf = set(qf) - {"open", "closed"}
    if unknown_qf:
        chk.fail(
            f"{rel_name}.query_forms", f"unknown query type(s) {sorted(unknown_qf)}; expected open, closed"
        )
    if not forms:
        chk.fail(f"{rel_name}.query_forms", "no query forms")
    return forms


def _parse_context_templates(chk: _Check, rel_name: str, raw: Any) -> list[tuple[str, int, str]]:
    """The relation's context templates as (type, ordinal, template); a type may hold one template,
    a list of them or null (skipped). At least one."""
    ctpl = chk.dict_(raw, f"{rel_name}.context_templates")
    templates: list[tuple[str, int, str]] = []
    for ctype, t in ctpl.items():
        if t is None:
            continue  # e.g. negation could not be generated for this relation
        items = t if isinstance(t, list) else [t]
        for i, ti in enumerate(items):
            templates.append(
                (ctype, i, chk.template(ti, f"{rel_name}.context_templates.{ctype}", ("entity", "answer")))
            )
    if not templates:
        chk.fail(f"{rel_name}.context_templates", "no context templates")
    return templates


def _add_classes(chk: _Check, rel_name: str, rd: dict, rel: RelationRows) -> None:
    """Add the entity and answer type fractions (``entity_types`` / ``answer_types``) to ``rel``."""
    for role, key in (("entity", "entity_types"), ("answer", "answer_types")):
        if rd.get(key) is None:
            continue
        for cname, frac in chk.dict_(rd[key], f"{rel_name}.{key}").items():
            if isinstance(frac, bool) or not isinstance(frac, (int, float)):
                chk.fail(f"{rel_name}.{key}.{cname}", f"expected a number, got {type(frac).__name__}")
            rel.classes.append((role, cname, float(frac)))


def _add_facts(
    b: DatasetBuilder,
    rel: RelationRows,
    entities: list,
    answers: list,
    lists: dict[str, list],
    degrees: dict[str, list],
) -> None:
    """Add a fact per real entity (with its degrees), then one per GPT fake, which borrows the
    answer of the real entity at its position."""
    n = len(entities)
    ans_uris = lists.get("answer_uris", [None] * n)
    ent_uris = lists.get("entity_uris", [None] * n)
    ent_cls = lists.get("entity_classes", [None] * n)
    for i in range(n):
        a = b.answer(answers[i], ans_uris[i])
        e = b.entity(entities[i], "real", ent_uris[i], ent_cls[i])
        fact = {"entity": e, "answer": a, "kind": "real", "position": i}
        for col, vals in degrees.items():
            fact[col] = vals[i]
        rel.facts.append(fact)
    fakes = lists.get("gpt_fake_entities")
    if fakes is not None:
        fake_cls = lists.get("fake_entity_classes", [None] * n)
        for i in range(n):
            if fakes[i] is None or fakes[i] == "":
                continue
            a = b.answer(answers[i], ans_uris[i])
            e = b.entity(fakes[i], "fake", None, fake_cls[i])
            rel.facts.append({"entity": e, "answer": a, "kind": "fake", "position": i})


def load_yago_qec(
    spec: str | Path,
    name: str = "yago_qec",
    relations: Iterable[str] | None = None,
    sha256: str | None = None,
) -> DatasetBuilder:
    """Fetch (local path, ``hf://datasets/OWNER/REPO[@REV]/PATH`` or http(s) URL; see
    ``ingest.sources``), check ``sha256`` when given, and validate; nothing is written."""
    src = resolve_file(str(spec), sha256)
    try:
        data = read_json_file(src.path, str(spec))
    except UserError as e:  # an unreadable download is not kept: the next run fetches it again
        recover = discard_download(str(spec)) if src.sha256 is not None and sha256 is None else None
        raise UserError(f"{e}; {recover}" if recover else str(e)) from None
    return parse_yago_qec(
        src.path,
        name=name,
        relations=relations,
        data=data,
        origin=src.origin,
        sha256=src.sha256,
        label=str(spec),
    )


def write_yago_qec(store, builder: DatasetBuilder) -> dict[str, Any]:
    """Write an already validated file (``parse_yago_qec``) in one transaction."""
    with store.transaction():
        stats = builder.write(store)
        _register_degrees(store, stats["dataset_id"])
    return stats


def _register_degrees(store, dataset_id: int) -> None:
    """Degrees that came with the file are a covariate too (when the covariates module is there)."""
    try:
        from ..covariates import register_fact_degrees
    except ImportError:
        return
    register_fact_degrees(store, dataset_id)


def _prepare_source(path, name: str = "yago_qec", relations=(), sha256: str | None = None) -> dict:
    """Fetched and validated before the warehouse is opened (``load_yago_qec``)."""
    return {"builder": load_yago_qec(str(path), name=name, relations=relations or None, sha256=sha256)}


def _load_source(store, builder: DatasetBuilder) -> dict[str, Any]:
    return {**write_yago_qec(store, builder), "source": builder.source_path, "sha256": builder.source_sha256}


def _source_lines(s: dict[str, Any]) -> list[str]:
    return [
        f"ingested dataset '{s['dataset']}': {s['relations']} relations, {s['facts']} facts, "
        f"{s['entities']} entities, {s['answers']} answers, {s['query_forms']} query forms, "
        f"{s['context_templates']} context templates",
        f"source: {s['source']} (sha256 {s['sha256']})",
    ]


SOURCE = ingest_source(
    IngestSource(
        name="yago-qec",
        help="Load the paper authors' yago_qec.json (relations, real + GPT-4 fake entities, query forms, "
        "context templates, URIs, class fractions and degrees) from a local file, a Hub dataset file or "
        "an http(s) URL (downloaded into the Hugging Face cache; its sha256 is recorded).",
        params=(
            Param("path", metavar="PATH|hf://datasets/OWNER/REPO[@REV]/FILE|URL"),
            Param(
                "name", "--name", "Dataset name in the warehouse.", default="yago_qec", pattern=DATASET_NAME
            ),
            Param(
                "relations",
                "--relation",
                "Load only this relation (full id or short name, e.g. capital); repeatable.",
                metavar="R",
                multiple=True,
            ),
            Param(
                "sha256",
                "--sha256",
                "Expected sha256 of the file; a different file is refused before anything is written.",
                metavar="HEX",
            ),
        ),
        prepare=_prepare_source,
        load=_load_source,
        lines=_source_lines,
    )
)
