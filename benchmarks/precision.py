"""How far do ψ and χ move when the model runs in 16-bit instead of float32?

Scores one demo workload (relation capital: real and fake entities, base / assertive / negation
contexts, open and closed query forms) with SmolLM2-135M on the CPU in float32, bfloat16 and
float16 (the log-softmax, mixture and KL are float64 in every case: only the model's forward pass
changes), and prints the deviation of ψ (separately for relevant and irrelevant contexts) and of χ
from float32. The CUDA default dtype is chosen from this (docs/scoring.md#precision).

    python benchmarks/precision.py [--entities 8] [--contexts 48] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def workload(entities: int, contexts: int):
    """(contexts, their entity, [(query type, queries, entity names)]) from the bundled demo."""
    import ctxprior

    db = Path(tempfile.mkdtemp()) / "precision.duckdb"
    wh = ctxprior.open(db, write=True)
    wh.datasets.ingest_demo(only=["demo"])
    sid = wh.samples.draw("demo", relations=["capital"], entities=entities, contexts=contexts, seed=11)
    ctx = wh.sql("SELECT context, entity FROM v_context WHERE sample_id = ? ORDER BY ordinal", [sid])
    ents = wh.sql("SELECT entity, answer FROM v_sample_entity WHERE sample_id = ? ORDER BY ordinal", [sid])
    forms = wh.sql(
        "SELECT q.query_type, q.template FROM query_form q JOIN relation r USING (relation_id) "
        "JOIN dataset d USING (dataset_id) WHERE d.name = 'demo' AND r.short_name = 'capital' "
        "ORDER BY q.query_type DESC, q.ordinal"
    )
    queries = [
        (qt, [t.replace("{entity}", e).replace("{answer}", a or "") for e, a in ents.itertuples(index=False)])
        for qt, t in forms.itertuples(index=False)
    ]
    return list(ctx["context"]), list(ctx["entity"]), list(ents["entity"]), queries


def score(dtype: str, contexts, queries):
    from ctxprior.scoring.engine import Engine
    from ctxprior.scoring.estimators import first_token
    from ctxprior.scoring.models import load_model

    lm = load_model("smollm2-135m", device="cpu", dtype=dtype)
    engine = Engine(lm)
    t0 = time.perf_counter()
    psi, chi = [], []
    for qt, qs in queries:
        res = first_token(engine, contexts, qs, prior_topk=0, with_prior=False)
        psi.append(np.stack([r.persuasion for r in res]))  # [entities, contexts]
        chi.append(np.array([r.susceptibility for r in res]))  # [entities]
    return (
        np.stack(psi),
        np.stack(chi),
        time.perf_counter() - t0,
    )  # [forms, entities, contexts], [forms, entities]


def describe(name: str, dev: np.ndarray, ref: np.ndarray) -> str:
    rel = dev / np.maximum(np.abs(ref), 1e-12)
    return (
        f"{name:<26} max |Δ| {np.max(np.abs(dev)):.2e}  median |Δ| {np.median(np.abs(dev)):.2e}  "
        f"median |Δ|/value {np.median(np.abs(rel)):.1%}  (median value {np.median(ref):.3g} nats)"
    )


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=8)
    ap.add_argument("--contexts", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    contexts, ctx_entity, entities, queries = workload(args.entities, args.contexts)
    relevant = np.array([[ce == e for ce in ctx_entity] for e in entities])  # [entities, contexts]
    n = len(queries) * len(entities) * len(contexts)
    print(
        f"SmolLM2-135M on the CPU; {len(entities)} entities (half fake) x {len(contexts)} contexts x "
        f"{len(queries)} query forms = {n} prompts; {relevant.sum() * len(queries)} relevant psi values"
    )
    ref_psi, ref_chi, t = score("float32", contexts, queries)
    print(f"float32: {t:.1f} s")
    for dtype in ("bfloat16", "float16"):
        psi, chi, t = score(dtype, contexts, queries)
        d_psi, d_chi = psi - ref_psi, chi - ref_chi
        mask = np.broadcast_to(relevant, psi.shape)
        print(f"{dtype}: {t:.1f} s")
        print("  " + describe("psi, relevant contexts", d_psi[mask], ref_psi[mask]))
        print("  " + describe("psi, irrelevant contexts", d_psi[~mask], ref_psi[~mask]))
        print("  " + describe("chi", d_chi, ref_chi))
        # does the precision change the paper's relevant-vs-irrelevant comparison?
        flips = np.mean(
            np.sign(psi[mask].mean() - psi[~mask].mean())
            != np.sign(ref_psi[mask].mean() - ref_psi[~mask].mean())
        )
        order = np.mean(np.argsort(chi, axis=1) == np.argsort(ref_chi, axis=1))
        print(
            f"  chi ranking of entities per query form unchanged at {order:.0%} of positions; "
            f"relevant > irrelevant sign flipped: {bool(flips)}"
        )


if __name__ == "__main__":
    main()
