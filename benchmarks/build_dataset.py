"""Benchmark: `ctxprior build-dataset` throughput (triples/s) against a naive Python build.

    python benchmarks/build_dataset.py                      # 5,000,000 triples, plain and gzip
    python benchmarks/build_dataset.py --triples 500000     # quicker

1. Generates an N-Triples graph of --triples triples in a temporary folder (deleted unless --keep):
   entities with Zipf-distributed popularity, 10 predicates, literal objects, rdfs:labels (about
   8% of the lines) and rdf:type triples (about 5%); written plain and gzip-compressed, and a
   relations file with three relations (one reversed, one with a class filter).
2. Builds the dataset through the real code path (`build_dataset`, a fresh warehouse per run) from
   the plain and from the gzip file, and reports triples/s (wall time, DuckDB on all cores).
3. Runs the naive reference (tests/kg_reference.py: Python's `re` on every line, dicts and sets,
   one core) on the first --naive-triples triples, builds the same slice with DuckDB, checks the
   two agree fact by fact, and prints the ratio of the throughputs.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import kg_reference as ref  # noqa: E402

from ctxprior.ingest.kg_build import BuildOptions, build_dataset, literal_value, local_name, unescape  # noqa: E402
from ctxprior.ingest.kg_relations import read_relations  # noqa: E402
from ctxprior.storage import open_store  # noqa: E402

Y = "http://yago-knowledge.org/resource/"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RELATIONS = """relations:
  - predicate: yago:p0
    query_forms: {open: ["What is p0 of {entity}?"], closed: ["Is {answer} p0 of {entity}?"]}
    context_templates: {base: "p0 of {entity} is {answer}.\\n", negation: "p0 of {entity} is not {answer}.\\n"}
  - predicate: yago:p1
    reverse: true
    query_forms: {open: ["What has p1 {entity}?"], closed: ["Does {answer} have p1 {entity}?"]}
    context_templates: {base: "{answer} has p1 {entity}.\\n"}
  - predicate: yago:p2
    subject_class: schema:Person
    query_forms: {open: ["What is p2 of {entity}?"], closed: ["Is {answer} p2 of {entity}?"]}
    context_templates: {base: "p2 of {entity} is {answer}.\\n"}
"""


def generate(path: str, n: int, n_entities: int, seed: int = 0) -> None:
    """Write ``n`` N-Triples lines (see the module docstring)."""
    rng = np.random.default_rng(seed)
    chunk = 200_000
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            subj = (rng.zipf(1.3, m) - 1) % n_entities
            obj = rng.integers(0, n_entities, m)
            kind = rng.random(m)
            pred = rng.integers(0, 10, m)
            lines = []
            for s, o, k, p in zip(subj.tolist(), obj.tolist(), kind.tolist(), pred.tolist()):
                if k < 0.08:
                    lines.append(f'<{Y}E{s}> {LABEL} "Entity number {s}"@en .')
                elif k < 0.13:
                    lines.append(f"<{Y}E{s}> {TYPE} <http://schema.org/{'Person' if s % 3 else 'Place'}> .")
                elif k < 0.20:
                    lines.append(f'<{Y}E{s}> <{Y}p{p}> "{o}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
                else:
                    lines.append(f"<{Y}E{s}> <{Y}p{p}> <{Y}E{o}> .")
            f.write("\n".join(lines) + "\n")


def run_build(folder: str, triples: str, relations: str, name: str, k: int) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of all threads of this process, report) of one build."""
    db = os.path.join(folder, f"{name}.duckdb")
    if os.path.exists(db):
        os.remove(db)
    t, c = time.perf_counter(), time.process_time()
    rep = build_dataset(
        lambda **o: open_store(db, **o),
        [triples],
        relations,
        name,
        options=BuildOptions(entities_per_relation=k),
        progress=False,
        db_path=db,
    )
    return time.perf_counter() - t, time.process_time() - c, {**rep, "db": db}


def warehouse_facts(db: str) -> list[tuple]:
    with open_store(db, read_only=True) as wh:
        return [
            tuple(r)
            for r in wh.query("""
            SELECT r.position, f.position, e.uri, e.name, a.uri, a.name, f.uri_degree, f.predicate_degree,
                   f.namesake_degree, f.namesake_num_uris
            FROM fact f JOIN relation r USING (relation_id) JOIN entity e USING (entity_id) JOIN answer a USING (answer_id)
            ORDER BY r.position, f.position""")
        ]


def reference_facts(triples: str, relations: str, k: int) -> list[tuple]:
    spec = read_relations(relations)
    rels = [(r.predicate, r.reverse, r.subject_classes, r.object_classes) for r in spec.relations]
    out = []
    for i, facts in enumerate(ref.build([triples], rels, k=k)):
        for f in facts:
            lit = f["answer"].startswith('"')
            ename = unescape(f["entity_label"]) if f["entity_label"] is not None else local_name(f["entity"])
            aname = (
                literal_value(f["answer"])
                if lit
                else (
                    unescape(f["answer_label"]) if f["answer_label"] is not None else local_name(f["answer"])
                )
            )
            out.append(
                (
                    i,
                    f["position"],
                    f["entity"],
                    ename,
                    None if lit else f["answer"],
                    aname,
                    f["total_degree"],
                    f["delta"],
                    f["namesake_degree"],
                    f["namesake_num_uris"],
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triples", type=int, default=5_000_000, help="triples in the generated graph")
    ap.add_argument("--entities", type=int, default=500_000, help="distinct entities")
    ap.add_argument(
        "--naive-triples", type=int, default=1_000_000, help="triples the naive Python build reads"
    )
    ap.add_argument("--entities-per-relation", type=int, default=1000, help="as in build-dataset")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    a = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="ctxprior-bench-build-")
    try:
        nt, gz, naive = (os.path.join(folder, f) for f in ("kg.nt", "kg.nt.gz", "kg_slice.nt"))
        rel = os.path.join(folder, "relations.yaml")
        with open(rel, "w") as f:
            f.write(RELATIONS)
        t = time.perf_counter()
        generate(nt, a.triples, a.entities)
        with open(nt, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        generate(naive, a.naive_triples, a.entities)
        print(
            f"generated {a.triples:,} triples ({os.path.getsize(nt) / 1e6:,.0f} MB plain, "
            f"{os.path.getsize(gz) / 1e6:,.0f} MB gzip) in {time.perf_counter() - t:.0f} s; "
            f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}"
        )
        speeds, cpu_speeds = {}, {}
        for label, path in (("plain", nt), ("gzip", gz)):
            secs, cpu, rep = run_build(folder, path, rel, f"kg_{label}", a.entities_per_relation)
            speeds[label], cpu_speeds[label] = a.triples / secs, a.triples / cpu
            print(
                f"build-dataset, {label:5s}: {secs:6.1f} s = {speeds[label]:>9,.0f} triples/s wall, "
                f"{cpu_speeds[label]:>9,.0f} per CPU-second (pass 1 {rep['seconds_pass1']:.1f} s, "
                f"pass 2 {rep['seconds_pass2']:.1f} s; {rep['facts']:,} facts)"
            )
        secs_db, _, rep = run_build(folder, naive, rel, "kg_slice", a.entities_per_relation)
        t, c = time.perf_counter(), time.process_time()
        want = reference_facts(naive, rel, a.entities_per_relation)
        secs_py, cpu_py = time.perf_counter() - t, time.process_time() - c
        same = warehouse_facts(rep["db"]) == want
        py, cpu_rate = a.naive_triples / secs_py, a.naive_triples / cpu_py
        print(
            f"naive Python (re + dicts, one core) on {a.naive_triples:,} triples: {secs_py:6.1f} s = {py:>9,.0f} "
            f"triples/s wall, {cpu_rate:>9,.0f} per CPU-second; DuckDB on the same slice: {secs_db:.1f} s; "
            f"same {len(want):,} facts: {'yes' if same else 'NO'}"
        )
        print(
            f"ratio build-dataset / naive Python, wall: {speeds['plain'] / py:.1f}x (plain), "
            f"{speeds['gzip'] / py:.1f}x (gzip); per CPU-second: {cpu_speeds['plain'] / cpu_rate:.1f}x (plain), "
            f"{cpu_speeds['gzip'] / cpu_rate:.1f}x (gzip); load average now {os.getloadavg()[0]:.1f}"
        )
        if not same:
            sys.exit(1)
    finally:
        if a.keep:
            print(f"files kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
