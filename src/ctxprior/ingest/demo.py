"""The bundled demo: a small yago_qec-format dataset of real facts (``demo``) and the paper's two
case studies as their own datasets: friend–enemy pairs (``friend_enemy``, Table 1) and the
gender-bias lists (``gender``, App. G.2.1).

Case-study mapping onto the warehouse's tables:
- friend_enemy: one relation ``friend_enemy``; a pair is a fact (entity = first name, answer =
  second name, ``fact.label`` = friend | enemy, ``fact.category`` = movie | history | ...);
  context templates ``{entity} loves {answer}.`` etc. of types positive / neutral / negative;
  query forms ``The relationship between {entity} and {answer} is`` (open).
- gender: one relation ``gender_bias``; the 40 names are entities (class feminine | masculine,
  facts without an answer); the 4 × 20 stereotype sentences are fixed context templates of types
  feminine_stereotype, masculine_stereotype, feminine_swapped, masculine_swapped; the 20 neutral
  queries are open query forms.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import UserError
from ..options import Option, check_options, seed_option
from ..sqlfiles import read_sql
from .builder import DatasetBuilder
from .registry import IngestSource, Param, ingest_source
from .yago_qec import _Check, parse_yago_qec, read_json_file

DEMO_FILES = {"demo": "demo_yago.json", "friend_enemy": "friend_enemy.json", "gender": "gender.json"}


def demo_path(key: str) -> Path:
    return Path(str(resources.files("ctxprior.ingest").joinpath("data", DEMO_FILES[key])))


def _read(path: str | Path, name: str, kind: str) -> tuple[Any, _Check, DatasetBuilder]:
    """The demo file at ``path`` (a JSON object), its checker, and the builder of dataset ``name``."""
    d = read_json_file(str(path))
    chk = _Check(str(path))
    chk.dict_(d, "top level")
    b = DatasetBuilder(
        name,
        kind,
        source_path=str(path),
        source_sha256=sha256_file(str(path)),
        description=d.get("description"),
        separator="",  # its context templates end in "\n", as the paper's
    )
    return d, chk, b


def parse_friend_enemy(path: str | Path, name: str = "friend_enemy") -> DatasetBuilder:
    d, chk, b = _read(path, name, "friend_enemy")
    rel = b.add_relation("friend_enemy")
    pairs = d.get("pairs")
    if not isinstance(pairs, list) or not pairs:
        chk.fail("pairs", "expected a non-empty list")
    for i, p in enumerate(pairs):
        chk.dict_(p, f"pairs[{i}]")
        for k in ("ent1", "ent2", "label", "type"):
            if not isinstance(p.get(k), str):
                chk.fail(f"pairs[{i}].{k}", "expected a string")
        e = b.entity(p["ent1"], "real")
        a = b.answer(p["ent2"])
        rel.facts.append(
            {
                "entity": e,
                "answer": a,
                "kind": "real",
                "position": i,
                "label": p["label"],
                "category": p["type"],
            }
        )
    for ctype, tpls in chk.dict_(d.get("context_templates"), "context_templates").items():
        for j, t in enumerate(chk.str_list(tpls, f"context_templates.{ctype}")):
            rel.context_templates.append(
                (ctype, j, chk.template(t, f"context_templates.{ctype}[{j}]", ("entity", "answer")))
            )
    rel.query_forms = _query_forms(chk, d)
    return b


def _query_forms(chk: _Check, d: dict) -> list[tuple[str, int, str]]:
    return [
        (qtype, j, chk.template(t, f"query_forms.{qtype}[{j}]", ("entity",)))
        for qtype, forms in chk.dict_(d.get("query_forms"), "query_forms").items()
        for j, t in enumerate(chk.str_list(forms, f"query_forms.{qtype}"))
    ]


def parse_gender(path: str | Path, name: str = "gender") -> DatasetBuilder:
    d, chk, b = _read(path, name, "gender")
    rel = b.add_relation("gender_bias")
    pos = 0
    for gclass, names in chk.dict_(d.get("names"), "names").items():
        for n in chk.str_list(names, f"names.{gclass}"):
            e = b.entity(n, "real", None, gclass)
            rel.facts.append({"entity": e, "answer": None, "kind": "real", "position": pos})
            pos += 1
    for ctype, sents in chk.dict_(d.get("contexts"), "contexts").items():
        for j, s in enumerate(chk.str_list(sents, f"contexts.{ctype}")):
            rel.context_templates.append((ctype, j, s))
    rel.query_forms = _query_forms(chk, d)
    return b


def ingest_demo(store, only: list[str] | None = None) -> list[dict[str, Any]]:
    """Load the bundled demo datasets (skipping any already present with the same content)."""
    keys = only or list(DEMO_FILES)
    unknown = [k for k in keys if k not in DEMO_FILES]
    if unknown:
        raise UserError(f"unknown demo dataset '{unknown[0]}'; choose from {', '.join(DEMO_FILES)}")
    builders = []
    for key in keys:
        path = demo_path(key)
        existing = store.query("SELECT source_sha256 FROM dataset WHERE name = ?", [key])
        if existing:
            if existing[0][0] == sha256_file(path):
                continue  # already ingested, same content: nothing to do
            raise UserError(f"a different dataset named '{key}' already exists in {store.path}")
        if key == "demo":
            b = parse_yago_qec(
                path,
                name="demo",
                source_format="demo",
                description="ctxprior demo: real facts, fake entities of the same classes",
            )
        elif key == "friend_enemy":
            b = parse_friend_enemy(path)
        else:
            b = parse_gender(path)
        b.source_path = f"ctxprior:ingest/data/{DEMO_FILES[key]}"
        builders.append(b)
    out = []
    with store.transaction():
        for b in builders:
            out.append(b.write(store))
    return out


def _source_lines(stats: list[dict[str, Any]]) -> list[str]:
    lines = [] if stats else ["demo datasets already present; nothing to do"]
    return lines + [
        f"ingested dataset '{s['dataset']}': {s['relations']} relations, {s['facts']} facts, "
        f"{s['entities']} entities, {s['query_forms']} query forms, "
        f"{s['context_templates']} context templates"
        for s in stats
    ]


SOURCE = ingest_source(
    IngestSource(
        name="demo",
        help="Load the bundled demo datasets: `demo` (real facts + fake entities), `friend_enemy` "
        "(Table 1 pairs) and `gender` (App. G.2.1 lists). Already-loaded ones are skipped.",
        params=(
            Param(
                "only",
                "--only",
                "Load only this bundled dataset; repeatable. Default: all three.",
                multiple=True,
                choices=tuple(DEMO_FILES),
            ),
        ),
        load=lambda store, only=(): ingest_demo(store, list(only) if only else None),
        lines=_source_lines,
    )
)


DEMO_CORPUS_OPTIONS = (
    seed_option(0),
    Option("n_documents", None, "Documents in the corpus.", default=3000, kind=int, minimum=1, maximum=10**6),
)
"""``wh.datasets.write_demo_corpus`` (API only)."""


def write_demo_corpus(
    store, path: str | Path, seed: int = 0, n_documents: int = 3000, overwrite: bool = False
) -> dict[str, int]:
    """A small generated corpus (one ``.jsonl.zst`` file in the Pile's format) for the demo's
    co-occurrence covariate: sentences that state the demo's real facts, each fact with its own
    frequency (from rare to common, so familiarity varies), filler sentences, and two fake entities
    that occur in passing (so the real-vs-fake test has seen fakes to leave out). Generated text,
    not a real corpus: it shows the mechanism, not the paper's numbers. ``path`` is never the
    warehouse, nor an existing file unless ``overwrite``."""
    import json

    from ..outputs import check_output_file, replacing

    check_options(DEMO_CORPUS_OPTIONS, {"seed": seed, "n_documents": n_documents})
    check_output_file(path, store.path, overwrite=overwrite)

    import numpy as np
    import zstandard

    facts = store.query(read_sql("ctxprior.ingest", "sql/demo_corpus_facts.sql"))
    fakes = [r[0] for r in store.query(read_sql("ctxprior.ingest", "sql/demo_corpus_fakes.sql"))]
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(facts) + 1) ** 1.1  # Zipf-like: a few facts very common
    weights = weights[rng.permutation(len(facts))]
    weights /= weights.sum()
    filler = [
        "The weather was mild for the season.",
        "Prices rose slowly over the decade.",
        "Researchers published the results in a journal.",
        "The committee met again in spring.",
    ]
    docs = []
    for i in range(n_documents):
        k = int(rng.integers(1, 4))
        sents = []
        for j in rng.choice(len(facts), size=k, p=weights):
            e, a = facts[int(j)]
            sents.append(f"{e} is often mentioned together with {a}.")
            sents.append(filler[int(rng.integers(len(filler)))])
        if fakes and i % 500 == 0:
            sents.append(f"A travel blog once invented a country called {fakes[(i // 500) % len(fakes)]}.")
        docs.append({"text": " ".join(sents), "meta": {"id": i}})
    raw = "\n".join(json.dumps(d) for d in docs).encode("utf-8")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp:
        tmp.write_bytes(zstandard.ZstdCompressor().compress(raw))
    return {"documents": len(docs), "bytes": len(raw)}
