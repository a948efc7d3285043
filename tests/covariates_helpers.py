"""Helpers for the covariate tests: a tiny warehouse built with insert_arrow, corpus writers,
and an independent (slow, obviously correct) co-occurrence oracle."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import zstandard

from ctxprior.storage import open_store

YAGO = "http://yago-knowledge.org/resource/"

# (relation, entity, answer, kind, entity_uri)
FACTS = [
    ("capital", "France", "Paris", "real", YAGO + "France"),
    ("reverse-capital", "Paris", "France", "real", YAGO + "Paris"),
    ("birthPlace", "Paris Hilton", "New York", "real", YAGO + "Paris_Hilton"),
    ("capital", "U.S.", "Washington, D.C.", "real", YAGO + "United_States"),
    ("headquarters", "Apple", "Cupertino", "real", YAGO + "Apple_Inc."),
    ("capital", "Zorbania", "Paris", "fake", None),
    ("capital", "Hilton", "Hilton", "real", YAGO + "Hilton"),
    ("capital", "!!!", "Paris", "real", None),
]


def build_warehouse(db_path: str, facts=FACTS, dataset: str = "toy", wh=None) -> None:
    """Insert dataset / relation / entity / answer / fact rows for ``facts``."""
    own = wh is None
    wh = wh or open_store(db_path)
    try:
        with wh.transaction():
            did = wh.next_id("dataset", "dataset_id")
            wh.insert_arrow(
                "dataset",
                {
                    "dataset_id": [did],
                    "name": [dataset],
                    "source_format": ["demo"],
                    "ctxprior_version": ["test"],
                    "created_at": [datetime(2024, 1, 1)],
                },
            )
            rel_ids, ent_ids, ans_ids = {}, {}, {}
            r0, e0, a0, f0 = (
                wh.next_id(t, c)
                for t, c in [
                    ("relation", "relation_id"),
                    ("entity", "entity_id"),
                    ("answer", "answer_id"),
                    ("fact", "fact_id"),
                ]
            )
            rows = {"relation": [], "entity": [], "answer": [], "fact": []}
            for i, (rel, ent, ans, kind, uri) in enumerate(facts):
                if rel not in rel_ids:
                    rel_ids[rel] = r0 + len(rel_ids)
                    base = rel.removeprefix("reverse-")
                    rows["relation"].append(
                        {
                            "relation_id": rel_ids[rel],
                            "dataset_id": did,
                            "name": ("reverse-" if rel.startswith("reverse-") else "") + YAGO + base,
                            "short_name": rel,
                            "is_reverse": rel.startswith("reverse-"),
                            "position": len(rel_ids),
                        }
                    )
                if (ent, kind, uri) not in ent_ids:
                    ent_ids[(ent, kind, uri)] = e0 + len(ent_ids)
                    rows["entity"].append(
                        {
                            "entity_id": ent_ids[(ent, kind, uri)],
                            "dataset_id": did,
                            "name": ent,
                            "kind": kind,
                            "uri": uri,
                        }
                    )
                if ans is not None and ans not in ans_ids:
                    ans_ids[ans] = a0 + len(ans_ids)
                    rows["answer"].append(
                        {
                            "answer_id": ans_ids[ans],
                            "dataset_id": did,
                            "name": ans,
                            "uri": YAGO + ans.replace(" ", "_"),
                        }
                    )
                rows["fact"].append(
                    {
                        "fact_id": f0 + i,
                        "relation_id": rel_ids[rel],
                        "position": i,
                        "entity_id": ent_ids[(ent, kind, uri)],
                        "answer_id": ans_ids.get(ans),
                        "entity_kind": kind,
                    }
                )
            import pandas as pd

            for t in ("relation", "entity", "answer", "fact"):
                wh.insert_arrow(t, pd.DataFrame(rows[t]))
    finally:
        if own:
            wh.close()


def write_jsonl(path: Path, records: list, raw_lines: dict[int, str] | None = None) -> Path:
    """records: dicts (or raw strings) one per line; ``.zst`` / ``.gz`` by suffix."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    data = ("\n".join(lines) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".zst"):
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    elif path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


# -- oracle ------------------------------------------------------------------------------------
def _words(text: str, ignore_case: bool, punctuation: str) -> list[str]:
    import string
    import unicodedata

    out = []
    for ch in text.lower() if ignore_case else text:
        if ch.isspace():
            out.append(" ")
        elif ch in string.punctuation or unicodedata.category(ch).startswith("P"):
            out.append("" if punctuation == "delete" else " ")
        elif ch != "\x00":
            out.append(ch)
    return "".join(out).split()


def _occurrences(doc: list[str], name: list[str]) -> list[tuple[int, int]]:
    m = len(name)
    return [(i, i + m - 1) for i in range(len(doc) - m + 1) if doc[i : i + m] == name]


def oracle(
    docs: list[str],
    entity: str,
    answer: str,
    window: int,
    ignore_case: bool = False,
    punctuation: str = "delete",
) -> tuple[int, int, int]:
    """(cooccurrence, entity_count, answer_count) by brute force over word lists."""
    e = _words(entity, ignore_case, punctuation)
    a = _words(answer, ignore_case, punctuation)
    co = ne = na = 0
    for d in docs:
        w = _words(d, ignore_case, punctuation)
        oe, oa = _occurrences(w, e), _occurrences(w, a)
        ne += len(oe)
        na += len(oa)
        pairs = set()
        for x in oe:
            for y in oa:
                first, second = (x, y) if x[0] <= y[0] else (y, x)
                if x != y and 1 <= second[0] - first[1] <= window:
                    pairs.add(frozenset([x, y]))
        co += len(pairs)
    return co, ne, na


def count_texts(spec, texts: list[str]):
    """Count a list of documents in one go, as ``covariates/worker.py`` counts a shard."""
    from ctxprior.covariates.counting import Counter

    ctr = Counter(spec)
    ctr.add_texts(texts)
    return ctr.counts
