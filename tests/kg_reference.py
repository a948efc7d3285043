"""A naive, obviously-correct Python reference for `build-dataset` (and the benchmark's baseline).

Reads every line with Python's ``re`` (the full-line regular expression, no fast path), keeps all
triples in memory, and computes the selection with dicts and sets, following the definitions of
docs/datasets.md independently of the SQL. Only for small graphs (and the benchmark's baseline).
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import defaultdict
from urllib.parse import unquote

WS = "[ \\t\\n\\f\\r]"  # RE2's \s (DuckDB), spelled out: Python's \s is wider
NWS = "[^ \\t\\n\\f\\r]"
TERM = f'(<[^>]*>|_:{NWS}+|"(?:[^"\\\\]|\\\\.)*"(?:@[A-Za-z0-9-]+|\\^\\^{NWS}+)?|[^ \\t\\n\\f\\r"<]+)'
BODY = re.compile(f"^{WS}*{TERM}{WS}+{TERM}{WS}+{TERM}{WS}*$")
PREFIX = re.compile(
    r"^[ \t\n\f\r]*@?[Pp][Rr][Ee][Ff][Ii][Xx][ \t\n\f\r]+([A-Za-z0-9_.-]*):[ \t\n\f\r]*<([^>]*)>"
)
SKIP = re.compile(r"^[ \t\r]*(#|$)")  # blank line or comment
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = RDF + "type"
LABEL_PREDICATES = (
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
)
DEFAULTS = {
    "rdf": RDF,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "yago": "http://yago-knowledge.org/resource/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
}


def fmt_of(path: str) -> str:
    n = str(path).lower().removesuffix(".gz")
    return "tsv" if n.endswith((".tsv", ".tab")) else "ttl" if n.endswith((".ttl", ".turtle")) else "nt"


def lines(path: str):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        for line in f:
            yield line.rstrip("\n").rstrip("\r") if line.endswith("\r\n") else line.rstrip("\n")


def parse_line(line: str, fmt: str):
    """None (blank, comment, prefix line) | 'bad' | (s, p, o) raw terms."""
    if SKIP.match(line):
        return None
    if fmt == "tsv":
        t = line.split("\t")
        if len(t) < 3 or t[0].strip(" ") == "":
            return "bad"
        return t[0].strip(" "), t[1].strip(" "), re.sub(r"[ \t\n\f\r]*\.$", "", t[2].strip(" "))
    if PREFIX.match(line):
        return None
    b = line.rstrip(" \t\r")
    if b.endswith("."):
        b = b[:-1].rstrip(" \t")
    m = BODY.match(b)
    return m.groups() if m else "bad"


def expand(t: str, prefixes: dict) -> str:
    if t.startswith("<") and t.endswith(">"):
        return t[1:-1]
    if t == "a":
        return RDF_TYPE
    if t.startswith('"') or t.startswith("_:") or ":" not in t:
        return t
    pfx, _, rest = t.partition(":")
    return prefixes[pfx] + rest if pfx in prefixes else t


def undeclared(t: str, prefixes: dict) -> bool:
    """A prefixed name whose prefix is not declared (N-Triples / Turtle lines with one are malformed)."""
    if t.startswith(("<", '"', "_:")) or t == "a" or ":" not in t:
        return False
    return t.partition(":")[0] not in prefixes


def read(paths: list[str]) -> tuple[list[tuple[str, str, str]], dict]:
    """All triples (expanded, in file order, duplicates kept) and per-file counts."""
    prefixes = dict(DEFAULTS)
    for p in paths:
        if fmt_of(p) == "ttl":
            for line in lines(p):
                m = PREFIX.match(line)
                if m:
                    prefixes[m.group(1)] = m.group(2)
    out, counts = [], {}
    for p in paths:
        n = bad = 0
        first_bad = []
        for i, line in enumerate(lines(p), 1):
            r = parse_line(line, fmt_of(p))
            if r is None:
                continue
            n += 1
            if r != "bad" and fmt_of(p) != "tsv" and any(undeclared(x, prefixes) for x in r):
                r = "bad"
            if r == "bad":
                bad += 1
                first_bad.append(i)
                continue
            out.append(tuple(expand(x, prefixes) for x in r))
        counts[p] = {"n_lines": n, "n_malformed": bad, "malformed_lines": first_bad[:5]}
    return out, counts


def is_iri(t: str) -> bool:
    return not t.startswith('"') and not t.startswith("_:")


def lexical(o: str) -> str:
    return re.match(r'^"(.*)"', o).group(1)


def md5(s: str) -> str:
    return hashlib.md5(s.encode("utf-8")).hexdigest()


def local_name(iri: str) -> str:
    tail = iri.rstrip("/#")
    cut = max(tail.rfind("/"), tail.rfind("#"))
    if cut < 0:
        cut = tail.rfind(":")
    return unquote(tail[cut + 1 :]).replace("_", " ").strip() or iri


def build(
    triples_files,
    relations,
    k=1000,
    seed=0,
    lang="en",
    labels_files=(),
    require_label="both",
    answer_choice="random",
):
    """relations: [(predicate, reverse, subject_classes, object_classes)]. Returns one list of fact
    dicts per relation, in rank order (raw, still escaped labels; names by local_name)."""
    triples, _ = read(list(triples_files))
    label_triples, _ = read(list(labels_files)) if labels_files else ([], {})
    distinct = set(triples)
    labels = defaultdict(set)  # e -> {(pred_rank, lang_rank, lexical)}
    for s, p, o in [*distinct, *label_triples]:
        if (
            p in LABEL_PREDICATES
            and o.startswith('"')
            and (o.lower().endswith('"@' + lang) or re.fullmatch(r'".*"(\^\^[^ \t\n\f\r]+)?', o))
        ):
            labels[s].add(
                (LABEL_PREDICATES.index(p), 0 if o.lower().endswith('"@' + lang) else 1, lexical(o))
            )
    best = {e: min(v)[2] for e, v in labels.items()}
    by_label = defaultdict(set)
    for e, v in labels.items():
        for _, _, lab in v:
            by_label[lab].add(e)
    touching = defaultdict(set)
    for t in distinct:
        touching[t[0]].add(t)
        touching[t[2]].add(t)
    degree = {e: len(ts) for e, ts in touching.items()}
    types = defaultdict(set)
    for s, p, o in distinct:
        if p == RDF_TYPE:
            types[s].add(o)
    return [
        _relation(distinct, rel, k, seed, lang, best, by_label, degree, types, require_label, answer_choice)
        for rel in relations
    ]


def _allowed(e, a, best, require_label):
    """--require-label: both (entity and IRI answer labelled), entity, none."""
    if require_label == "none":
        return True
    return e in best and (require_label == "entity" or a.startswith('"') or a in best)


def _relation(distinct, rel, k, seed, lang, best, by_label, degree, types, require_label, answer_choice):
    pred, reverse, scls, ocls = rel
    edges = [(s, o) for s, p, o in distinct if p == pred]
    pairs = defaultdict(set)
    for s, o in edges:
        e, a = (o, s) if reverse else (s, o)
        if not is_iri(e) or a.startswith("_:"):
            continue
        if (scls and not (types[s] & set(scls))) or (ocls and not (types[o] & set(ocls))):
            continue
        if _allowed(e, a, best, require_label):
            pairs[e].add(a)
    nb = defaultdict(set)
    for s, o in edges:
        nb[s].add(o)
        nb[o].add(s)
    cands = list(pairs)
    cands.sort(key=lambda e: (-degree.get(e, 0), -len(nb[e]), md5(f"{seed} {e}")))
    out = []
    chosen = cands[:k]
    ecls = ocls if reverse else scls  # the entity side's filter classes, in order
    counts = defaultdict(int)
    for e in chosen:
        for c in types[e]:
            counts[c] += 1

    def entity_class(e):
        if ecls:
            return next((c for c in ecls if c in types[e]), None)
        return min(types[e], key=lambda c: (-counts[c], c)) if types[e] else None

    for pos, e in enumerate(chosen):

        def akey(a):
            lit = a.startswith('"')
            named = lit or a in best
            lrank = (
                0
                if not lit or a.lower().endswith('"@' + lang)
                else (2 if re.search(r'"@[A-Za-z0-9-]+$', a) else 1)
            )
            return (not named, -(degree[a]) if a in degree and not lit else 1, lrank, md5(f"{seed} {e} {a}"))  # noqa: B023

        a = (
            min(pairs[e], key=akey)
            if answer_choice == "degree"
            else min(pairs[e], key=lambda a: md5(f"{seed} {e} {a}"))
        )
        names = by_label.get(best[e], {e}) if e in best else {e}
        out.append(
            {
                "position": pos,
                "entity": e,
                "entity_label": best.get(e),
                "total_degree": degree[e],
                "delta": len(nb[e]),
                "namesake_num_uris": len(names),
                "namesake_degree": sum(degree.get(n, 0) for n in names),
                "answer": a,
                "answer_label": None if a.startswith('"') else best.get(a),
                "entity_class": entity_class(e),
            }
        )
    return out
