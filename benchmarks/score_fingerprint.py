"""Fingerprint of a warehouse's scores, for refactors that must not change a number.

    python benchmarks/score_fingerprint.py demo.duckdb

Prints one sha256 per table (and one over all of them): the inputs of the scores (dataset
tables, samples, contexts) and the scores and analyses made from them. Every row is written with
``repr`` of each value (floats round-trip exactly), ordered by all columns; columns that record
when or where a run happened (timestamps, host, pid, ctxprior version) are left out. Two
warehouses built by the same commands give the same fingerprint exactly when their scores are
bit-identical.
"""

from __future__ import annotations

import argparse
import hashlib

import duckdb

INPUTS = (
    "relation",
    "entity",
    "answer",
    "fact",
    "query_form",
    "context_template",
    "sample",
    "sample_fact",
    "context",
)
TABLES = INPUTS + (
    "persuasion",
    "susceptibility",
    "prior_topk",
    "prompt_topk",
    "generation",
    "analysis_result",
    "dynamicqa_generation",
    "dynamicqa_token_dist",
    "dynamicqa_score",
    "dynamicqa_summary",
    "dynamicqa_regression",
)
VOLATILE = {
    "started_at",
    "finished_at",
    "created_at",
    "updated_at",
    "host",
    "pid",
    "ctxprior_version",
    "elapsed_s",
    "seconds",
    "committed_at",
}


def fingerprint(db: str) -> dict[str, tuple[int, str]]:
    """{table: (rows, sha256)} for the score tables present in ``db``."""
    con = duckdb.connect(db, read_only=True)
    out = {}
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    for t in TABLES:
        if t not in have:
            continue
        cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if r[0] not in VOLATILE]
        rows = con.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY ALL").fetchall()
        h = hashlib.sha256()
        for r in rows:
            h.update(repr(r).encode())
            h.update(b"\n")
        out[t] = (len(rows), h.hexdigest())
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    fp = fingerprint(ap.parse_args().db)
    total = hashlib.sha256()
    for t, (n, digest) in fp.items():
        print(f"{t:22s} {n:8d} rows  {digest}")
        total.update(digest.encode())
    print(f"{'all':22s} {sum(n for n, _ in fp.values()):8d} rows  {total.hexdigest()}")


if __name__ == "__main__":
    main()
