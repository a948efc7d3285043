"""Names out of a model's answer (or a user's file): parse, normalize, compare.

- ``parse_names(text)``: a JSON array (strings, or objects with a ``name``), a numbered or bulleted
  list (only the marked lines are kept, so "Here are 10 names:" and closing remarks are dropped),
  or plain lines; a single line of 3+ short comma-separated parts is split. Unmarked lines are
  guessed at, so lines ending in ':' and remarks are dropped: a sentence of 4+ words ending in
  . ! ?, mostly lower-case words ('but not real'; particles such as 'of', 'van' aside), or
  "Sure, ...", "Here are ...", "I cannot ..." with punctuation. From each item, markdown
  emphasis, a leading "A: " (an echoed query form), a trailing "(note)" and a trailing
  explanation after " - " (3+ words) or ": " (4+ words) are removed.
- ``normalize_name(s)``: Unicode NFC, control characters out, whitespace collapsed, surrounding
  quotes removed, trailing ``. , ; :`` removed (a final '.' of Inc., Jr., Ltd., ... is kept);
  repeated to a fixed point, so it is idempotent.
- ``name_key(s)``: what two names must share to count as the same name: NFKC + casefold +
  collapsed whitespace (case-insensitive).
"""

from __future__ import annotations

import json
import re
import unicodedata

QUOTE_PAIRS = {
    '"': '"',
    "'": "'",
    "`": "`",
    "“": "”",
    "”": "”",
    "„": "“",
    "‘": "’",
    "’": "’",
    "«": "»",
    "»": "«",
    "‹": "›",
    "‚": "‘",
}
LOOSE_QUOTES = set('"“”„«»`')  # removed even when unpaired at either end
TRAILING = ".,;:"
ABBREVIATIONS = {
    "inc",
    "jr",
    "sr",
    "co",
    "ltd",
    "corp",
    "st",
    "dr",
    "mr",
    "mrs",
    "ms",
    "bros",
    "no",
    "vol",
    "ave",
    "mt",
    "ft",
    "op",
}
PARTICLES = {
    "of",
    "the",
    "a",
    "an",
    "and",
    "de",
    "del",
    "della",
    "di",
    "da",
    "do",
    "dos",
    "du",
    "des",
    "la",
    "le",
    "les",
    "van",
    "von",
    "der",
    "den",
    "ten",
    "ter",
    "in",
    "on",
    "at",
    "for",
    "to",
    "y",
    "e",
    "bin",
    "ibn",
    "al",
    "el",
    "zu",
    "und",
    "og",
    "och",
}
MAX_CHARS = 100
MAX_WORDS = 12

_MARKER = re.compile(r"^\s*(?:\d{1,4}[.)]|\(\d{1,4}\)|#\d{1,4}[.):]?|[-*•·+–—])\s+")
_FENCE = re.compile(r"^\s*```")
_PAREN_TAIL = re.compile(r"^(.*\S)\s*\([^()]*\)$")
_DASH = re.compile(r"\s+[-–—]\s+")
_QA = re.compile(r"^[QA]:\s+")
_CHATTER = re.compile(
    r"(?i)^(sure|certainly|of course|okay|ok|absolutely|note)\b|"
    r"^(here (are|is)|i (can|cannot|can't|am|will|won't|hope)|i'm|i'd|as an ai)\b"
)


def name_key(name: str) -> str:
    """Comparison key: NFKC, casefolded, whitespace collapsed (so 'Velmoria' == ' VELMORIA ')."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _strip_quotes(s: str) -> str:
    while len(s) >= 2 and s[0] in QUOTE_PAIRS and s[-1] == QUOTE_PAIRS[s[0]]:
        s = s[1:-1].strip()
    if s and s[0] in LOOSE_QUOTES:
        s = s[1:].strip()
    if s and s[-1] in LOOSE_QUOTES:
        s = s[:-1].strip()
    return s


def _strip_trailing(s: str) -> str:
    while s and s[-1] in TRAILING:
        if s[-1] == "." and s[:-1].rsplit(" ", 1)[-1].lower() in ABBREVIATIONS:
            break
        s = s[:-1].rstrip()
    return s


def _normalize_once(s: str) -> str:
    s = unicodedata.normalize("NFC", s)
    s = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp", "Zs") else c
        for c in s
        if unicodedata.category(c) not in ("Cf",)
    )
    s = " ".join(s.split())
    return _strip_trailing(_strip_quotes(s))


def normalize_name(s: str) -> str:
    """Whitespace, quotes and trailing punctuation cleaned (idempotent; may return '')."""
    prev = None
    while s != prev:
        prev, s = s, _normalize_once(s)
    return s


def name_problem(name: str) -> str | None:
    """'empty' | 'not_a_name' (no letter, or longer than a name) | None for a plausible name."""
    if not name:
        return "empty"
    if not any(unicodedata.category(c).startswith("L") for c in name):
        return "not_a_name"
    if len(name) > MAX_CHARS or len(name.split()) > MAX_WORDS:
        return "not_a_name"
    return None


def _clean_item(item: str) -> str:
    """One list item -> the name part (emphasis, '(note)' and ' - explanation' removed)."""
    s = _strip_trailing(_QA.sub("", item.replace("**", "").replace("__", "").strip()))
    m = _PAREN_TAIL.match(s)
    if m:
        s = m.group(1)
    parts = _DASH.split(s, maxsplit=1)
    if len(parts) == 2 and len(parts[1].split()) >= 3:
        s = parts[0]
    head, sep, tail = s.partition(": ")
    if sep and head.strip() and len(tail.split()) >= 4:
        s = head
    return s.strip()


def _prose(s: str) -> bool:
    """Mostly lower-case words (particles such as 'of', 'van' not counted): 'but not real'."""
    words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", s) if w.lower() not in PARTICLES]
    lower = sum(w[0].islower() for w in words)
    return lower >= 2 and 2 * lower >= len(words)


def _sentence(line: str) -> bool:
    """A plain (unmarked) line that reads like a remark, not a name: 'I cannot help with that.'"""
    s = line.strip()
    words = s.split()
    ends = len(words) >= 4 and s[-1] in ".!?" and words[-1].rstrip(".").lower() not in ABBREVIATIONS
    return ends or _prose(s) or bool(_CHATTER.match(s) and re.search(r"[,.!?:]", s))


def _comma_list(line: str) -> list[str] | None:
    """'Velmoria, Kestrania, Ostravelia' -> its parts (2+ commas, short parts, no sentence marks)."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 3 or re.search(r"[.!?]\s", line) or any(len(p.split()) > 5 for p in parts):
        return None
    return parts


def _json_items(text: str) -> list[str] | None:
    """The names of a JSON array (or of the first list inside a JSON object), else None."""
    start = min([i for i in (text.find("["), text.find("{")) if i >= 0], default=-1)
    if start < 0:
        return None
    end = max(text.rfind("]"), text.rfind("}"))
    try:
        data = json.loads(text[start : end + 1])
    except (json.JSONDecodeError, ValueError):
        return None
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        return None
    out = []
    for x in data:
        if isinstance(x, dict):
            x = x.get("name", next((v for v in x.values() if isinstance(v, str)), None))
        if isinstance(x, str):
            out.append(x)
    return out


def parse_names(text: str) -> list[str]:
    """Candidate names in a model's answer, in order, cleaned but not yet normalized."""
    items = _json_items(text)
    if items is None:
        lines = [ln for ln in text.splitlines() if ln.strip() and not _FENCE.match(ln)]
        marked = [ln for ln in lines if _MARKER.match(ln)]
        if marked:
            items = [_MARKER.sub("", ln, count=1) for ln in marked]
        else:
            items = [ln for ln in lines if not ln.rstrip().endswith(":")]
            parts = _comma_list(items[0]) if len(items) == 1 else None
            if parts:
                items = parts
            items = [i for i in items if not _sentence(i)]
    return [c for c in (_clean_item(i) for i in items) if c]
