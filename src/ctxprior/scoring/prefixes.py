"""Token sequences on the host (numpy) and the prefixes they share: ``Tokens`` (ragged sequences
as a right-padded matrix), ``dedupe`` (each distinct sequence once) and ``group_prefixes`` (each
prefix group's longest common token prefix, which the engine computes once)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class Tokens:
    """Ragged token sequences as a right-padded matrix: ``ids [N, L]`` (0 past ``lengths``)."""

    ids: np.ndarray
    lengths: np.ndarray

    @classmethod
    def pack(cls, seqs: Sequence[Sequence[int]]) -> Tokens:
        lengths = np.fromiter(map(len, seqs), np.int64, len(seqs))
        width = int(lengths.max()) if len(seqs) else 0
        ids = np.zeros((len(seqs), width), np.int64)
        ids[np.arange(width)[None, :] < lengths[:, None]] = np.fromiter(
            itertools.chain.from_iterable(seqs), np.int64, int(lengths.sum())
        )
        return cls(ids, lengths)


def dedupe(tok: Tokens) -> tuple[np.ndarray, np.ndarray]:
    """(index of each distinct sequence's first occurrence, distinct row of every input row)."""
    if len(tok.lengths) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    key = np.ascontiguousarray(np.column_stack([tok.lengths, tok.ids]))
    rows = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()  # a row as one value
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct rows in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def group_prefixes(
    tok: Tokens, groups: Sequence[Sequence[int]] | None, min_prefix: int, cap: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: (its group's shared prefix length, the group id) -- 0 and -1 for no prefix.

    A group's prefix is the longest common token prefix of its distinct members, cut so that every
    member keeps >= 1 token to compute (and at most ``cap[row]`` tokens); a row in several groups
    takes its first group.
    """
    n = len(tok.lengths)
    prefix_len, gid = np.zeros(n, np.int64), np.full(n, -1, np.int64)
    if not groups:
        return prefix_len, gid
    members = np.fromiter(itertools.chain.from_iterable(groups), np.int64)
    owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    members, first = np.unique(members, return_index=True)  # a row's first group wins
    owner = owner[first]
    sizes = np.bincount(owner, minlength=len(groups))
    order = np.argsort(owner, kind="stable")
    members, owner = members[order], owner[order]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    ok = sizes >= 2
    if not ok.any():
        return prefix_len, gid
    ref = members[starts[owner]]  # the first member of each row's group
    cols = np.arange(tok.ids.shape[1])[None, :]
    same = (
        (tok.ids[members] == tok.ids[ref])
        & (cols < tok.lengths[members, None])
        & (cols < tok.lengths[ref, None])
    )
    common = np.cumprod(same, axis=1).sum(axis=1)
    keep = np.minimum(common, tok.lengths[members] - 1)  # every suffix keeps >= 1 token
    if cap is not None:
        keep = np.minimum(keep, cap[members])
    g_lcp = np.minimum.reduceat(keep, starts[sizes > 0]) if len(members) else keep
    lcp = np.zeros(len(groups), np.int64)
    lcp[sizes > 0] = g_lcp
    lcp[~ok | (lcp < min_prefix)] = 0
    prefix_len[members] = lcp[owner]
    gid[members] = np.where(lcp[owner] > 0, owner, -1)
    return prefix_len, gid
