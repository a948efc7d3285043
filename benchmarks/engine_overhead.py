"""Host overhead of the engine: today's engine against the one before the GPU rewrite (issue 18).

A paper-shaped work unit -- 600 contexts x 16 entities = 9,600 prompts (+16 no-context prompts),
synthetic YAGO-shaped token ids (contexts of 8-24 tokens ending in a newline, a 6-token query head,
1-4 token entity names, a 3-token tail) -- on a deep, narrow random Llama (24 layers, hidden 32,
vocab 512) with batch size 1024, so the model itself is cheap and the engine's own work shows.
Forward hooks on the model body time the forward passes; the rest of the wall time is the
engine's own work (planning, cache assembly, transfers, the ψ/χ math). Both engines score the same
unit in the same process, alternating, and the ψ/χ they return are compared.

    python benchmarks/engine_overhead.py [--contexts 600] [--entities 16] [--layers 24] [--repeats 3]

Prints, per engine: wall s, forward s, own µs per prompt, forward calls, prompts/s; then the
ratios (targets: own work >= 10x less, forward calls >= 4x fewer, wall >= 1.5x faster).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_v1

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import scores_batch
from ctxprior.scoring.models import LoadedModel


def yago_unit(n_contexts: int, n_entities: int, vocab: int, seed: int = 0):
    """(context token ids, query token ids): a unit's prompts are every context + every query."""
    rng = np.random.default_rng(seed)
    newline, head, tail = 10, [20, 21, 22, 23, 24, 25], [30, 31, 32]
    contexts = [
        tuple(rng.integers(40, vocab, rng.integers(7, 24)).tolist()) + (newline,) for _ in range(n_contexts)
    ]
    queries = [
        tuple(head + rng.integers(40, vocab, rng.integers(1, 5)).tolist() + tail) for _ in range(n_entities)
    ]
    return contexts, queries


def random_llama(layers: int, hidden: int, vocab: int) -> LoadedModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
    )
    return LoadedModel(
        model=LlamaForCausalLM(cfg).eval(),
        tokenizer=None,
        model_id="random-llama",
        revision=None,
        dtype="float32",
        device="cpu",
    )


class ForwardTimer:
    """Wall time spent inside the model body (forward pre-hook to forward hook)."""

    def __init__(self, module):
        self.total, self._t = 0.0, 0.0
        module.register_forward_pre_hook(lambda *a: self._start())
        module.register_forward_hook(lambda *a: self._stop())

    def _start(self):
        self._t = time.perf_counter()

    def _stop(self):
        self.total += time.perf_counter() - self._t


def unit_seqs(contexts, queries):
    nc, nq = len(contexts), len(queries)
    seqs = [c + q for q in queries for c in contexts] + list(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    return seqs, groups


def run_new(lm, contexts, queries, batch_size):
    eng = Engine(lm, batch_size=batch_size)
    seqs, groups = unit_seqs(contexts, queries)
    nc, nq = len(contexts), len(queries)
    table, row_of = eng.last_logprobs(seqs, groups)
    (idx,) = eng.to_device(np.asarray(row_of))
    res = scores_batch(table, idx[: nq * nc].view(nq, nc), idx[nq * nc :], 10, 0, str)
    return eng, np.stack([r.persuasion for r in res]), np.array([r.susceptibility for r in res])


def run_old(lm, contexts, queries, batch_size):
    eng = engine_v1.Engine(lm, batch_size=batch_size)
    seqs, groups = unit_seqs(contexts, queries)
    table, row_of = eng.last_logprobs(seqs, groups)
    psi, chi, _ = engine_v1.scores_v1(table, row_of, len(contexts), len(queries))
    return eng, psi, chi


def measure(fn, lm, timer, contexts, queries, batch_size):
    timer.total = 0.0
    t0 = time.perf_counter()
    eng, psi, chi = fn(lm, contexts, queries, batch_size)
    wall = time.perf_counter() - t0
    return {"wall": wall, "forward": timer.total, "calls": eng.forward_calls, "psi": psi, "chi": chi}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contexts", type=int, default=600)
    ap.add_argument("--entities", type=int, default=16)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs of each engine (best kept)")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    lm = random_llama(args.layers, args.hidden, args.vocab)
    timer = ForwardTimer(lm.model.base_model)
    contexts, queries = yago_unit(args.contexts, args.entities, args.vocab)
    n = len(contexts) * len(queries)
    print(
        f"random Llama: {args.layers} layers, hidden {args.hidden}, vocab {args.vocab}; CPU, "
        f"{torch.get_num_threads()} threads; {len(contexts)} contexts x {len(queries)} entities = {n} prompts "
        f"(+{len(queries)} no-context), batch size {args.batch_size}"
    )
    with torch.inference_mode():
        measure(run_new, lm, timer, contexts[:20], queries[:4], args.batch_size)  # warm-up
        measure(run_old, lm, timer, contexts[:20], queries[:4], args.batch_size)
        best: dict[str, dict] = {}
        for _ in range(args.repeats):
            for name, fn in (("before", run_old), ("now", run_new)):
                m = measure(fn, lm, timer, contexts, queries, args.batch_size)
                if name not in best or m["wall"] < best[name]["wall"]:
                    best[name] = m
    for name, m in best.items():
        own = (m["wall"] - m["forward"]) / n * 1e6
        print(
            f"{name:>6}: wall {m['wall']:7.2f} s  forward {m['forward']:7.2f} s  own {own:7.1f} µs/prompt  "
            f"{m['calls']:4d} forward calls  {n / m['wall']:8.0f} prompts/s"
        )
    b, w = best["before"], best["now"]
    own_b, own_w = b["wall"] - b["forward"], w["wall"] - w["forward"]
    print(
        f"ratios (before / now): own work {own_b / own_w:.1f}x less, forward calls "
        f"{b['calls'] / w['calls']:.1f}x fewer, wall {b['wall'] / w['wall']:.2f}x faster"
    )
    print(
        f"max |now - before|: psi {np.max(np.abs(w['psi'] - b['psi'])):.1e} nats, "
        f"chi {np.max(np.abs(w['chi'] - b['chi'])):.1e} nats"
    )


if __name__ == "__main__":
    main()
