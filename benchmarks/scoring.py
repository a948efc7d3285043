"""Scoring speed: fast first-token path vs the naive reference, measured in the same run.

Workload (issue 3): SmolLM2-135M on CPU, the demo dataset's `capital` relation, 16 entities
(8 real, 8 fake) x 96 contexts (each entity in 6: 2 base, 2 assertive, 2 negation) x 1 open query
form = 1536 prompts (+ 16 no-context prompts in both paths).

    python benchmarks/scoring.py [--entities 16] [--contexts 96] [--model smollm2-135m] [--threads N]
                                 [--skip-naive] [--repeats R]

Prints prompts/s of both paths, their ratio, and the largest |fast - naive| difference (nats);
then the cost of ``--per-layer`` (logit-lens χ, and χ + ψ, of every layer) against the plain
fast path, each timed R times in turn in the same run (best of R).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from naive_scoring import naive_first_token

from ctxprior.ingest.demo import ingest_demo
from ctxprior.sampling.draw import draw_sample
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import first_token
from ctxprior.scoring.models import load_model
from ctxprior.storage import open_store


def workload(n_entities: int, n_contexts: int, relation: str = "capital", seed: int = 11):
    with tempfile.TemporaryDirectory() as d, open_store(str(Path(d) / "bench.duckdb")) as wh:
        ingest_demo(wh, only=["demo"])
        sid = draw_sample(
            wh,
            dataset="demo",
            relations=[relation],
            n_entities=n_entities,
            n_contexts=n_contexts,
            context_types=["base", "assertive", "negation"],
            seed=seed,
        )
        contexts = [
            r[0] for r in wh.query("SELECT text FROM context WHERE sample_id = ? ORDER BY ordinal", [sid])
        ]
        template = wh.scalar(
            """SELECT q.template FROM query_form q JOIN relation r USING (relation_id)
                                    WHERE r.short_name = ? AND q.query_type = 'open' AND q.ordinal = 0""",
            [relation],
        )
        ents = wh.query(
            """SELECT e.name, f.entity_kind FROM sample_fact sf JOIN fact f USING (fact_id)
                               JOIN entity e ON e.entity_id = f.entity_id WHERE sf.sample_id = ?
                               ORDER BY sf.ordinal""",
            [sid],
        )
    queries = [template.replace("{entity}", e) for e, _ in ents]
    return contexts, queries, ents


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=16)
    ap.add_argument("--contexts", type=int, default=96)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--skip-naive", action="store_true", help="only the fast path and its --per-layer cost")
    ap.add_argument(
        "--repeats", type=int, default=1, help="timings per variant of the --per-layer comparison"
    )
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    contexts, queries, ents = workload(args.entities, args.contexts)
    n_prompts = len(contexts) * len(queries)
    kinds = {k: sum(1 for _, x in ents if x == k) for k in ("real", "fake")}
    lm = load_model(args.model, device="cpu")
    print(
        f"model {args.model} ({lm.revision[:19]}...), CPU, {torch.get_num_threads()} threads; "
        f"{len(queries)} entities ({kinds['real']} real, {kinds['fake']} fake) x {len(contexts)} contexts "
        f"x 1 open query form = {n_prompts} prompts (+{len(queries)} no-context)"
    )

    engine = Engine(lm, batch_size=args.batch_size)
    first_token(engine, contexts[:4], queries[:2])  # warm-up (both paths share the loaded model)
    engine = Engine(lm, batch_size=args.batch_size)
    t = time.perf_counter()
    fast = first_token(engine, contexts, queries, prior_topk=10)
    t_fast = time.perf_counter() - t

    print(
        f"fast : {t_fast:8.1f} s  {n_prompts / t_fast:8.1f} prompts/s  "
        f"({engine.tokens_computed} tokens through the model, {engine.forward_calls} forward calls)"
    )
    if not args.skip_naive:
        naive_comparison(lm, contexts, queries, fast, t_fast)
    per_layer_comparison(lm, contexts, queries, args.batch_size, args.repeats)


def naive_comparison(lm, contexts, queries, fast, t_fast: float) -> None:
    n_prompts = len(contexts) * len(queries)
    t = time.perf_counter()
    naive = naive_first_token(lm.model, lm.tokenizer, contexts, queries, batch_size=32)
    t_naive = time.perf_counter() - t

    diff_psi = max(float(np.max(np.abs(f.persuasion - n["persuasion"]))) for f, n in zip(fast, naive))
    diff_chi = max(abs(f.susceptibility - n["susceptibility"]) for f, n in zip(fast, naive))
    print(f"naive: {t_naive:8.1f} s  {n_prompts / t_naive:8.1f} prompts/s")
    print(
        f"speed-up: {t_naive / t_fast:.2f}x   max |fast - naive|: psi {diff_psi:.2e} nats, chi {diff_chi:.2e} nats"
    )


def per_layer_comparison(lm, contexts, queries, batch_size: int, repeats: int) -> None:
    """The plain fast path against --per-layer chi and psi, timed in turn (best of ``repeats``)."""
    best = {None: float("inf"), "chi": float("inf"), "psi": float("inf")}
    out = {}
    for _ in range(max(1, repeats)):
        for mode in best:
            t = time.perf_counter()
            out[mode] = first_token(
                Engine(lm, batch_size=batch_size), contexts, queries, prior_topk=10, per_layer=mode
            )
            best[mode] = min(best[mode], time.perf_counter() - t)
    n_layers = len(out["chi"][0].by_layer["susceptibility"])
    exact = all(r.by_layer["susceptibility"][-1] == p.susceptibility for r, p in zip(out["psi"], out[None]))
    base = best[None]
    print(
        f"per-layer ({n_layers} layers incl. embeddings, best of {max(1, repeats)}): plain {base:.1f} s, "
        f"--per-layer {best['chi']:.1f} s (x{best['chi'] / base:.2f}), "
        f"--per-layer psi {best['psi']:.1f} s (x{best['psi'] / base:.2f}); last layer == final chi: {exact}"
    )


if __name__ == "__main__":
    main()
