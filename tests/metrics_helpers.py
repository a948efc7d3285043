"""Shared by the metrics tests: ψ and χ of a probability matrix (rows: contexts), through the
numpy reference ``metrics.scores_np``."""

from __future__ import annotations

import numpy as np

from ctxprior.scoring.metrics import Scores, scores_np


def scores_from_probs(probs, weights=None) -> Scores:
    """``scores_np`` for a probability matrix (zeros allowed; each row is normalised)."""
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return scores_np(np.log(p / p.sum(axis=-1, keepdims=True)), weights)
