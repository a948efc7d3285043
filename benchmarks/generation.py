"""Greedy generation batches: one batch per suffix length (before) against rows of every length in
one batch (``Engine._pads_between``), on the real SmolLM2-135M and the demo's prompts.

The same engine generates the same prompts both ways in one process, alternating, and the texts
must be equal. Prints wall seconds, generation batches and decode steps per way, and the ratio.

    python benchmarks/generation.py [--entities 4] [--contexts 12] [--new-tokens 8] [--repeats 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

import ctxprior
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.models import load_model
from ctxprior.scoring.options import ScoreConfig
from ctxprior.scoring.prompts import prompt_format
from ctxprior.scoring.runs.plan import load_inputs, plan_units
from ctxprior.scoring.texts import unit_prompts


def demo_inputs(entities: int, contexts: int) -> list:
    """The demo capital sample's open units (``UnitInput``), as a run plans and loads them
    (``plan_units`` -> ``load_inputs``)."""
    with tempfile.TemporaryDirectory() as d:
        wh = ctxprior.open(str(Path(d) / "w.duckdb"), write=True)
        wh.datasets.ingest_demo(only=["demo"])
        sid = wh.samples.draw("demo", relations=["capital"], entities=entities, contexts=contexts, seed=11)
        config = ScoreConfig(query_types=("open",), shard_size=entities)
        with wh.connect() as store:
            return load_inputs(store, sid, 0, plan_units(store, sid, config))


def demo_args(doc: str) -> argparse.Namespace:
    """The command line of a benchmark on the demo's prompts (its docstring's first line as help)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--entities", type=int, default=4)
    ap.add_argument("--contexts", type=int, default=12)
    ap.add_argument("--new-tokens", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    return ap.parse_args()


def demo_prompts(entities: int, contexts: int) -> tuple[list[str], list[list[int]]]:
    """The demo capital sample's open prompts, built by the code a run builds them with
    (``demo_inputs`` -> ``unit_prompts``, raw format), and their prefix groups (the prompts of
    one unit that share a context)."""
    inputs = demo_inputs(entities, contexts)
    texts: list[str] = []
    groups: list[list[int]] = []
    for inp in inputs:
        by_context: dict[int, list[int]] = {}
        for _, context_id, text in unit_prompts(inp, prompt_format(None, "raw")):
            if context_id is not None:
                by_context.setdefault(context_id, []).append(len(texts))
            texts.append(text)
        groups += by_context.values()
    return texts, groups


def main() -> None:
    a = demo_args(__doc__)
    torch.manual_seed(0)
    lm = load_model("smollm2-135m", device="cpu")
    texts, groups = demo_prompts(a.entities, a.contexts)
    eng = Engine(lm)
    seqs = eng.encode(texts)
    ways = {"by length": lambda longest: False, "mixed": Engine._pads_between.__get__(eng)}
    best, out, calls = {}, {}, {}
    for _ in range(a.repeats):
        for name, rule in ways.items():
            eng._pads_between = rule  # type: ignore[method-assign]
            before = eng.forward_calls
            t = time.perf_counter()
            out[name] = eng.greedy(seqs, a.new_tokens, groups)
            best[name] = min(best.get(name, 1e9), time.perf_counter() - t)
            calls[name] = eng.forward_calls - before
    print(
        f"SmolLM2-135M, CPU ({torch.get_num_threads()} threads), {len(texts)} prompts, {a.new_tokens} new tokens"
    )
    for name in ways:
        print(f"  {name:10s} {best[name]:7.2f} s  {calls[name]:4d} forward calls (prefill + decode steps)")
    print(
        f"  mixed / by length: {best['by length'] / best['mixed']:.2f}x faster; texts equal: {out['mixed'] == out['by length']}"
    )


if __name__ == "__main__":
    main()
