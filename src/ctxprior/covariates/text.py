"""Word splitting for corpus counts, as in Du et al. 2024, App. F.2.

"We only perform rudimentary tokenization of each document by removing punctuation and
splitting at white spaces." Here that is, exactly:

1. (``--ignore-case`` only) lower-case the text with ``str.lower``;
2. punctuation is removed: every character of Unicode category P* (``. , ' ’ " - – ( ) ...``) and
   every ASCII character of ``string.punctuation`` (which adds ``$ + < = > ^ ` | ~``) is
   deleted (``punctuation="delete"``, the paper's rule: "U.S." -> "US", "Hilton's" -> "Hiltons")
   or replaced by a space (``punctuation="space"``: "Hilton's" -> "Hilton s");
3. the text is split at white space (``str.split()``: any run of Unicode white space).

Entity and answer names go through the same function, so a name matches a word sequence of
the text exactly when the normalized words are equal. ``words`` (one string, pure Python) and
``normalize_batch`` (many documents at once, on UTF-8 bytes: ``bytes.translate`` for ASCII,
a cached fix-up for each run of non-ASCII bytes) give identical words; a test checks it.
"""

from __future__ import annotations

import string
import unicodedata
from functools import lru_cache

import numpy as np

SEPARATOR = "\x00"  # between documents in a batch; never part of a normalized name
_ASCII_PUNCT = set(string.punctuation)
_ASCII_SPACE = [c for c in range(128) if chr(c).isspace()]


def check_punctuation(punctuation: str) -> str:
    if punctuation not in ("delete", "space"):
        raise ValueError(f"punctuation must be 'delete' or 'space', not {punctuation!r}")
    return punctuation


def is_punctuation(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch)[0] == "P"


@lru_cache(maxsize=1 << 16)
def _map_char(ch: str, punctuation: str) -> str:
    if ch.isspace():
        return " "
    if ch == SEPARATOR:
        return ""
    if is_punctuation(ch):
        return "" if punctuation == "delete" else " "
    return ch


def words(text: str, ignore_case: bool = False, punctuation: str = "delete") -> list[str]:
    """The words of one string (a name or a document)."""
    check_punctuation(punctuation)
    if ignore_case:
        text = text.lower()
    return "".join([_map_char(ch, punctuation) for ch in text]).split()


def normalize(text: str, ignore_case: bool = False, punctuation: str = "delete") -> str:
    """The words of ``text`` joined by single spaces (how names are stored and matched)."""
    return " ".join(words(text, ignore_case, punctuation))


def to_latin1(text: str) -> str:
    """UTF-8 bytes of ``text`` seen as a latin-1 string (what the matcher searches)."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


@lru_cache(maxsize=2)
def _ascii_tables(punctuation: str) -> tuple[bytes, bytes]:
    """(translate table, delete bytes) for the ASCII part."""
    src = bytes(_ASCII_SPACE)
    dst = b" " * len(src)
    punct = bytes(sorted(ord(c) for c in _ASCII_PUNCT))
    if punctuation == "space":
        return bytes.maketrans(src + punct, dst + b" " * len(punct)), b""
    return bytes.maketrans(src, dst), punct


@lru_cache(maxsize=1 << 16)
def _fix_run(run: bytes, punctuation: str) -> bytes:
    """A run of non-ASCII UTF-8 bytes with its punctuation / white space mapped."""
    s = run.decode("utf-8", "surrogatepass")
    return "".join([_map_char(ch, punctuation) for ch in s]).encode("utf-8", "surrogatepass")


def _fix_non_ascii(b: bytes, punctuation: str) -> bytes:
    """Map punctuation / white space inside the non-ASCII runs of ``b`` (UTF-8)."""
    hi = np.frombuffer(b, dtype=np.uint8) >= 0x80
    edges = np.diff(hi.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1).tolist()
    ends = np.flatnonzero(edges == -1).tolist()
    parts: list[bytes] = []
    prev = 0
    for s, e in zip(starts, ends):
        run = b[s:e]
        fixed = _fix_run(run, punctuation)
        if fixed != run:
            parts.append(b[prev:s])
            parts.append(fixed)
            prev = e
    if not parts:
        return b
    parts.append(b[prev:])
    return b"".join(parts)


def normalize_batch(
    texts: list[str], ignore_case: bool = False, punctuation: str = "delete"
) -> tuple[str, np.ndarray, np.ndarray]:
    """Normalize many documents at once.

    Returns ``(s, buf, doc_starts)``. ``buf`` (uint8 array) holds the UTF-8 bytes
    ``" " + " \\0 ".join(normalized docs) + " "``: every word is preceded and followed by exactly
    one space and documents are separated by the pseudo-word ``\\0`` (which no name contains, so
    no match spans two documents). ``s`` is the same bytes as a latin-1 string (one character
    per byte, for the matcher). ``doc_starts[k]`` is the byte index of the space that starts
    document k.
    """
    if ignore_case:
        texts = [t.lower() for t in texts]
    joined = (" " + SEPARATOR + " ").join([t.replace(SEPARATOR, "") if SEPARATOR in t else t for t in texts])
    b = joined.encode("utf-8", "surrogatepass")
    table, delete = _ascii_tables(punctuation)
    b = b.translate(table, delete)
    if not b.isascii():
        b = _fix_non_ascii(b, punctuation)
    while b"  " in b:
        b = b.replace(b"  ", b" ")
    if not b.startswith(b" "):
        b = b" " + b
    if not b.endswith(b" "):
        b = b + b" "
    buf = np.frombuffer(b, dtype=np.uint8)
    doc_starts = np.concatenate(([0], np.flatnonzero(buf == 0) + 1)).astype(np.int64)
    return b.decode("latin-1"), buf, doc_starts
