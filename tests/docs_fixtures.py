"""Inputs that docs pages build in a hidden setup step (scripts/docs_examples.py):

    python tests/docs_fixtures.py analyses ctxprior.duckdb   # docs/analyses.md: synthetic runs
    python tests/docs_fixtures.py dynamic ctxprior.duckdb    # one score-dynamic run only
    python tests/docs_fixtures.py corpus ctxprior.duckdb corpus/       # docs/covariates.md
    python tests/docs_fixtures.py yago-sample yago-sample.nt.gz        # docs/covariates.md
    python tests/docs_fixtures.py tiny-model tiny                      # docs/scaling.md

The synthetic warehouses' rows are inserted directly by tests/analysis_fixtures.py (no model), so
a page builds one in about a second; the effects are planted (see that module)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from analysis_fixtures import (
    add_cooccurrence,
    add_dynamic,
    add_friend_enemy,
    add_gender,
    clone_run,
    make_yago_like,
)

from ctxprior.storage import open_store


def analyses(wh) -> None:
    """Runs 1-4: models m-small, m-big x sample seeds 11, 12 (relation rel2 holds a NaN score, rel3
    constant scores); 5 friend-enemy, 6 gender; 7 is run 3 rescored in bfloat16 on a sample with
    seed 13, 8 run 3 scored again on the same sample. A co-occurrence covariate view."""
    make_yago_like(wh, models=("m-small", "m-big"), seeds=(11, 12), nan_relation=2, constant_relation=3)
    add_friend_enemy(wh)
    add_gender(wh)
    add_cooccurrence(wh, seen_fakes=["fake0_1"])
    wh.execute("UPDATE run SET dtype = 'float32'")
    clone_run(wh, 3, sample={"seed": 13}, dtype="bfloat16")
    clone_run(wh, 3)


def dynamic(wh) -> None:
    """One finished score-dynamic run (m-dyn) and nothing else."""
    add_dynamic(wh)


def corpus(db: str, folder: str) -> None:
    """The demo's generated corpus (ingest.demo.write_demo_corpus) in 4 shards of 2,000 documents:
    00 and 01 zstd, 02 and 03 gzip, 03 with a line that is not JSON after its documents."""
    from ctxprior.ingest.demo import write_demo_corpus

    out = Path(folder)
    w = open_store(db, read_only=True)
    for i in range(4):
        write_demo_corpus(w, out / f"{i:02d}.jsonl.zst", seed=i, n_documents=2000)
    w.close()
    import zstandard

    for i in (2, 3):
        zst = out / f"{i:02d}.jsonl.zst"
        raw = zstandard.ZstdDecompressor().decompressobj().decompress(zst.read_bytes())
        raw += b"\nnot JSON" if i == 3 else b""
        with gzip.GzipFile(out / f"{i:02d}.jsonl.gz", "wb", mtime=0) as f:  # same bytes every time
            f.write(raw)
        zst.unlink()


YAGO, SCHEMA = "http://yago-knowledge.org/resource/", "http://schema.org/"
SAMPLE_TRIPLES = [  # Argentina in 4 triples (1 capital), Slovakia in 2 (1 officialLanguage)
    ("Argentina", YAGO + "capital", "Buenos_Aires"),
    ("Argentina", YAGO + "currency", "Argentine_peso"),
    ("Patagonia", YAGO + "locatedIn", "Argentina"),
    ("Argentina", YAGO + "memberOf", "Mercosur"),
    ("Slovakia", SCHEMA + "officialLanguage", "Slovak_language"),
    ("Slovakia", YAGO + "memberOf", "European_Union"),
]


def yago_sample(path: str) -> None:
    """Six N-Triples about two entities of docs/covariates.md's sample, gzipped."""
    lines = "".join(f"<{YAGO}{s}> <{p}> <{YAGO}{o}> .\n" for s, p, o in SAMPLE_TRIPLES)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(lines.encode())


def tiny_model(folder: str) -> None:
    """The tests' tiny random llama with SmolLM2's tokenizer, saved to ``folder``."""
    from scale_helpers import make_tiny_folder

    make_tiny_folder(Path(folder))


if __name__ == "__main__":
    kind, *args = sys.argv[1:]
    if kind == "tiny-model":
        tiny_model(*args)
    elif kind == "corpus":
        corpus(*args)
    elif kind == "yago-sample":
        yago_sample(*args)
    else:
        w = open_store(args[0])
        {"analyses": analyses, "dynamic": dynamic}[kind](w)
        w.close()
