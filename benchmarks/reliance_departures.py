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


def main() -> None:
    lm = load_model("smollm2-135m", device="cpu")
    tok, model = lm.tokenizer, lm.model
    org = (
        "<P> The Lupus Foundation of America (LFA), founded in 1967 , is a national voluntary health "
        "organization based in Washington, D.C. with a network of chapters, offices and support groups "
        "located in communities throughout the United States . </P>"
    )
    q = "Q: when was the lupus foundation of america founded\nA:"

    def lp_next(text):
        ids = tok(text, return_tensors="pt").input_ids
        with torch.no_grad():
            return torch.log_softmax(model(ids).logits[0, -1].double(), -1).numpy()

    def seq_lp(prompt, ans):
        ids = tok(prompt + ans, return_tensors="pt").input_ids[0]
        n = len(tok(prompt).input_ids)
        with torch.no_grad():
            lp = torch.log_softmax(model(ids[None]).logits[0].double(), -1)
        return float(sum(lp[i - 1, ids[i]] for i in range(n, len(ids))))

    for sep in ("", "\n"):
        p = org + sep + q
        print(
            f"separator {sep!r}: log p(' 1967') = {seq_lp(p, ' 1967'):.2f}, log p(' 1977') = {seq_lp(p, ' 1977'):.2f}"
        )
    # CK-PLUG epsilon: exact filtered entropy vs their log(p + 1e-9)
    ctxs = [
        "The capital of France is Rome.\n",
        "The capital of Spain is Paris.\n",
        org + "\n",
        "Definitely, the capital of Peru is Lima.\n",
    ]
    qs = [
        "Q: What is the capital of France?\nA:",
        "Q: What is the capital of Spain?\nA:",
        q,
        "Q: What is the capital of Peru?\nA:",
    ]
    d_eps, d_vocab = [], []
    for c in ctxs:
        for qq in qs:
            l0, lc = lp_next(qq), lp_next(c + qq)
            keep = plausible_np(lc[None]) | plausible_np(l0[None])

            def h_eps(l):
                x = np.where(keep[0], l, -np.inf)
                x = x - np.logaddexp.reduce(x)
                pp = np.exp(x)
                return -np.sum(pp * np.log(pp + 1e-9))

            ours = confidence_gain_np(lc[None], l0)[0]
            theirs = h_eps(l0) - h_eps(lc)
            vocab = (-(np.exp(l0) * l0).sum()) - (-(np.exp(lc) * lc).sum())
            d_eps.append(abs(ours - theirs))
            d_vocab.append(abs(ours - vocab))
    print(f"CK-PLUG epsilon: max |exact - log(p+1e-9)| = {max(d_eps):.2e} nats over {len(d_eps)} prompts")
    print(
        f"filtered vs whole vocabulary: mean |diff| = {np.mean(d_vocab):.3f}, max = {max(d_vocab):.3f} nats"
    )


if __name__ == "__main__":
    main()
