"""The sizes docs/departures.md quotes for the field's measures, measured with SmolLM2-135M on the
CPU: the separator's effect on the NQ-Swap row's answers, CK-PLUG's log(p + 1e-9) entropy against
the exact one, and the filtered confidence gain against the whole-vocabulary one.

    python benchmarks/reliance_departures.py
"""

from __future__ import annotations

import numpy as np
import torch

from ctxprior.scoring.metrics import confidence_gain_np, plausible_np
from ctxprior.scoring.models import load_model

PASSAGE = (
    "<P> The Lupus Foundation of America (LFA), founded in 1967 , is a national voluntary health "
    "organization based in Washington, D.C. with a network of chapters, offices and support groups "
    "located in communities throughout the United States . </P>"
)
QUERY = "Q: when was the lupus foundation of america founded\nA:"
CONTEXTS = ["The capital of France is Rome.\n", "The capital of Spain is Paris.\n", PASSAGE + "\n"]
CONTEXTS.append("Definitely, the capital of Peru is Lima.\n")
QUERIES = ["Q: What is the capital of France?\nA:", "Q: What is the capital of Spain?\nA:", QUERY]
QUERIES.append("Q: What is the capital of Peru?\nA:")


def _eps_entropy(logp: np.ndarray, keep: np.ndarray) -> float:
    """CK-PLUG's entropy of the filtered, renormalized distribution: -sum p log(p + 1e-9)."""
    x = np.where(keep, logp, -np.inf)
    p = np.exp(x - np.logaddexp.reduce(x))
    return float(-np.sum(p * np.log(p + 1e-9)))


def main() -> None:
    lm = load_model("smollm2-135m", device="cpu")
    tok, model = lm.tokenizer, lm.model

    def next_logp(text: str) -> np.ndarray:
        with torch.no_grad():
            out = model(tok(text, return_tensors="pt").input_ids).logits[0, -1]
        return torch.log_softmax(out.double(), -1).numpy()

    def answer_logp(prompt: str, answer: str) -> float:
        ids = tok(prompt + answer, return_tensors="pt").input_ids[0]
        n = len(tok(prompt).input_ids)
        with torch.no_grad():
            lp = torch.log_softmax(model(ids[None]).logits[0].double(), -1)
        return float(sum(lp[i - 1, ids[i]] for i in range(n, len(ids))))

    for sep in ("", "\n"):
        p = PASSAGE + sep + QUERY
        print(f"separator {sep!r}: log p(' 1967') = {answer_logp(p, ' 1967'):.2f}, ", end="")
        print(f"log p(' 1977') = {answer_logp(p, ' 1977'):.2f}")
    d_eps, d_vocab = [], []
    for c in CONTEXTS:
        for q in QUERIES:
            l0, lc = next_logp(q), next_logp(c + q)
            keep = (plausible_np(lc[None]) | plausible_np(l0[None]))[0]
            ours = float(confidence_gain_np(lc[None], l0)[0])
            d_eps.append(abs(ours - (_eps_entropy(l0, keep) - _eps_entropy(lc, keep))))
            d_vocab.append(abs(ours - float((np.exp(lc) * lc).sum() - (np.exp(l0) * l0).sum())))
    print(f"CK-PLUG epsilon: max |exact - log(p+1e-9)| = {max(d_eps):.2e} nats over {len(d_eps)} prompts")
    print(
        f"filtered vs whole vocabulary: mean |diff| = {np.mean(d_vocab):.3f}, max = {max(d_vocab):.3f} nats"
    )


if __name__ == "__main__":
    main()
