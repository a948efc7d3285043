"""Independent ports of the sources' outcome code, for the tests only (never imported by ctxprior).

Written here from reading the released code, line for line in behaviour:

- CK-PLUG (Bi et al. 2025), ``eval_NQ.py`` of github.com/byronBBL/CK-PLUG: ``normalize_answer``
  (lower; drop every ``string.punctuation`` character; replace the words a / an / the by a space;
  split and join on single spaces), ``exact_match_score``, ``recall_score`` (the normalised gold
  inside the normalised prediction), ``get_score`` (per prediction the best over a list of golds;
  percentages over the predictions, ``+ 1e-5`` in the denominator) and ``eval`` (ps: recall
  against the substituted answers, po: against the original ones, mr = po / (ps + po)).
- Longpre et al. 2021 (github.com/apple/ml-knowledge-conflicts, ``src/utils.py``):
  ``normalize_text`` (the same SQuAD normalisation, the article regex compiled with re.UNICODE);
  the paper's outcome is the exact match of the prediction with the original or the substituted
  answer after it (§3, "Original" / "Substitute" / "Other").
"""

from __future__ import annotations

import re
import string


def ckplug_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def ckplug_exact_match_score(prediction, ground_truth):
    return ckplug_normalize_answer(prediction) == ckplug_normalize_answer(ground_truth)


def ckplug_recall_score(prediction, ground_truth):
    return ckplug_normalize_answer(ground_truth) in ckplug_normalize_answer(prediction)


def ckplug_get_score(preds, golds):
    """(em, recall) in percent over ``preds``; a gold may be a list (the best of its answers)."""
    em, recall = 0, 0
    for pred, gold in zip(preds, golds):
        if isinstance(gold, list):
            best_em, best_recall = 0, 0
            for g in gold:
                best_em = max(ckplug_exact_match_score(pred, g), best_em)
                best_recall = max(ckplug_recall_score(pred, g), best_recall)
            em += best_em
            recall += best_recall
        else:
            em += ckplug_exact_match_score(pred, gold)
            recall += ckplug_recall_score(pred, gold)
    return em * 100 / (len(preds) + 1e-5), recall * 100 / (len(preds) + 1e-5)


def ckplug_eval(preds, orig_answers, sub_answers):
    """CK-PLUG's ``eval``: (ps, po, mr) in percent; a prediction holding both answers counts twice."""
    _, ps = ckplug_get_score(preds, sub_answers)
    _, po = ckplug_get_score(preds, orig_answers)
    return ps, po, po / (ps + po + 1e-10) * 100


def longpre_normalize_text(s):
    regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s.lower() if ch not in exclude)
    return " ".join(re.sub(regex, " ", s).split())


def longpre_outcome(prediction, original, substitute):
    """Original / Substitute / Other by exact match after normalisation (Longpre et al. 2021, §3)."""
    p = longpre_normalize_text(prediction)
    if p == longpre_normalize_text(original):
        return "ORIGINAL"
    if p == longpre_normalize_text(substitute):
        return "CONTEXT"
    return "OTHER"


def ckplug_outcome(prediction, original, substitute):
    """One row's label read off CK-PLUG's two recall scores: None where it counts for both."""
    o, s = ckplug_recall_score(prediction, original), ckplug_recall_score(prediction, substitute)
    if o and s:
        return None
    return "ORIGINAL" if o else "CONTEXT" if s else "OTHER"
