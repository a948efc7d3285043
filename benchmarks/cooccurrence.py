"""Benchmark: entity–answer co-occurrence counting (`ctxprior covariates cooccurrence`).

    python benchmarks/cooccurrence.py            # 10,000 fact pairs, 500 MB generated corpus
    python benchmarks/cooccurrence.py --mb 50    # quicker

1. Generates 10,000 (entity, answer) facts and a JSON-lines corpus of --mb megabytes
   (uncompressed), zstd-compressed in --shards shards, under a temporary folder in /tmp (deleted at the
   end unless --keep). Text: Zipf-distributed words, punctuation, capitalised names planted with
   their answers at random distances (inside and outside the 50-word window).
2. Counts it through the real code path (a warehouse with the facts, `cooccurrence(...)`, local
   executor with --workers processes) and reports MB/s overall, MB/s per core (uncompressed JSON
   bytes / CPU seconds of the workers) and MB/s per core from wall time.
3. Runs a naive per-document Python approach on a slice (--naive-mb) of the same documents: split
   each document into words, then for every distinct name search the document (one str.find loop
   per name), then pair up occurrences per fact. Same counts (checked), one core.
4. Prints the ratio and the estimated time for the 825 GiB Pile on a 100-core Ray cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime

import numpy as np
import zstandard

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from ctxprior.covariates.cooccurrence import cooccurrence, plan
from ctxprior.covariates.counting import Counter
from ctxprior.covariates.text import words
from ctxprior.storage import open_store

PILE_BYTES = 825 * 2**30


def make_names(rng, n_facts: int):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))

    def word():
        return "".join(rng.choice(letters, rng.integers(3, 10))).capitalize()

    answers = [" ".join(word() for _ in range(rng.integers(1, 3))) for _ in range(2000)]
    entities = [" ".join(word() for _ in range(rng.integers(1, 4))) for _ in range(n_facts)]
    facts = [(e, answers[rng.integers(len(answers))]) for e in entities]
    return facts


def make_vocab(rng, n: int = 50000):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(1, 11))) for _ in range(n)]
    punct = ["", "", "", "", "", "", ",", ".", "'s", ";", ":", ")", '"', "!", "?"]
    vocab = np.array([w + punct[rng.integers(len(punct))] for w in vocab], dtype=object)
    p = 1.0 / np.arange(1, n + 1) ** 1.07
    return vocab, p / p.sum()


def make_doc(rng, vocab, p, facts, n_words: int) -> str:
    ws = list(vocab[rng.choice(len(vocab), n_words, p=p)])
    for _ in range(max(1, n_words // 120)):  # plant a fact: entity, then its answer 1..80 words later
        e, a = facts[rng.integers(len(facts))]
        i = int(rng.integers(n_words))
        ws[i] = e
        if rng.random() < 0.7:
            j = min(n_words - 1, i + int(rng.integers(1, 80)))
            if j != i:
                ws[j] = a + ("," if rng.random() < 0.3 else "")
    if rng.random() < 0.1:
        ws[int(rng.integers(n_words))] = "naïve “quoted” café—dash"
    return " ".join(ws)


def generate(folder: str, mb: float, shards: int, facts, seed: int = 0) -> tuple[list[str], int, list[str]]:
    rng = np.random.default_rng(seed)
    vocab, p = make_vocab(rng)
    # a pool of distinct documents, reused in shuffled order to reach the size quickly
    pool = [make_doc(rng, vocab, p, facts, int(rng.integers(100, 2500))) for _ in range(3000)]
    lines = [json.dumps({"text": d, "meta": {"pile_set_name": "Synthetic"}}).encode() + b"\n" for d in pool]
    target = int(mb * 1e6)
    per = target // shards
    paths, total = [], 0
    cctx = zstandard.ZstdCompressor(level=3, threads=-1)
    for s in range(shards):
        path = os.path.join(folder, f"{s:02d}.jsonl.zst")
        size = 0
        with open(path, "wb") as f, cctx.stream_writer(f) as w:
            while size < per:
                for k in rng.permutation(len(lines)):
                    w.write(lines[k])
                    size += len(lines[k])
                    if size >= per:
                        break
        paths.append(path)
        total += size
    return paths, total, pool


def build_warehouse(db: str, facts) -> None:
    import pandas as pd

    with open_store(db) as wh, wh.transaction():
        wh.insert_arrow(
            "dataset",
            {
                "dataset_id": [1],
                "name": ["bench"],
                "source_format": ["demo"],
                "ctxprior_version": ["bench"],
                "created_at": [datetime(2024, 1, 1)],
            },
        )
        wh.insert_arrow(
            "relation",
            {
                "relation_id": [1],
                "dataset_id": [1],
                "name": ["http://x/r"],
                "short_name": ["r"],
                "is_reverse": [False],
                "position": [0],
            },
        )
        ans = sorted({a for _, a in facts})
        aid = {a: i + 1 for i, a in enumerate(ans)}
        wh.insert_arrow(
            "answer", pd.DataFrame({"answer_id": list(aid.values()), "dataset_id": 1, "name": ans})
        )
        n = len(facts)
        wh.insert_arrow(
            "entity",
            pd.DataFrame(
                {
                    "entity_id": range(1, n + 1),
                    "dataset_id": 1,
                    "name": [e for e, _ in facts],
                    "kind": "real",
                    "uri": [f"u{i}" for i in range(n)],
                }
            ),
        )
        wh.insert_arrow(
            "fact",
            pd.DataFrame(
                {
                    "fact_id": range(1, n + 1),
                    "relation_id": 1,
                    "position": range(n),
                    "entity_id": range(1, n + 1),
                    "answer_id": [aid[a] for _, a in facts],
                    "entity_kind": "real",
                }
            ),
        )


def naive_counts(docs: list[str], spec) -> tuple[np.ndarray, np.ndarray]:
    """Per document: words, then one str.find loop per distinct name, then pairs per fact."""
    name_counts = np.zeros(len(spec.names), dtype=np.int64)
    pair_counts = np.zeros(len(spec.pairs), dtype=np.int64)
    pats = [f" {n} " for n in spec.names]
    nw = [n.count(" ") + 1 for n in spec.names]
    for d in docs:
        s = " " + " ".join(words(d, spec.ignore_case, spec.punctuation)) + " "
        occ = {}
        for i, pat in enumerate(pats):
            k = s.find(pat)
            if k < 0:
                continue
            starts = []
            while k >= 0:
                starts.append(s.count(" ", 0, k))
                k = s.find(pat, k + 1)
            occ[i] = [(w, w + nw[i] - 1) for w in starts]
            name_counts[i] += len(starts)
        for j, (a, b) in enumerate(spec.pairs):
            if a in occ and b in occ:
                pairs = set()
                for x in occ[a]:
                    for y in occ[b]:
                        f, g = (x, y) if x[0] <= y[0] else (y, x)
                        if x != y and 1 <= g[0] - f[1] <= spec.window:
                            pairs.add(frozenset((x, y)))
                pair_counts[j] += len(pairs)
    return name_counts, pair_counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=500, help="corpus size in MB of JSON lines (uncompressed)")
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--naive-mb", type=float, default=1.0, help="slice measured with the naive approach")
    ap.add_argument("--keep", action="store_true", help="keep the generated corpus")
    args = ap.parse_args()

    folder = tempfile.mkdtemp(prefix="ctxprior-bench-cooc-", dir="/tmp")
    try:
        rng = np.random.default_rng(1)
        facts = make_names(rng, args.facts)
        t = time.perf_counter()
        paths, nbytes, pool = generate(folder, args.mb, args.shards, facts)
        print(
            f"generated {nbytes / 1e6:.0f} MB of JSON lines in {len(paths)} zstd shards "
            f"({sum(os.path.getsize(p) for p in paths) / 1e6:.0f} MB compressed) in {time.perf_counter() - t:.0f} s"
        )
        db = os.path.join(folder, "bench.duckdb")
        build_warehouse(db, facts)
        with open_store(db) as wh:
            pl = plan(wh, None, 50, False, "delete")
            print(f"{len(facts)} facts -> {len(pl.spec.names)} distinct names, {len(pl.spec.pairs)} pairs")
            rep = cooccurrence(wh, paths, name="bench", workers=args.workers, progress=False)
            top = wh.scalar("SELECT sum(cooccurrence) FROM cov_bench")
        mb = nbytes / 1e6
        cores = min(args.workers, len(paths))
        per_core_cpu = mb / rep.cpu_seconds
        per_core_wall = mb / (rep.seconds * cores)
        print(
            f"ctxprior: {mb:.0f} MB, {rep.n_documents} documents, {rep.n_words} words in {rep.seconds:.1f} s "
            f"wall with {cores} worker processes = {mb / rep.seconds:.1f} MB/s "
            f"({top} co-occurrences found)"
        )
        print(
            f"  per core: {per_core_cpu:.1f} MB/s per CPU-second of the workers; "
            f"{per_core_wall:.1f} MB/s per core from wall time"
        )

        # naive, on a slice of the same documents, one core
        slice_docs, size = [], 0
        for d in pool:
            slice_docs.append(d)
            size += len(json.dumps({"text": d, "meta": {"pile_set_name": "Synthetic"}}).encode()) + 1
            if size >= args.naive_mb * 1e6:
                break
        t, c = time.perf_counter(), time.process_time()
        nc, pc = naive_counts(slice_docs, pl.spec)
        _naive_wall, naive_cpu = time.perf_counter() - t, time.process_time() - c
        ctr = Counter(pl.spec)
        t, c = time.perf_counter(), time.process_time()
        ctr.add_texts(slice_docs)
        fast_cpu = time.process_time() - c
        assert np.array_equal(nc, ctr.counts.name_counts) and np.array_equal(pc, ctr.counts.pair_counts), (
            "naive and ctxprior counts differ"
        )
        naive_rate = size / 1e6 / naive_cpu
        print(
            f"naive per-document Python: {size / 1e6:.2f} MB slice in {naive_cpu:.1f} CPU s = "
            f"{naive_rate:.3f} MB/s per core (same counts as ctxprior on the slice: yes)"
        )
        print(
            f"ratio: {per_core_cpu / naive_rate:.0f}x the naive approach per core "
            f"(counting engine alone on the slice: {size / 1e6 / max(fast_cpu, 1e-9):.1f} MB/s)"
        )
        t100 = PILE_BYTES / (per_core_cpu * 1e6 * 100) / 60
        t30 = PILE_BYTES / (per_core_cpu * 1e6 * 30) / 60
        print(
            f"estimate: the 825 GiB Pile (uncompressed JSON) on a 100-core Ray cluster at {per_core_cpu:.1f} MB/s "
            f"per core: {t100:.0f} min with >= 100 shard files (one task per file; split the Pile's 30 files), "
            f"{t30:.0f} min with its 30 files as they are (30 tasks busy); assumes the workers read "
            f"{PILE_BYTES / (t100 * 60) / 1e9 / 3:.1f} GB/s of zstd input in aggregate"
        )
        print(
            f"targets: >= 20 MB/s per core: {'met' if per_core_cpu >= 20 else 'NOT met'}; "
            f">= 20x naive: {'met' if per_core_cpu / naive_rate >= 20 else 'NOT met'}"
        )
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
