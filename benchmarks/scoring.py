"""Scoring speed: fast first-token path vs the naive reference, measured in the same run.

Workload (issue 3): SmolLM2-135M on CPU, the demo dataset's `capital` relation, 16 entities
(8 real, 8 fake) x 96 contexts (each entity in 6: 2 base, 2 assertive, 2 negation) x 1 open query
form = 1536 prompts (+ 16 no-context prompts in both paths).

    python benchmarks/scoring.py [--entities 16] [--contexts 96] [--model smollm2-135m] [--threads N]

Prints prompts/s of both paths, their ratio, and the largest |fast - naive| difference (nats).
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
from naive_scoring import naive_first_token  # noqa: E402

from ctxprior.ingest.demo import ingest_demo  # noqa: E402
from ctxprior.ingest.sampling import draw_sample  # noqa: E402
from ctxprior.schema import open_warehouse  # noqa: E402
from ctxprior.scoring.engine import Engine  # noqa: E402
from ctxprior.scoring.estimators import first_token  # noqa: E402
from ctxprior.scoring.models import load_model  # noqa: E402


def workload(n_entities: int, n_contexts: int, relation: str = "capital", seed: int = 11):
    with tempfile.TemporaryDirectory() as d:
        with open_warehouse(str(Path(d) / "bench.duckdb")) as wh:
            ingest_demo(wh, only=["demo"])
            sid = draw_sample(wh, dataset="demo", relations=[relation], n_entities=n_entities,
                              n_contexts=n_contexts, context_types=["base", "assertive", "negation"], seed=seed)
            contexts = [r[0] for r in wh.query("SELECT text FROM context WHERE sample_id = ? ORDER BY ordinal", [sid])]
            template = wh.scalar("""SELECT q.template FROM query_form q JOIN relation r USING (relation_id)
                                    WHERE r.short_name = ? AND q.query_type = 'open' AND q.ordinal = 0""", [relation])
            ents = wh.query("""SELECT e.name, f.entity_kind FROM sample_fact sf JOIN fact f USING (fact_id)
                               JOIN entity e ON e.entity_id = f.entity_id WHERE sf.sample_id = ?
                               ORDER BY sf.ordinal""", [sid])
    queries = [template.replace("{entity}", e) for e, _ in ents]
    return contexts, queries, ents


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=16)
    ap.add_argument("--contexts", type=int, default=96)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    contexts, queries, ents = workload(args.entities, args.contexts)
    n_prompts = len(contexts) * len(queries)
    kinds = {k: sum(1 for _, x in ents if x == k) for k in ("real", "fake")}
    lm = load_model(args.model, device="cpu")
    print(f"model {args.model} ({lm.revision[:19]}...), CPU, {torch.get_num_threads()} threads; "
          f"{len(queries)} entities ({kinds['real']} real, {kinds['fake']} fake) x {len(contexts)} contexts "
          f"x 1 open query form = {n_prompts} prompts (+{len(queries)} no-context)")

    engine = Engine(lm, batch_size=args.batch_size)
    first_token(engine, contexts[:4], queries[:2])  # warm-up (both paths share the loaded model)
    engine = Engine(lm, batch_size=args.batch_size)
    t = time.perf_counter()
    fast = first_token(engine, contexts, queries, topk=10)
    t_fast = time.perf_counter() - t

    t = time.perf_counter()
    naive = naive_first_token(lm.model, lm.tokenizer, contexts, queries, batch_size=32)
    t_naive = time.perf_counter() - t

    diff_psi = max(float(np.max(np.abs(f.persuasion - n["persuasion"]))) for f, n in zip(fast, naive))
    diff_chi = max(abs(f.susceptibility - n["susceptibility"]) for f, n in zip(fast, naive))
    print(f"fast : {t_fast:8.1f} s  {n_prompts / t_fast:8.1f} prompts/s  "
          f"({engine.tokens_computed} tokens through the model, {engine.forward_calls} forward calls)")
    print(f"naive: {t_naive:8.1f} s  {n_prompts / t_naive:8.1f} prompts/s")
    print(f"speed-up: {t_naive / t_fast:.2f}x   max |fast - naive|: psi {diff_psi:.2e} nats, chi {diff_chi:.2e} nats")


if __name__ == "__main__":
    main()
