"""Collects a dataset's normalized rows in memory, then writes them in one transaction via Arrow.

Every source format (yago_qec.json, the bundled case studies, DynamicQA) parses and validates
into a ``DatasetBuilder``; nothing touches the warehouse until ``write`` is called. Ids are
assigned from the warehouse's current maxima, in the order rows were added, so the same input
into the same warehouse state always gets the same ids.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from .. import __version__
from ..errors import UserError
from ..schema.warehouse import Warehouse, utcnow


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def short_relation_name(name: str) -> str:
    """'http://schema.org/about' -> 'about'; 'reverse-http://schema.org/actor' -> 'reverse-actor'."""
    rev = name.startswith("reverse-")
    base = name[len("reverse-"):] if rev else name
    tail = base.rstrip("/").replace("#", "/").rsplit("/", 1)[-1] or base
    return ("reverse-" if rev else "") + tail


def _kb_prefix(name: str) -> str:
    base = name[len("reverse-"):] if name.startswith("reverse-") else name
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


class DatasetBuilder:
    """In-memory rows of one dataset, keyed by natural keys until ids are assigned at write time."""

    def __init__(self, name: str, source_format: str, source_path: str | None = None,
                 source_sha256: str | None = None, description: str | None = None):
        self.name = name
        self.source_format = source_format
        self.source_path = source_path
        self.source_sha256 = source_sha256
        self.description = description
        self.relations: list[RelationRows] = []
        self._entities: dict[tuple, int] = {}  # (name, kind, uri) -> index
        self._entity_class: list[str | None] = []
        self._answers: dict[tuple, int] = {}  # (name, uri) -> index

    # -- building ------------------------------------------------------------------
    def add_relation(self, name: str) -> RelationRows:
        rel = RelationRows(name=name, short_name=short_relation_name(name),
                           is_reverse=name.startswith("reverse-"), position=len(self.relations))
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

    def _dedupe_short_names(self) -> None:
        counts: dict[str, int] = {}
        for r in self.relations:
            counts[r.short_name] = counts.get(r.short_name, 0) + 1
        for r in self.relations:
            if counts[r.short_name] > 1:
                prefix = _kb_prefix(r.name)
                r.short_name = ("reverse-" if r.is_reverse else "") + prefix + ":" + short_relation_name(
                    r.name).removeprefix("reverse-")

    # -- writing -------------------------------------------------------------------
    def write(self, wh: Warehouse) -> dict[str, Any]:
        """Insert every row (call inside ``wh.transaction()``). Returns ids and row counts."""
        if wh.scalar("SELECT count(*) FROM dataset WHERE name = ?", [self.name]):
            raise UserError(
                f"a dataset named '{self.name}' already exists in {wh.path}; "
                "pick another with --name (or drop it first)")
        self._dedupe_short_names()
        ds_id = wh.next_id("dataset", "dataset_id")
        rel0 = wh.next_id("relation", "relation_id")
        ent0 = wh.next_id("entity", "entity_id")
        ans0 = wh.next_id("answer", "answer_id")
        fact0 = wh.next_id("fact", "fact_id")
        qf0 = wh.next_id("query_form", "query_form_id")
        ct0 = wh.next_id("context_template", "context_template_id")

        wh.insert_arrow("dataset", {
            "dataset_id": [ds_id], "name": [self.name], "source_format": [self.source_format],
            "source_path": [self.source_path], "source_sha256": [self.source_sha256],
            "description": [self.description], "ctxprior_version": [__version__],
            "created_at": pa.array([utcnow()], pa.timestamp("us")),
        })
        ents = list(self._entities)
        wh.insert_arrow("entity", {
            "entity_id": pa.array(range(ent0, ent0 + len(ents)), pa.int32()),
            "dataset_id": pa.array([ds_id] * len(ents), pa.int32()),
            "name": [k[0] for k in ents], "kind": [k[1] for k in ents],
            "uri": pa.array([k[2] for k in ents], pa.string()),
            "entity_class": pa.array(self._entity_class, pa.string()),
        })
        answers = list(self._answers)
        wh.insert_arrow("answer", {
            "answer_id": pa.array(range(ans0, ans0 + len(answers)), pa.int32()),
            "dataset_id": pa.array([ds_id] * len(answers), pa.int32()),
            "name": [k[0] for k in answers], "uri": pa.array([k[1] for k in answers], pa.string()),
        })

        rel_cols: dict[str, list] = {k: [] for k in ("relation_id", "dataset_id", "name", "short_name",
                                                     "is_reverse", "position")}
        fact_cols: dict[str, list] = {k: [] for k in (
            "fact_id", "relation_id", "position", "entity_id", "answer_id", "entity_kind", "label",
            "category", "uri_degree", "namesake_degree", "namesake_num_uris", "predicate_degree")}
        qf_cols: dict[str, list] = {k: [] for k in ("query_form_id", "relation_id", "query_type",
                                                    "ordinal", "name", "template")}
        ct_cols: dict[str, list] = {k: [] for k in ("context_template_id", "relation_id", "context_type",
                                                    "ordinal", "template")}
        cls_cols: dict[str, list] = {k: [] for k in ("relation_id", "role", "class_name", "fraction")}
        fid, qid, cid = fact0, qf0, ct0
        for i, r in enumerate(self.relations):
            rid = rel0 + i
            for k, v in (("relation_id", rid), ("dataset_id", ds_id), ("name", r.name),
                         ("short_name", r.short_name), ("is_reverse", r.is_reverse), ("position", r.position)):
                rel_cols[k].append(v)
            for f in r.facts:
                fact_cols["fact_id"].append(fid)
                fid += 1
                fact_cols["relation_id"].append(rid)
                fact_cols["position"].append(f["position"])
                fact_cols["entity_id"].append(ent0 + f["entity"])
                fact_cols["answer_id"].append(None if f.get("answer") is None else ans0 + f["answer"])
                fact_cols["entity_kind"].append(f["kind"])
                for col in ("label", "category", "uri_degree", "namesake_degree", "namesake_num_uris",
                            "predicate_degree"):
                    fact_cols[col].append(f.get(col))
            for qtype, ordinal, tpl in r.query_forms:
                for k, v in (("query_form_id", qid), ("relation_id", rid), ("query_type", qtype),
                             ("ordinal", ordinal), ("name", f"{qtype}_{ordinal}"), ("template", tpl)):
                    qf_cols[k].append(v)
                qid += 1
            for ctype, ordinal, tpl in r.context_templates:
                for k, v in (("context_template_id", cid), ("relation_id", rid), ("context_type", ctype),
                             ("ordinal", ordinal), ("template", tpl)):
                    ct_cols[k].append(v)
                cid += 1
            for role, cname, frac in r.classes:
                for k, v in (("relation_id", rid), ("role", role), ("class_name", cname), ("fraction", frac)):
                    cls_cols[k].append(v)

        int_cols = {"uri_degree", "namesake_degree", "namesake_num_uris", "predicate_degree"}
        wh.insert_arrow("relation", pa.table(rel_cols))
        wh.insert_arrow("fact", pa.table({
            k: pa.array(v, pa.int64() if k in int_cols else (pa.int32() if k.endswith("_id") or k == "position"
                                                               else pa.string()))
            for k, v in fact_cols.items()}))
        wh.insert_arrow("query_form", pa.table({k: pa.array(v) for k, v in qf_cols.items()}))
        wh.insert_arrow("context_template", pa.table({k: pa.array(v) for k, v in ct_cols.items()}))
        if cls_cols["relation_id"]:
            wh.insert_arrow("relation_class", pa.table({
                "relation_id": pa.array(cls_cols["relation_id"], pa.int32()),
                "role": cls_cols["role"], "class_name": cls_cols["class_name"],
                "fraction": pa.array(cls_cols["fraction"], pa.float64())}))
        return {
            "dataset_id": ds_id, "dataset": self.name, "relations": len(self.relations),
            "entities": len(ents), "answers": len(answers), "facts": fid - fact0,
            "query_forms": qid - qf0, "context_templates": cid - ct0,
        }
