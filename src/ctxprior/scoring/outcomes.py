"""The outcome of a prompt from its greedy generation, labelled by a named rule (docs/concepts.md).

ORIGINAL: the generation gives the fact's gold answer; CONTEXT: it gives the answer the context
states; OTHER: neither; ``None`` (undecided): it gives both, two different answers (possible
under ``recall``: "1967, not 1977"). Where the context states the gold answer itself, a match is
ORIGINAL. Closed (yes/no) queries, under every rule, read the first word of the generation's
first line: "yes" ORIGINAL, "no" CONTEXT, else OTHER (Du et al. 2024, App. D; the sources of the
open-answer rules have no yes/no questions, and their substring match would find "no" inside
"not", "know" or "none").

The rules, each named for its source:

- ``recall`` (the default): CK-PLUG's ``get_score`` (``eval_NQ.py``, ``recall_score``): the
  normalised answer is a substring of the normalised generation (up to 64 new tokens, stopped by
  the end of sequence only, stripped). CK-PLUG counts a generation that holds both answers for
  both; here it is undecided (``v_reliance_rates.n_undecided``).
- ``exact``: Longpre et al. 2021 (EM): the normalised generation equals the normalised answer.
- ``prefix``: Du et al. 2024, App. D as ctxprior read it before (METHOD.md §1): the first line of
  the generation starts with the answer (case-folded, leading quotes and dashes dropped); the gold
  answer wins when both match.

``normalize`` is SQuAD's normalisation, which both CK-PLUG (``normalize_answer``) and Longpre et
al. (``utils.normalize_text``) use: lower case, punctuation removed, the articles a / an / the
removed, whitespace collapsed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

ORIGINAL, CONTEXT, OTHER = "ORIGINAL", "CONTEXT", "OTHER"
UNDECIDED = "UNDECIDED"  # the generation table's label of a generation that gives both answers
OUTCOME_RULES = ("recall", "exact", "prefix")
DEFAULT_RULE = "recall"
SOURCE_MAX_NEW_TOKENS = 64  # CK-PLUG eval_NQ.py: max_new_tokens 64, no stop words (EOS only)

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_WS = re.compile(r"\s+")


def normalize(s: str) -> str:
    """SQuAD's answer normalisation: lower, drop punctuation, drop articles, collapse whitespace."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


def _recall(generation: str, answer: str) -> bool:
    a = normalize(answer)
    return bool(a) and a in normalize(generation)


def _exact(generation: str, answer: str) -> bool:
    a = normalize(answer)
    return bool(a) and a == normalize(generation)


def _prefix_norm(s: str) -> str:
    return _WS.sub(" ", s.casefold()).strip().lstrip("\"'“‘*-: ")


def _prefix(generation: str, answer: str) -> bool:
    a = _prefix_norm(answer)
    return bool(a) and _prefix_norm(generation.strip().split("\n")[0]).startswith(a)


MATCHES: dict[str, Callable[[str, str], bool]] = {"recall": _recall, "exact": _exact, "prefix": _prefix}


def label(
    generation: str, rule: str, query_type: str, gold: str | None, context_answer: str | None
) -> str | None:
    """ORIGINAL / CONTEXT / OTHER, or None (undecided: both of two different answers match)."""
    if query_type == "closed":  # every rule: a substring "no" is inside "not", "know", "none"
        first = _prefix_norm(generation.strip().split("\n")[0])
        return ORIGINAL if re.match(r"yes\b", first) else CONTEXT if re.match(r"no\b", first) else OTHER
    match = MATCHES[rule]
    g = gold is not None and match(generation, gold)
    c = context_answer is not None and match(generation, context_answer)
    same = gold is not None and context_answer is not None and normalize(gold) == normalize(context_answer)
    if g and c and not same and rule != "prefix":
        return None
    if g:
        return ORIGINAL
    return CONTEXT if c else OTHER
