"""Exact entity–answer co-occurrence counting over normalized text (no database here).

Definitions (see ``text.py`` for the word splitting):

- An *occurrence* of a name is any match of its word sequence in a document's word sequence,
  whole words only: "Paris" occurs in "Paris Hilton visited France" (word 0), exactly as
  the paper's rule (locate the term after removing punctuation and splitting at white space)
  implies; "Paris" does not occur in "Parisian". Nested and overlapping occurrences all count.
- Two occurrences *co-occur within W words* when they are in the same document, do not share a
  word, and the later one starts at most W words after the earlier one ends:
  ``1 <= start_later - end_earlier <= W`` (word indices; adjacent words are at distance 1).
  So in "Paris Hilton visited France" the pair (Paris Hilton, Hilton) does not co-occur (shared
  word) but (Paris, France) does (distance 3).
- ``cooccurrence(E, A)`` = number of such pairs of an occurrence of E and one of A (each
  unordered pair once; symmetric in E and A). ``count(N)`` = number of occurrences of N.

Counting is additive over documents, so shard results merge exactly by summation.
"""

from __future__ import annotations

from dataclasses import dataclass

import ahocorasick
import numpy as np

from .text import normalize_batch, to_latin1

CHUNK = 1 << 21  # candidate pairs per vectorized step


@dataclass
class CountSpec:
    """What to count: normalized names (index = name id) and unordered name-id pairs."""

    names: list[str]
    pairs: list[tuple[int, int]]  # (lo, hi) name ids, lo <= hi
    window: int = 50
    ignore_case: bool = False
    punctuation: str = "delete"
    text_field: str = "text"


@dataclass
class Counts:
    name_counts: np.ndarray
    pair_counts: np.ndarray
    n_documents: int = 0
    n_words: int = 0

    def add(self, other: Counts) -> None:
        self.name_counts += other.name_counts
        self.pair_counts += other.pair_counts
        self.n_documents += other.n_documents
        self.n_words += other.n_words


def pair_codes(pairs: list[tuple[int, int]], n_names: int) -> np.ndarray:
    if not pairs:
        return np.zeros(0, dtype=np.int64)
    p = np.asarray(pairs, dtype=np.int64)
    return np.minimum(p[:, 0], p[:, 1]) * n_names + np.maximum(p[:, 0], p[:, 1])


class Counter:
    """Aho–Corasick over the space-delimited normalized text; vectorized window pairing."""

    def __init__(self, spec: CountSpec):
        self.spec = spec
        self.n = len(spec.names)
        codes = pair_codes(spec.pairs, self.n)
        if len(codes) and np.any(np.diff(codes) <= 0):
            raise ValueError("pairs must be unique and sorted by (lo, hi)")
        self.codes = codes
        patterns = [to_latin1(f" {nm} ") for nm in spec.names]
        self.plen = np.array([len(p) for p in patterns], dtype=np.int64)
        self.nwords = np.array([nm.count(" ") + 1 for nm in spec.names], dtype=np.int64)
        self.automaton = ahocorasick.Automaton()
        for i, nm in enumerate(spec.names):
            if not nm or "\x00" in nm or nm != nm.strip() or "  " in nm:
                raise ValueError(f"name {nm!r} is not normalized")
            self.automaton.add_word(patterns[i], i)
        if self.n:
            self.automaton.make_automaton()
        self.counts = self.empty()

    def empty(self) -> Counts:
        return Counts(np.zeros(self.n, dtype=np.int64), np.zeros(len(self.codes), dtype=np.int64))

    def add_texts(self, texts: list[str]) -> None:
        if not texts:
            return
        sp = self.spec
        s, buf, doc_starts = normalize_batch(texts, sp.ignore_case, sp.punctuation)
        c = self.counts
        c.n_documents += len(texts)
        spaces = np.flatnonzero(buf == 32)
        c.n_words += len(spaces) - 1 - (len(texts) - 1)  # minus the document separators
        if not self.n:
            return
        hits = list(self.automaton.iter(s))
        if not hits:
            return
        arr = np.array(hits, dtype=np.int64)
        nid = arr[:, 1]
        start = arr[:, 0] - self.plen[nid] + 1  # index of the space before the first word
        first = np.searchsorted(spaces, start)  # word index of the first word
        doc = np.searchsorted(doc_starts, start, side="right") - 1
        first = first + doc * (sp.window + 1)  # documents are > W words apart
        last = first + self.nwords[nid] - 1
        c.name_counts += np.bincount(nid, minlength=self.n)
        if not len(self.codes):
            return
        order = np.argsort(first, kind="stable")
        f, last_sorted, k = first[order], last[order], nid[order]
        lo = np.searchsorted(f, last_sorted + 1, side="left")
        hi = np.searchsorted(f, last_sorted + sp.window, side="right")
        cnt = hi - lo
        ends = np.cumsum(cnt)
        if not len(ends) or not ends[-1]:
            return
        # enumerate candidate pairs (i earlier, j starting 1..W words after i ends) in chunks of
        # at most ~CHUNK pairs, so memory stays bounded even for very frequent names
        m0 = 0
        while m0 < len(f):
            base = ends[m0 - 1] if m0 else 0
            m1 = int(np.searchsorted(ends, base + CHUNK, side="right"))
            m1 = max(m1, m0 + 1)
            cc = cnt[m0:m1]
            total = int(cc.sum())
            if total:
                i = np.repeat(np.arange(m0, m1), cc)
                j = lo[i] + (np.arange(total) - np.repeat(np.cumsum(cc) - cc, cc))
                a, b = k[i], k[j]
                code = np.minimum(a, b) * self.n + np.maximum(a, b)
                pos = np.searchsorted(self.codes, code)
                pos[pos == len(self.codes)] = len(self.codes) - 1
                hit = self.codes[pos] == code
                c.pair_counts += np.bincount(pos[hit], minlength=len(self.codes))
            m0 = m1
