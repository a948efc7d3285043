"""Ingest + sample at paper scale, against a naive row-by-row SQLAlchemy insert.

Generates a yago_qec.json with 125 relations x 1000 facts (plus 1000 fakes each, degrees, URIs),
then times `load_yago_qec` + `write_yago_qec` + `draw_sample` (100 entities, 600 contexts per relation) into a new
warehouse. The naive baseline inserts the same rows one `INSERT` at a time through a SQLAlchemy
session on duckdb-engine; it is measured on a slice in the same run (it would take many minutes
at full size) and its rows/s compared with the fast path's.

    python benchmarks/ingest.py [--relations 125] [--facts 1000] [--naive-rows 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time


def make_file(path: str, n_rel: int, n_facts: int, seed: int = 0) -> int:
    rnd = random.Random(seed)
    data = {}
    for r in range(n_rel):
        rel = (
            f"http://schema.org/rel{r}"
            if r % 2 == 0
            else f"reverse-http://yago-knowledge.org/resource/rel{r}"
        )
        n_ans = max(5, n_facts // 4)
        ents = [f"Entity {r}-{i}" for i in range(n_facts)]
        answers = [f"Answer {r}-{rnd.randrange(n_ans)}" for _ in range(n_facts)]
        data[rel] = {
            "query_forms": {
                "open": [f"Q: What is the rel{r} of {{entity}}?\nA:", f"The rel{r} of {{entity}} is"],
                "closed": [
                    f"Q: Is {{answer}} the rel{r} of {{entity}}?\nA:",
                    f"Q: Does {{entity}} have rel{r} {{answer}}?\nA:",
                ],
            },
            "entities": ents,
            "answers": answers,
            "entity_uris": [f"http://yago-knowledge.org/resource/E{r}_{i}" for i in range(n_facts)],
            "answer_uris": [f"http://yago-knowledge.org/resource/{a.replace(' ', '_')}" for a in answers],
            "gpt_fake_entities": [f"Fake {r}-{i}" for i in range(n_facts)],
            "context_templates": {
                "base": f"The rel{r} of {{entity}} is {{answer}}.\n",
                "assertive": f"Definitely, the rel{r} of {{entity}} is {{answer}}.\n",
                "negation": f"The rel{r} of {{entity}} is not {{answer}}.\n",
            },
            "entity_types": {"Thing": 1.0},
            "answer_types": {"Thing": 1.0},
            "entity_uri_to_degree": [rnd.randrange(1, 10_000) for _ in range(n_facts)],
            "entity_namesake_to_degree": [rnd.randrange(1, 10_000) for _ in range(n_facts)],
            "entity_namesake_to_num_uris": [1] * n_facts,
            "entity_uri_to_predicate_degree": [rnd.randrange(1, 50) for _ in range(n_facts)],
        }
    with open(path, "w") as f:
        json.dump(data, f)
    return os.path.getsize(path)


def fast(path: str, db: str, n_entities: int, n_contexts: int) -> tuple[float, float, int]:
    from ctxprior.ingest.yago_qec import load_yago_qec, write_yago_qec
    from ctxprior.sampling.draw import draw_sample
    from ctxprior.storage import open_store

    with open_store(db) as wh:
        t0 = time.perf_counter()
        write_yago_qec(wh, load_yago_qec(path))
        t1 = time.perf_counter()
        draw_sample(wh, "yago_qec", n_entities=n_entities, n_contexts=n_contexts, seed=11)
        t2 = time.perf_counter()
        rows = sum(
            wh.scalar(f'SELECT count(*) FROM "{t}"')
            for t in (
                "dataset",
                "relation",
                "relation_class",
                "entity",
                "answer",
                "fact",
                "query_form",
                "context_template",
                "sample",
                "sample_fact",
                "context",
            )
        )
    return t1 - t0, t2 - t1, rows


def naive(db_fast: str, db_naive: str, n_rows: int) -> tuple[float, int]:
    """Copy the first n_rows of fact, entity and context one INSERT at a time via a SQLAlchemy session."""
    import duckdb
    from sqlalchemy import create_engine, insert
    from sqlalchemy.orm import Session

    from ctxprior.schema import metadata
    from ctxprior.storage import open_store

    open_store(db_naive).close()  # same schema, empty
    src = duckdb.connect(db_fast, read_only=True)
    plan = []
    for t in ("entity", "fact", "context"):
        cur = src.execute(f'SELECT * FROM "{t}" LIMIT {n_rows // 3}')
        cols = [d[0] for d in cur.description]
        plan.append((metadata.tables[t], [dict(zip(cols, r)) for r in cur.fetchall()]))
    src.close()
    engine = create_engine(f"duckdb:///{db_naive}")
    n = 0
    t0 = time.perf_counter()
    with Session(engine) as s:
        for table, rows in plan:
            for row in rows:
                s.execute(insert(table).values(**row))
                n += 1
        s.commit()
    dt = time.perf_counter() - t0
    engine.dispose()
    return dt, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relations", type=int, default=125)
    ap.add_argument("--facts", type=int, default=1000)
    ap.add_argument("--entities", type=int, default=100)
    ap.add_argument("--contexts", type=int, default=600)
    ap.add_argument("--naive-rows", type=int, default=3000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "yago_qec.json")
        size = make_file(path, a.relations, a.facts)
        print(f"generated {a.relations} relations x {a.facts} facts (+ fakes): {size / 1e6:.1f} MB JSON")
        t_ing, t_smp, rows = fast(path, os.path.join(d, "fast.duckdb"), a.entities, a.contexts)
        total = t_ing + t_smp
        fast_rps = rows / total
        print(
            f"fast: ingest {t_ing:.2f} s + sample {t_smp:.2f} s = {total:.2f} s for {rows:,} rows "
            f"-> {fast_rps:,.0f} rows/s  (target: < 30 s)"
        )
        dt, n = naive(os.path.join(d, "fast.duckdb"), os.path.join(d, "naive.duckdb"), a.naive_rows)
        naive_rps = n / dt
        print(
            f"naive row-by-row SQLAlchemy insert: {n:,} rows in {dt:.2f} s -> {naive_rps:,.0f} rows/s "
            f"(full size would take ~{rows / naive_rps / 60:.0f} min)"
        )
        print(f"ratio fast/naive: {fast_rps / naive_rps:.0f}x  (target: >= 20x)")


if __name__ == "__main__":
    sys.exit(main())
