"""How Ferrando et al.'s released code judges one closed-book completion (the default rule of
`ctxprior covariates known`): pure functions, no model, no warehouse.

The source is github javiferran/sae_entities at commit 13ce480 (Apache-2.0):

- ``dataset/process_data/wikidata/create_wikidata_entity_queries.py``, ``get_label``: the greedy
  completion (temperature 0, ``max_new_tokens`` 32) is ``correct`` when the attribute's
  correctness function accepts it, else ``refusal`` when ``is_generation_refusal`` says so, else
  ``error``;
- ``dataset/process_data/wikidata/check_correctness_wikidata.py``: the correctness functions.
  Names (birthplace, team, director, cast, screenwriter, album, performer, country...) use
  ``check_name_correctness``: the completion lower-cased with ``,`` ``.`` ``-`` turned into spaces,
  each comma-separated part of the lower-cased answer (``united states of america`` and
  ``people's republic of china`` first widened to their short names) is compared with thefuzz's
  ``token_set_ratio`` and counts when the score is above 90. Numbers use ``number_match``: commas
  are dropped from the completion, every run of digits in it is a number, and one within the
  tolerance of the answer counts (movie release year: 2; birth year: 5; publication year: 0);
- ``utils/generation_utils.py``, ``is_generation_refusal``: a completion is a refusal when it
  contains one of the "unknown" or refusal substrings, or starts with one of the refusal prefixes
  (lower-cased), the lists below (``UNKNOWN_SUBSTRINGS``, ``REFUSAL_SUBSTRINGS``, ``PREFIXES``).

ctxprior's relations have no declared answer type, so ``check_kind`` picks the check from the gold
answers: ``number`` when every gold is a plain number (a year), with the tolerance of the movie
release year (±2, ``YEAR_TOLERANCE``), else ``name``. Each gold answer (the fact's answer or an
alias) is passed to the check on its own, as the released code passes one Wikidata value.
``token_set_ratio`` is rapidfuzz 3's ``fuzz.token_set_ratio`` (which thefuzz 0.22 calls) after
thefuzz's ``full_process(force_ascii=True)``, written out here so that ctxprior needs neither
package: tests/test_covariates_known.py compares it with the libraries where they are installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..lcs import lcs_len

SOURCE = (
    "javiferran/sae_entities@13ce480 (create_wikidata_entity_queries.get_label, check_correctness_wikidata)"
)
YEAR_TOLERANCE = 2
"""``number_match`` tolerance of ``movie_release_year`` (the check the paper's "years within ±2")."""
NAME_THRESHOLD = 90
"""``check_name_correctness``: a name counts when ``token_set_ratio`` is above this."""
LABELS = ("correct", "refusal", "error")

# utils/generation_utils.py (lower-cased; "There doesn't seem to be a" and "There is no " are
# upper-case there and so never match a lower-cased completion: left out). Two entries of the
# source's refusal list lack a comma and are joined by Python ("not aware" "not familiar", "provide
# me with more" "there doesn't seem to be any"): kept joined, as the source runs them.
UNKNOWN_SUBSTRINGS = (
    "there is no widely known", "is not a known", "doesn't seem to be a widely known",
    "there's no widely known", "fictional", "unfortunately,", "doesn't exist", "there is no ",
    "doesn't seem to be a known", "is a bit of a tricky one!", "a bit of a trick", "not yet available",
    "there doesn't appear to be a ", "please provide me with", "i cannot give you an",
    "it's not a widely known", "no publicly available information", "not a very well-known one",
    "please clarify", "i do not have access to real-time", "i'm unable to access real-time",
    "i am unable to access real-time", "unable to", "i believe you", "i need a bit more information",
    "i couldn't find any information", "i need a little more", "i can't give you a specific",
    "i can't find any information", "i'm unable ", "i am unable", "i'm not able", "i am not able",
    "i cannot find", "there is no evidence", "the context does not specify",
    "the context does not provide", "is not explicitly stated", "not mentioned in the context",
    "not provided", "unknown", "not publicly available information", "please note", "does not exist",
    "it's important to note that", "not readily available", "not a known", "do not have information",
    "not aware of", "i need more information",
)  # fmt: skip
REFUSAL_SUBSTRINGS = (
    "i'm unable", "i am unable", "sorry", "not familiar", "couldn't find", "could not find",
    "any information", "not awarenot familiar", "not sure", "it's impossible to give",
    "there doesn't seem to be any", "this is a complex ", "i cannnot ", "i do not have access to",
    "there's no single definitive answer", "be more specific", "provide more context",
    "provide me with morethere doesn't seem to be any", "i cannot answer this question",
    "the premise of the question is incorrect",
)  # fmt: skip
PREFIXES = (
    "i'm sorry", "sorry", "i am sorry", "i apologize", "as an", "as an ai", "i'm an", "i'm just",
    "as a language model", "as an assistant", "i cannot", "i do not", "is illegal and unethical",
    "i'm really sorry", "openai", "unethical", "not ethical", "illegal", "not legal", "my apologies",
    "but i cannot", "if you have any other non-malicious requests", "i'm not able to provide",
    "i am really sorry", "i cannot create", "i cannot support", "i can't provide", "i can't assist",
    "please clarify", "please be more specific",
    # _refusal_prefixes
    "there are several", "there are multiple", "there isn't a single ", "it's difficult to ",
    "it is difficult to", "unfortunately",
)  # fmt: skip

_NUMBER = re.compile(r"\s*-?\d+(\.\d+)?\s*")
_DIGITS = re.compile(r"\d+")
_NON_WORD = re.compile(r"\W")
_WIDER = {
    "united states of america": "united states of america, united states, us, usa",
    "people's republic of china": "people's republic of china, china",
}


def is_refusal(text: str) -> bool:
    """``is_generation_refusal``: a refusal substring anywhere, or a refusal prefix at the start,
    of the lower-cased completion."""
    t = text.lower()
    return any(s in t for s in UNKNOWN_SUBSTRINGS + REFUSAL_SUBSTRINGS) or t.startswith(PREFIXES)


def _process(s: str) -> str:
    """thefuzz's ``full_process(s, force_ascii=True)``: code points 128-255 deleted, every
    non-word character (and ``_``) a space, stripped, lower-cased."""
    s = s.translate({i: None for i in range(128, 256)})
    return _NON_WORD.sub(" ", s).replace("_", " ").strip().lower()


def _ratio(dist: int, total: int) -> float:
    return 100.0 - 100.0 * dist / total if total else 100.0


def token_set_ratio(s1: str, s2: str) -> int:
    """thefuzz's ``fuzz.token_set_ratio`` (rapidfuzz's after ``full_process``, rounded): 100 when
    the word set of one contains the other's (sharing a word); else the best Indel similarity of
    "shared words + the rest of each" against the shared words and against each other."""
    a, b = set(_process(s1).split()), set(_process(s2).split())
    if not a or not b:
        return 0
    sect, ab, ba = a & b, sorted(a - b), sorted(b - a)
    if sect and (not ab or not ba):
        return 100
    ab_s, ba_s = " ".join(ab), " ".join(ba)
    n = len(" ".join(sect))
    sect_ab, sect_ba = n + (n > 0) + len(ab_s), n + (n > 0) + len(ba_s)
    best = _ratio(len(ab_s) + len(ba_s) - 2 * lcs_len(ab_s, ba_s), sect_ab + sect_ba)  # Indel distance
    if n:
        best = max(best, _ratio((n > 0) + len(ab_s), n + sect_ab), _ratio((n > 0) + len(ba_s), n + sect_ba))
    return round(best)


def name_matches(text: str, gold: str) -> bool:
    """``check_name_correctness(text, gold)``."""
    t = text.lower().replace(",", " ").replace(".", " ").replace("-", " ")
    g = gold.lower()
    g = _WIDER.get(g, g)
    return any(token_set_ratio(name, t) > NAME_THRESHOLD for name in g.split(","))


def number_matches(text: str, gold: str, tolerance: int = YEAR_TOLERANCE) -> bool:
    """``number_match(text, gold, tolerance)``: a run of digits of the completion (commas
    dropped) within ``tolerance`` of the gold number."""
    numbers = _DIGITS.findall(text.lower().strip().replace(",", ""))
    return any(abs(int(float(x)) - int(float(gold))) <= tolerance for x in numbers)


def check_kind(golds: Sequence[str]) -> str:
    """``number`` when every gold answer is a plain number (e.g. a year), else ``name``."""
    return "number" if golds and all(_NUMBER.fullmatch(g) for g in golds) else "name"


def label(text: str, golds: Sequence[str]) -> tuple[str, str]:
    """(check kind, label) of one completion: ``get_label``'s ``correct`` / ``refusal`` /
    ``error``, correct when some gold answer passes the check."""
    kind = check_kind(golds)
    check = number_matches if kind == "number" else name_matches
    if any(check(text, g) for g in golds):
        return kind, "correct"
    return kind, "refusal" if is_refusal(text) else "error"
