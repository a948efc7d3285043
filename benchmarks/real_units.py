"""Work units of real templates under a real BPE tokenizer, for the GPU benchmark (issue 34).

The synthetic unit of ``engine_overhead.yago_unit`` computes about 5.7 tokens a prompt; the
prompts the scorer really builds from YAGO-QEC-shaped templates are longer. This module builds a
paper-shaped unit (600 contexts x 100 entities, one query form, + the no-context prompts) from the
bundled demo data (``src/ctxprior/ingest/data/demo_yago.json``: 9 relations, each with 3 context
templates, 2 open + 2 closed query forms, 30 real + 30 fake entities) the way ``sample --design
paper`` does (per entity of the unit, 2 contexts of each of the 3 context types, each with a drawn
answer, shuffled), tokenised with SmolLM2-135M's byte-level BPE (49,152 tokens; the bundled model
``smollm2-135m``, read offline from its converted folder). Of the demo's 36 relation x query form
units, the benchmark's is the one whose computed tokens a prompt are nearest their mean (birthPlace,
``Q: Where was {entity} born?\nA:``: 8.31 of 24.5; the mean 8.58 of 26.3).

The GPU machine has neither the bundled model nor a warehouse, so the unit's token ids are committed
in ``benchmarks/data/real_unit.json`` (contexts and queries separately: every context ends in a
newline, where the tokenizer splits, so the ids of context + query are the context's ids followed by
the query's; ``build`` checks that for every prompt of the unit), with a survey of tokens per prompt
over all 9 relations x 4 query forms. ``python benchmarks/real_units.py --write`` rebuilds it
where the bundled model is installed; ``--check`` compares it with a fresh build (the suite's test
does, when the model is there).

    python benchmarks/real_units.py            # print the committed unit's figures and the survey
    python benchmarks/real_units.py --write    # rebuild benchmarks/data/real_unit.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "ctxprior" / "ingest" / "data" / "demo_yago.json"
UNIT_FILE = HERE / "data" / "real_unit.json"
TOKENIZER = "smollm2-135m"
PER_TYPE = 2  # contexts of each type per entity: 3 types x 2 x 100 entities = 600 contexts


def tokenizer():
    """SmolLM2-135M's tokenizer, offline (the bundled ``smollm2-135m``'s converted folder)."""
    from transformers import AutoTokenizer

    from ctxprior.scoring.models import _locate

    folder, revision, _ = _locate(TOKENIZER)
    return AutoTokenizer.from_pretrained(folder), f"SmolLM2-135M-Instruct ({revision})"


def short(relation: str) -> str:
    """``capital``, ``reverse-capital``, ..."""
    return ("reverse-" if relation.startswith("reverse-") else "") + relation.rsplit("/", 1)[-1]


def demo() -> dict:
    return json.loads(DEMO.read_text())


def unit_texts(
    relation: str, form: tuple[str, int], n_entities: int = 100, seed: int = 0
) -> tuple[list[str], list[str]]:
    """(context texts, query texts) of one paper-shaped unit of ``relation`` and query form ``form``
    (type, ordinal): the relation's 30 real + 30 fake entities, then other relations' entities
    (in file order) until there are ``n_entities``; per entity ``PER_TYPE`` contexts of each
    context type with answers drawn from the relation's answers, shuffled."""
    data = demo()
    rel = data[relation]
    rng = np.random.default_rng(seed)
    answers = list(rel["answers"])
    # (entity, its answer): the real ones have theirs, fakes and borrowed entities get a drawn one
    ents: list[tuple[str, str]] = list(zip(rel["entities"], rel["answers"]))
    ents += [(e, answers[int(rng.integers(len(answers)))]) for e in rel["gpt_fake_entities"]]
    seen = {e for e, _ in ents}
    for other in data.values():
        for e in other["entities"] + other["gpt_fake_entities"]:
            if len(ents) < n_entities and e not in seen:
                seen.add(e)
                ents.append((e, answers[int(rng.integers(len(answers)))]))
    ents = ents[:n_entities]
    contexts = [
        tpl.format(entity=e, answer=answers[int(rng.integers(len(answers)))])
        for e, _ in ents
        for tpl in rel["context_templates"].values()
        for _ in range(PER_TYPE)
    ]
    contexts = [contexts[j] for j in rng.permutation(len(contexts))]
    template = rel["query_forms"][form[0]][form[1]]
    queries = [template.format(entity=e, answer=a) for e, a in ents]
    return contexts, queries


def encode(tok, texts: list[str]) -> list[list[int]]:
    """As the scorer encodes prompts (``Engine.encode``: special tokens added)."""
    return [list(x) for x in tok(texts, add_special_tokens=True)["input_ids"]]


def tokenize_unit(tok, contexts: list[str], queries: list[str], check: int | None = None):
    """(context ids, query ids), and a check that the ids of every prompt context + query (or of
    the first ``check`` contexts' prompts) are the context's ids followed by the query's."""
    c_ids, q_ids = encode(tok, contexts), encode(tok, queries)
    if encode(tok, [""]) != [[]]:
        raise ValueError("the tokenizer adds special tokens: store them with the contexts")
    n = len(contexts) if check is None else min(check, len(contexts))
    for i in range(n):
        full = encode(tok, [contexts[i] + q for q in queries])
        if any(f != c_ids[i] + qi for f, qi in zip(full, q_ids)):
            raise ValueError(f"context {contexts[i]!r}: context + query does not split at the newline")
    return c_ids, q_ids


def trie_nodes(seqs) -> int:
    """Distinct prefixes of the sequences: the nodes of their token trie (``gpu.unique_tokens``)."""
    seen = set()
    for s in seqs:
        h = 0
        for t in s:
            h = hash((h, t))
            seen.add(h)
    return len(seen)


def unit_figures(contexts, queries) -> dict:
    """Tokens a prompt of the unit whose prompts are every context + every query, and every query
    alone: in full, and computed (the distinct prefixes, what a perfect prefix-sharing engine
    computes). Every context ends in a newline that no query holds, so no context + query is a
    prefix of another context's prompt: the distinct prefixes are those of the contexts and the
    queries alone, plus the query trie once per distinct context."""
    contexts, queries = [tuple(c) for c in contexts], [tuple(q) for q in queries]
    n = len(contexts) * len(queries) + len(queries)
    full = len(queries) * sum(map(len, contexts)) + (len(contexts) + 1) * sum(map(len, queries))
    unique = trie_nodes(contexts + queries) + len(set(contexts)) * trie_nodes(queries)
    return {
        "prompts": n,
        "unique_tokens": unique,
        "tokens_per_prompt": round(full / n, 2),
        "computed_tokens_per_prompt": round(unique / n, 2),
    }


def survey(tok) -> list[dict]:
    """Tokens a prompt in a paper-shaped unit of every relation x query form of the demo data."""
    rows = []
    for relation, rel in demo().items():
        for ftype, forms in rel["query_forms"].items():
            for i in range(len(forms)):
                contexts, queries = unit_texts(relation, (ftype, i))
                c_ids, q_ids = tokenize_unit(tok, contexts, queries, check=20)
                rows.append({"relation": relation, "form": f"{ftype}:{i}", **unit_figures(c_ids, q_ids)})
    return rows


def build() -> dict:
    """The committed file's content, from the templates and the tokenizer."""
    tok, name = tokenizer()
    rows = survey(tok)
    mean = {
        k: round(float(np.mean([r[k] for r in rows])), 2)
        for k in ("tokens_per_prompt", "computed_tokens_per_prompt")
    }
    # the benchmark's unit: the relation x form whose computed tokens a prompt are nearest the mean
    pick = min(rows, key=lambda r: abs(r["computed_tokens_per_prompt"] - mean["computed_tokens_per_prompt"]))
    ftype, ordinal = pick["form"].split(":")
    relation, form = pick["relation"], (ftype, int(ordinal))
    contexts, queries = unit_texts(relation, form)
    c_ids, q_ids = tokenize_unit(tok, contexts, queries)  # every prompt checked
    return {
        "what": "a paper-shaped unit of real templates (benchmarks/real_units.py)",
        "tokenizer": name,
        "vocab_size": len(tok),
        "relation": relation,
        "query_form": demo()[relation]["query_forms"][form[0]][form[1]],
        "chosen_as": "the relation x query form whose computed tokens a prompt are nearest the survey mean",
        "figures": unit_figures(c_ids, q_ids),
        "survey_mean": mean,
        "survey": rows,
        "contexts": c_ids,
        "queries": q_ids,
    }


def load(n_contexts: int = 600, n_entities: int = 100) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """(context ids, query ids) of the committed unit: its first ``n_contexts`` contexts and
    ``n_entities`` queries (at most 600 and 100)."""
    doc = json.loads(UNIT_FILE.read_text())
    if n_contexts > len(doc["contexts"]) or n_entities > len(doc["queries"]):
        raise ValueError(
            f"the real unit has {len(doc['contexts'])} contexts and {len(doc['queries'])} entities; "
            f"asked for {n_contexts} x {n_entities}"
        )
    return [tuple(c) for c in doc["contexts"][:n_contexts]], [tuple(q) for q in doc["queries"][:n_entities]]


def info() -> dict:
    """The committed unit's description without its ids."""
    doc = json.loads(UNIT_FILE.read_text())
    return {k: v for k, v in doc.items() if k not in ("contexts", "queries", "survey")}


def write_json(doc: dict, path: Path) -> None:
    """One list of ids a line: small, and a diff shows what changed."""
    head = {k: v for k, v in doc.items() if k not in ("contexts", "queries")}
    text = json.dumps(head, indent=1)[:-2]
    for key in ("contexts", "queries"):
        text += f',\n "{key}": [\n' + ",\n".join("  " + json.dumps(x) for x in doc[key]) + "\n ]"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n}\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rebuild benchmarks/data/real_unit.json")
    ap.add_argument("--check", action="store_true", help="compare the committed file with a fresh build")
    args = ap.parse_args(argv)
    if args.write or args.check:
        doc = build()
        if args.write:
            write_json(doc, UNIT_FILE)
        elif json.loads(UNIT_FILE.read_text()) != json.loads(json.dumps(doc)):
            print(f"{UNIT_FILE} differs from a fresh build: run python benchmarks/real_units.py --write")
            return 1
    doc = json.loads(UNIT_FILE.read_text())
    f, m = doc["figures"], doc["survey_mean"]
    print(
        f"real unit ({doc['tokenizer']}): {short(doc['relation'])} {doc['query_form']!r}, "
        f"{len(doc['contexts'])} contexts x {len(doc['queries'])} entities = {f['prompts']} prompts, "
        f"{f['unique_tokens']} unique tokens: {f['computed_tokens_per_prompt']} computed tokens a prompt "
        f"of {f['tokens_per_prompt']}; over the demo's {len(doc['survey'])} relation x form units "
        f"{m['computed_tokens_per_prompt']} of {m['tokens_per_prompt']}"
    )
    for r in doc["survey"]:
        print(
            f"  {short(r['relation']):>24} {r['form']:>8}: {r['computed_tokens_per_prompt']:5.2f} "
            f"of {r['tokens_per_prompt']:5.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
