"""Small units that generate in packs (``units.packs``, ``LocalExecutor._packs``) against the same
units computed one at a time, on the real SmolLM2-135M and a fixed-design dataset.

A fixed design (NQ-Swap, ConflictQA, DRUID, an own table) makes one unit per item, with 1-10
(question, passage) prompts; every prompt is generated greedily for its outcome label (up to
``--new-tokens``). Alone, each unit decodes its few rows for as many steps as its longest row;
in a pack, the units' rows decode together. The dataset is an own table of ``--items`` capitals
(the bundled demo's capital facts; per item a supporting passage, a refuting one naming another
capital, an unrelated one), ingested with ``ingest table`` and scored with the defaults. The same
engine computes the units both ways in one process, alternating; the benchmark prints wall
seconds per way, the ratio, and whether every stored table is equal.

    python benchmarks/packs.py [--items 30] [--new-tokens 64] [--repeats 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path

import torch

import ctxprior
from ctxprior.scoring.executors import local
from ctxprior.scoring.models import load_model

DEMO = Path(__file__).resolve().parents[1] / "src" / "ctxprior" / "ingest" / "data" / "demo_yago.json"
SPEC = """item: id
question: question
gold: answer
context_text: passage
context_label: stance
context_answer: passage_answer
labels:
  supports: gold
  refutes: conflicting
  unrelated: irrelevant
"""
TABLES = ("persuasion", "susceptibility", "reliance", "generation")


def write_table(folder: Path, items: int) -> Path:
    """An own fixed-design table of ``items`` capitals, three passages each."""
    rel = json.loads(DEMO.read_text())["http://yago-knowledge.org/resource/capital"]
    pairs = list(zip(rel["entities"], rel["answers"]))[:items]
    path = folder / "capitals.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer", "passage", "stance", "passage_answer"])
        for i, (country, capital) in enumerate(pairs):
            other = pairs[(i + 1) % len(pairs)][1]
            q = f"What is the capital of {country}?"
            w.writerow([i, q, capital, f"{capital} is the capital of {country}.", "supports", capital])
            w.writerow([i, q, capital, f"{other} is the capital of {country}.", "refutes", other])
            w.writerow([i, q, capital, "Bananas are rich in potassium.", "unrelated", ""])
    (folder / "capitals.yaml").write_text(SPEC)
    return path


def rows(wh, run_id: int) -> dict[str, list]:
    out = {}
    for t in TABLES:
        df = wh.sql(f"SELECT * EXCLUDE (run_id) FROM {t} WHERE run_id = {run_id}")
        out[t] = sorted(map(tuple, df.astype(str).values.tolist()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=30)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tmp = Path(tempfile.mkdtemp())
    path = write_table(tmp, a.items)
    wh = ctxprior.open(str(tmp / "w.duckdb"), write=True)
    wh.datasets.ingest("table", str(path), spec=str(tmp / "capitals.yaml"), name="capitals")
    sid = wh.samples.draw("capitals", design="fixed")
    lm = load_model("smollm2-135m", device="cpu")
    packs = local.LocalExecutor._packs
    ways = {"one at a time": lambda self, inputs: ([i] for i in inputs), "packs": packs}
    best: dict[str, float] = {}
    got: dict[str, dict] = {}
    units = 0
    for _ in range(a.repeats):
        for name, way in ways.items():
            local.LocalExecutor._packs = way
            t = time.perf_counter()
            run = wh.runs.score(
                sid, model=lm, max_new_tokens=a.new_tokens, fresh=True, progress=False, log=None
            )
            best[name] = min(best.get(name, 1e9), time.perf_counter() - t)
            got[name] = rows(wh, run.id)
            units = run.units_total
    local.LocalExecutor._packs = packs
    print(
        f"SmolLM2-135M, CPU ({torch.get_num_threads()} threads), {a.items} items, {units} units, "
        f"{a.new_tokens} new tokens, best of {a.repeats}"
    )
    for name in ways:
        print(f"  {name:14s} {best[name]:7.2f} s")
    same = {t: got["packs"][t] == got["one at a time"][t] for t in TABLES}
    print(
        f"  packs / one at a time: {best['one at a time'] / best['packs']:.2f}x faster; tables equal: {same}"
    )


if __name__ == "__main__":
    main()
