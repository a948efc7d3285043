"""Collects a dataset's normalized rows in memory, then writes them in one transaction via Arrow.

Every source format (yago_qec.json, the bundled case studies, DynamicQA) parses and validates
into a ``DatasetBuilder``; nothing touches the warehouse until ``write`` is called. Ids are
assigned from the warehouse's current maxima, in the order rows were added, so the same input
into the same warehouse state always gets the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..errors import UserError
from ..storage.store import Store, utcnow
from ..version import __version__

# fact columns copied from the builder's fact dicts as they are (None when absent)
_FACT_EXTRAS = ("label", "category", "uri_degree", "namesake_degree", "namesake_num_uris", "predicate_degree")


def short_relation_name(name: str) -> str:
    """'http://schema.org/about' -> 'about'; 'reverse-http://schema.org/actor' -> 'reverse-actor'."""
    rev = name.startswith("reverse-")
    base = name[len("reverse-") :] if rev else name
    tail = base.rstrip("/").replace("#", "/").rsplit("/", 1)[-1] or base
    return ("reverse-" if rev else "") + tail


def _kb_prefix(name: str) -> str:
    base = name[len("reverse-") :] if name.startswith("reverse-") else name
    if "schema.org" in base:
        return "schema"
    if "yago-knowledge.org" in base:
        return "yago"
    host = base.split("//", 1)[-1].split("/", 1)[0]
    return host.split(".")[0] or "rel"


@dataclass
class RelationRows:
    name: str
    short_name: str
    is_reverse: bool
    position: int
    facts: list[dict] = field(default_factory=list)  # entity key, answer key, kind, position, extras
    query_forms: list[tuple[str, int, str]] = field(default_factory=list)  # (type, ordinal, template)
    context_templates: list[tuple[str, int, str]] = field(default_factory=list)
    classes: list[tuple[str, str, float]] = field(default_factory=list)  # (role, class, fraction)


@dataclass(frozen=True)
class Assigned:
    """The ids :meth:`DatasetBuilder.write_ids` gave the rows: entities and answers by builder
    index, relations in the order added, and per relation its facts', query forms' and context
    templates' ids in the order added."""

    dataset: int
    entity: list[int]
    answer: list[int]
    relation: list[int]
    fact: list[list[int]]
    query_form: list[list[int]]
    context_template: list[list[int]]


SEPARATOR = "\n"
"""What joins a context (a passage) to the query in every prompt, ``context + separator + query``,
unless a source's own format says otherwise (yago-qec's, the case studies', build-dataset's and
DynamicQA's contexts end in their own newline, as the paper writes them: their datasets record '').
Stored in ``dataset.separator``; ``ingest table --separator`` (and its presets) sets it."""


class DatasetBuilder:
    """In-memory rows of one dataset, keyed by natural keys until ids are assigned at write time."""

    def __init__(
        self,
        name: str,
        source_format: str,
        source_path: str | None = None,
        source_sha256: str | None = None,
        description: str | None = None,
        separator: str = SEPARATOR,
    ):
        self.name = name
        self.source_format = source_format
        self.source_path = source_path
        self.source_sha256 = source_sha256
        self.description = description
        self.separator = separator
        self.relations: list[RelationRows] = []
        self._entities: dict[tuple, int] = {}  # (name, kind, uri) -> index
        self._entity_class: list[str | None] = []
        self._answers: dict[tuple, int] = {}  # (name, uri) -> index

    # -- building ------------------------------------------------------------------
    def add_relation(self, name: str) -> RelationRows:
        rel = RelationRows(
            name=name,
            short_name=short_relation_name(name),
            is_reverse=name.startswith("reverse-"),
            position=len(self.relations),
        )
        self.relations.append(rel)
        return rel

    def entity(self, name: str, kind: str, uri: str | None = None, entity_class: str | None = None) -> int:
        key = (name, kind, uri)
        idx = self._entities.get(key)
        if idx is None:
            idx = self._entities[key] = len(self._entities)
            self._entity_class.append(entity_class)
        elif entity_class and not self._entity_class[idx]:
            self._entity_class[idx] = entity_class
        return idx

    def answer(self, name: str, uri: str | None = None) -> int:
        key = (name, uri)
        idx = self._answers.get(key)
        if idx is None:
            idx = self._answers[key] = len(self._answers)
        return idx

    def answer_names(self) -> list[str]:
        """The answers' names by builder index."""
        return [name for name, _ in sorted(self._answers, key=self._answers.__getitem__)]

    def _dedupe_short_names(self) -> None:
        counts: dict[str, int] = {}
        for r in self.relations:
            counts[r.short_name] = counts.get(r.short_name, 0) + 1
        for r in self.relations:
            if counts[r.short_name] > 1:
                prefix = _kb_prefix(r.name)
                r.short_name = (
                    ("reverse-" if r.is_reverse else "")
                    + prefix
                    + ":"
                    + short_relation_name(r.name).removeprefix("reverse-")
                )

    # -- writing -------------------------------------------------------------------
    def write(self, store: Store) -> dict[str, Any]:
        """Insert every row (call inside ``store.transaction()``). Returns ids and row counts."""
        return self.write_ids(store)[0]

    def write_ids(self, store: Store) -> tuple[dict[str, Any], Assigned]:
        """:meth:`write`, and the ids it assigned to the rows (:class:`Assigned`)."""
        self._check_name_free(store)
        self._dedupe_short_names()
        ids = _first_ids(store)
        ds_id = ids["dataset"]
        self._insert_dataset(store, ds_id)
        self._insert_entities(store, ds_id, ids["entity"])
        self._insert_answers(store, ds_id, ids["answer"])
        cols = self._relation_columns(ids)
        _insert_relation_rows(store, cols)
        rids = cols["relation"]["relation_id"]
        stats = {
            "dataset_id": ds_id,
            "dataset": self.name,
            "relations": len(self.relations),
            "entities": len(self._entities),
            "answers": len(self._answers),
            "facts": len(cols["fact"]["fact_id"]),
            "query_forms": len(cols["query_form"]["query_form_id"]),
            "context_templates": len(cols["context_template"]["context_template_id"]),
        }
        return stats, Assigned(
            ds_id,
            list(range(ids["entity"], ids["entity"] + len(self._entities))),
            list(range(ids["answer"], ids["answer"] + len(self._answers))),
            rids,
            *(_per_relation(rids, cols[t], f"{t}_id") for t in ("fact", "query_form", "context_template")),
        )

    def _check_name_free(self, store: Store) -> None:
        """Refuse a dataset name that the warehouse already has."""
        if store.scalar("SELECT count(*) FROM dataset WHERE name = ?", [self.name]):
            raise UserError(
                f"a dataset named '{self.name}' already exists in {store.path}; "
                "pick another with --name (or drop it first)"
            )

    def _insert_dataset(self, store: Store, ds_id: int) -> None:
        """Insert the ``dataset`` row."""
        store.insert_arrow(
            "dataset",
            {
                "dataset_id": [ds_id],
                "name": [self.name],
                "source_format": [self.source_format],
                "source_path": [self.source_path],
                "source_sha256": [self.source_sha256],
                "description": [self.description],
                "separator": [self.separator],
                "ctxprior_version": [__version__],
                "created_at": pa.array([utcnow()], pa.timestamp("us")),
            },
        )

    def _insert_entities(self, store: Store, ds_id: int, ent0: int) -> None:
        """Insert the entities, in the order they were added, with ids from ``ent0``."""
        ents = list(self._entities)
        store.insert_arrow(
            "entity",
            {
                "entity_id": pa.array(range(ent0, ent0 + len(ents)), pa.int32()),
                "dataset_id": pa.array([ds_id] * len(ents), pa.int32()),
                "name": [k[0] for k in ents],
                "kind": [k[1] for k in ents],
                "uri": pa.array([k[2] for k in ents], pa.string()),
                "entity_class": pa.array(self._entity_class, pa.string()),
            },
        )

    def _insert_answers(self, store: Store, ds_id: int, ans0: int) -> None:
        """Insert the answers, in the order they were added, with ids from ``ans0``."""
        answers = list(self._answers)
        store.insert_arrow(
            "answer",
            {
                "answer_id": pa.array(range(ans0, ans0 + len(answers)), pa.int32()),
                "dataset_id": pa.array([ds_id] * len(answers), pa.int32()),
                "name": [k[0] for k in answers],
                "uri": pa.array([k[1] for k in answers], pa.string()),
            },
        )

    def _relation_columns(self, ids: dict[str, int]) -> dict[str, dict[str, list]]:
        """The columns of the ``relation``, ``fact``, ``query_form``, ``context_template`` and
        ``relation_class`` rows (keyed by table), with ids assigned from ``ids`` in relation order."""
        cols: dict[str, dict[str, list]] = {
            t: {k: [] for k in names}
            for t, names in (
                ("relation", ("relation_id", "dataset_id", "name", "short_name", "is_reverse", "position")),
                (
                    "fact",
                    ("fact_id", "relation_id", "position", "entity_id", "answer_id", "entity_kind")
                    + _FACT_EXTRAS,
                ),
                ("query_form", ("query_form_id", "relation_id", "query_type", "ordinal", "name", "template")),
                (
                    "context_template",
                    ("context_template_id", "relation_id", "context_type", "ordinal", "template"),
                ),
                ("relation_class", ("relation_id", "role", "class_name", "fraction")),
            )
        }
        for i, r in enumerate(self.relations):
            rid = ids["relation"] + i
            for k, v in (
                ("relation_id", rid),
                ("dataset_id", ids["dataset"]),
                ("name", r.name),
                ("short_name", r.short_name),
                ("is_reverse", r.is_reverse),
                ("position", r.position),
            ):
                cols["relation"][k].append(v)
            _add_fact_rows(cols["fact"], r, rid, ids["fact"], ids["entity"], ids["answer"])
            _add_template_rows(
                cols["query_form"],
                cols["context_template"],
                r,
                rid,
                ids["query_form"],
                ids["context_template"],
            )
            for role, cname, frac in r.classes:
                for key, val in (
                    ("relation_id", rid),
                    ("role", role),
                    ("class_name", cname),
                    ("fraction", frac),
                ):
                    cols["relation_class"][key].append(val)
        return cols


def _first_ids(store: Store) -> dict[str, int]:
    """The first free id of each table a dataset writes, keyed by table."""
    return {
        t: store.next_id(t, f"{t}_id")
        for t in ("dataset", "relation", "entity", "answer", "fact", "query_form", "context_template")
    }


def _per_relation(rids: list[int], cols: dict[str, list], id_col: str) -> list[list[int]]:
    """The ids in ``cols[id_col]`` grouped by their row's relation (in ``rids``' order)."""
    out: dict[int, list[int]] = {rid: [] for rid in rids}
    for rid, i in zip(cols["relation_id"], cols[id_col]):
        out[rid].append(i)
    return list(out.values())


def _add_fact_rows(
    fact_cols: dict[str, list], r: RelationRows, rid: int, fact0: int, ent0: int, ans0: int
) -> None:
    """Append one relation's facts to the ``fact`` columns (ids continue from the rows already there)."""
    for f in r.facts:
        fact_cols["fact_id"].append(fact0 + len(fact_cols["fact_id"]))
        fact_cols["relation_id"].append(rid)
        fact_cols["position"].append(f["position"])
        fact_cols["entity_id"].append(ent0 + f["entity"])
        fact_cols["answer_id"].append(None if f.get("answer") is None else ans0 + f["answer"])
        fact_cols["entity_kind"].append(f["kind"])
        for col in _FACT_EXTRAS:
            fact_cols[col].append(f.get(col))


def _add_template_rows(
    qf_cols: dict[str, list], ct_cols: dict[str, list], r: RelationRows, rid: int, qf0: int, ct0: int
) -> None:
    """Append one relation's query forms and context templates to their columns (ids continue from
    the rows already there)."""
    for qtype, ordinal, tpl in r.query_forms:
        for k, v in (
            ("query_form_id", qf0 + len(qf_cols["query_form_id"])),
            ("relation_id", rid),
            ("query_type", qtype),
            ("ordinal", ordinal),
            ("name", f"{qtype}_{ordinal}"),
            ("template", tpl),
        ):
            qf_cols[k].append(v)
    for ctype, ordinal, tpl in r.context_templates:
        for k, v in (
            ("context_template_id", ct0 + len(ct_cols["context_template_id"])),
            ("relation_id", rid),
            ("context_type", ctype),
            ("ordinal", ordinal),
            ("template", tpl),
        ):
            ct_cols[k].append(v)


def _insert_relation_rows(store: Store, cols: dict[str, dict[str, list]]) -> None:
    """Insert the relations, facts, query forms, context templates and (when any) relation classes."""
    int_cols = {"uri_degree", "namesake_degree", "namesake_num_uris", "predicate_degree"}
    store.insert_arrow("relation", pa.table(cols["relation"]))
    store.insert_arrow(
        "fact",
        pa.table(
            {
                k: pa.array(
                    v,
                    pa.int64()
                    if k in int_cols
                    else (pa.int32() if k.endswith("_id") or k == "position" else pa.string()),
                )
                for k, v in cols["fact"].items()
            }
        ),
    )
    store.insert_arrow("query_form", pa.table({k: pa.array(v) for k, v in cols["query_form"].items()}))
    store.insert_arrow(
        "context_template", pa.table({k: pa.array(v) for k, v in cols["context_template"].items()})
    )
    cls_cols = cols["relation_class"]
    if cls_cols["relation_id"]:
        store.insert_arrow(
            "relation_class",
            pa.table(
                {
                    "relation_id": pa.array(cls_cols["relation_id"], pa.int32()),
                    "role": cls_cols["role"],
                    "class_name": cls_cols["class_name"],
                    "fraction": pa.array(cls_cols["fraction"], pa.float64()),
                }
            ),
        )
