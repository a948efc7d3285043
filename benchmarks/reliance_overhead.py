"""What the reliance measures (shift, JSD, confidence gain, answer probabilities, argmax outcomes;
``metrics.vocab_pass``) add to the scoring math of a unit, on the device, and how exactly the
device matches the numpy reference.

A unit's log-prob rows ``[queries, contexts, vocab]`` (float32, random, on the device) are scored
by ``estimators.scores_batch`` without the no-context rows (ψ/χ only: the baseline) and with them
(ψ/χ, prior entropy and KL, and every reliance measure), alternating, best of ``--repeats``.

    python benchmarks/reliance_overhead.py [--queries 16] [--contexts 600] [--vocab 49152] [--device cuda]

Prints both times, their ratio, and max |device − numpy| over one query's measures.

``--generation MODEL`` (e.g. ``smollm2-135m``) also measures what the outcomes' greedy generation
adds to a whole unit (``units.compute_unit``: the forward passes, the measures, the rows): one unit
of ``--gen-facts`` capital queries x ``--gen-contexts`` one-sentence contexts, scored with
``--outcome-rule none`` (the baseline) and with the default (``recall``, ``--max-new-tokens``
64), alternating, best of ``--repeats``; prints both times and their ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ctxprior.scoring.estimators import scores_batch
from ctxprior.scoring.metrics import RELIANCE_KEYS, reliance_np


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=16)
    ap.add_argument("--contexts", type=int, default=600)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--generation", metavar="MODEL", help="also time a unit with and without generation")
    ap.add_argument("--gen-facts", type=int, default=8)
    ap.add_argument("--gen-contexts", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    args = ap.parse_args(argv)
    _measures(args)
    if args.generation:
        _generation_cost(args)


def _measures(args) -> None:
    g = torch.Generator(device="cpu").manual_seed(0)
    q, c, v = args.queries, args.contexts, args.vocab
    logits = torch.randn((q * (c + 1), v), generator=g) * 4
    table = torch.log_softmax(logits, -1).to(args.device)
    rows = torch.arange(q * c, device=args.device).view(q, c)
    prior = torch.arange(q * c, q * (c + 1), device=args.device)
    ctx = torch.randint(-1, v, (q, c), generator=g).to(args.device)
    gold = torch.randint(0, v, (q,), generator=g).to(args.device)
    best = {"psi/chi only": float("inf"), "with reliance": float("inf")}
    for _ in range(args.repeats):
        for name, kw in (("psi/chi only", {"prior": None}), ("with reliance", {"prior": prior})):
            _sync(args.device)
            t0 = time.perf_counter()
            res = scores_batch(
                table, rows, kw["prior"], 0, 0, str, (ctx, gold) if kw["prior"] is not None else None
            )
            _sync(args.device)
            best[name] = min(best[name], time.perf_counter() - t0)
    print(f"{q} queries x {c} contexts x vocab {v} on {args.device}")
    for name, t in best.items():
        print(f"{name:>14}: {t * 1e3:8.1f} ms  ({t / (q * c) * 1e6:6.2f} µs/prompt)")
    print(f"ratio (with / without): {best['with reliance'] / best['psi/chi only']:.2f}x")
    ref = reliance_np(
        table[:c].double().cpu().numpy(),
        table[q * c].double().cpu().numpy(),
        ctx[0].cpu().numpy(),
        int(gold[0]),
    )
    err = max(
        float(np.nanmax(np.abs(np.asarray(res[0].reliance[k], np.float64) - ref[k]))) for k in RELIANCE_KEYS
    )
    print(f"max |device - numpy| over query 0's measures: {err:.1e}")


COUNTRIES = [
    ("France", "Paris"),
    ("Spain", "Madrid"),
    ("Italy", "Rome"),
    ("Japan", "Tokyo"),
    ("Egypt", "Cairo"),
    ("Peru", "Lima"),
    ("Kenya", "Nairobi"),
    ("Chile", "Santiago"),
]


def _generation_cost(args) -> None:
    """One unit through ``compute_unit`` with ``--outcome-rule none`` and with ``recall``."""
    from dataclasses import replace

    from ctxprior.scoring.engine import Engine
    from ctxprior.scoring.models import load_model
    from ctxprior.scoring.options import ScoreConfig
    from ctxprior.scoring.texts import UnitInput, UnitSpec
    from ctxprior.scoring.units import compute_unit

    lm = load_model(args.generation, device=args.device)
    pairs = [COUNTRIES[i % len(COUNTRIES)] for i in range(max(args.gen_facts, args.gen_contexts))]
    facts = [(i, e, a) for i, (e, a) in enumerate(pairs[: args.gen_facts])]
    contexts = [
        (j, f"The capital of {e} is {pairs[(j + 1) % len(pairs)][1]}.\n", pairs[(j + 1) % len(pairs)][1])
        for j, (e, _) in enumerate(pairs[: args.gen_contexts])
    ]
    inp = UnitInput(
        UnitSpec(0, 1, 1, 0, tuple(f for f, _, _ in facts)),
        1,
        "Q: What is the capital of {entity}?\nA:",
        "open",
        facts,
        contexts,
        "",
    )
    base = ScoreConfig(estimator="first-token", max_new_tokens=args.max_new_tokens, shard_size=len(facts))
    configs = {"no generation": replace(base, outcome_rule="none"), "generation": base}
    best = dict.fromkeys(configs, float("inf"))
    engine = Engine(lm)
    for _ in range(args.repeats):
        for name, cfg in configs.items():
            _sync(args.device)
            t0 = time.perf_counter()
            tables = compute_unit(engine, inp, cfg)
            _sync(args.device)
            best[name] = min(best[name], time.perf_counter() - t0)
    labels = tables["generation"].column("label").to_pylist()
    print(
        f"unit of {len(facts)} queries x {len(contexts)} contexts with {args.generation} on {args.device}, "
        f"up to {args.max_new_tokens} new tokens"
    )
    for name, t in best.items():
        print(f"{name:>14}: {t * 1e3:8.1f} ms")
    print(f"ratio (generation / none): {best['generation'] / best['no generation']:.2f}x")
    print("labels: " + ", ".join(f"{k} {labels.count(k)}" for k in sorted(set(labels))))


if __name__ == "__main__":
    main()
