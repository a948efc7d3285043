"""Scores and outcome generations from one prefill (``Engine.last_logprobs_and_greedy``) against
the two passes a run made before (``last_logprobs``, then ``greedy`` over the same prompts), on the
real SmolLM2-135M and the demo's prompts.

The same engine computes the same units both ways in one process, alternating (``first_token``
with and without ``generate=``, the calls ``units.compute_unit`` makes). Prints wall seconds and
prompt tokens computed per way, the ratio, the largest difference in ψ and χ (the batches differ, so the
log-probs may move in their last float32 bits: the no-context prompts now run in batches of their
own) and whether the generated texts are equal.

    python benchmarks/one_pass.py [--entities 4] [--contexts 12] [--new-tokens 8] [--repeats 2]
"""

from __future__ import annotations

import time

import numpy as np
import torch
from generation import demo_args, demo_inputs  # benchmarks/generation.py

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import first_token, reliance_answers
from ctxprior.scoring.models import load_model
from ctxprior.scoring.prompts import prompt_format
from ctxprior.scoring.texts import unit_texts


def two_passes(eng: Engine, unit, fmt, new_tokens: int):
    res = first_token(eng, unit.contexts, unit.queries, prompt=fmt, answers=reliance_answers(unit))
    nc = len(unit.contexts)
    texts = [fmt(c, q) for q in unit.queries for c in unit.contexts]
    groups = [[i * nc + j for i in range(len(unit.queries))] for j in range(nc)]
    return res, eng.greedy(eng.encode(texts), new_tokens, groups)


def one_pass(eng: Engine, unit, fmt, new_tokens: int):
    res = first_token(
        eng, unit.contexts, unit.queries, prompt=fmt, answers=reliance_answers(unit), generate=new_tokens
    )
    return res, [g for r in res for g in r.generations or ()]


def main() -> None:
    a = demo_args(__doc__)
    torch.manual_seed(0)
    lm = load_model("smollm2-135m", device="cpu")
    units = [unit_texts(inp) for inp in demo_inputs(a.entities, a.contexts)]
    fmt = prompt_format(lm.tokenizer, "raw")
    eng = Engine(lm)
    ways = {"two passes": two_passes, "one pass": one_pass}
    best: dict[str, float] = {}
    out: dict[str, list] = {}
    tokens: dict[str, int] = {}
    for _ in range(a.repeats):
        for name, way in ways.items():
            before = eng.tokens_computed
            t = time.perf_counter()
            out[name] = [way(eng, u, fmt, a.new_tokens) for u in units]
            best[name] = min(best.get(name, 1e9), time.perf_counter() - t)
            tokens[name] = eng.tokens_computed - before
    n_prompts = sum(len(u.queries) * (len(u.contexts) + 1) for u in units)
    print(
        f"SmolLM2-135M, CPU ({torch.get_num_threads()} threads), {len(units)} units, {n_prompts} prompts, "
        f"{a.new_tokens} new tokens"
    )
    for name in ways:
        print(f"  {name:10s} {best[name]:7.2f} s  {tokens[name]:6d} prompt tokens computed")
    psi = chi = prior = 0.0
    for (r2, _), (r1, _) in zip(out["two passes"], out["one pass"]):
        for x, y in zip(r2, r1):
            psi = max(psi, float(np.max(np.abs(x.persuasion - y.persuasion))))
            chi = max(chi, abs(x.susceptibility - y.susceptibility))
            prior = max(prior, abs(x.prior_entropy - y.prior_entropy), abs(x.prior_kl - y.prior_kl))
    texts_equal = [g for _, g in out["two passes"]] == [g for _, g in out["one pass"]]
    print(
        f"  one pass / two passes: {best['two passes'] / best['one pass']:.2f}x faster; "
        f"max |diff| psi {psi:.2e}, chi {chi:.2e}, prior entropy / KL {prior:.2e} nats; "
        f"texts equal: {texts_equal}"
    )


if __name__ == "__main__":
    main()
