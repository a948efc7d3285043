"""The length of the longest common subsequence, which both ROUGE-L (DynamicQA's answer match) and
the Indel distance (thefuzz's ratios, Ferrando et al.'s name match) rest on (one definition; may
import nothing of ctxprior)."""

from __future__ import annotations

from collections.abc import Sequence


def lcs_len(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of two strings or token lists (dynamic
    programming, one row of the table at a time)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]
