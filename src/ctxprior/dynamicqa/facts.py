"""One fact of a dynamic run: its three prompts, answers, clusters and rows (generations, token
distributions, scores)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..sqlfiles import read_sql
from ..storage.store import Store
from . import semantic as sem
from .answers import Answer, build_prompt, generate
from .config import CONDITIONS, PKG, PROMPT_CTX, PROMPT_NONE, DynamicConfig


def fact_rows(facts: list[int], store: Store) -> list[dict]:
    rows = store.query(read_sql(PKG, "sql/fact_rows.sql"), [facts])
    keys = (
        "fact_id",
        "partition",
        "id",
        "subject",
        "object",
        "replace_name",
        "question",
        "template",
        "aliases",
    )
    by_id = {r[0]: dict(zip(keys, r)) for r in rows}
    return [by_id[f] for f in facts]


def _fact_seed(seed: int, fact_id: int) -> int:
    return (
        int.from_bytes(hashlib.sha256(f"{seed}:{fact_id}".encode()).digest()[:8], "little")
        & 0x7FFFFFFFFFFFFFFF
    )


def score_fact(
    lm, equivalence: sem.Equivalence, fact: dict, cfg: DynamicConfig, chat: bool
) -> tuple[list[dict], list[dict], list[dict]]:
    """Generate and score one fact: (generation rows, token-dist rows, score rows)."""
    import torch

    q = fact["question"]
    contexts = {
        "original": fact["template"].format(answer=fact["object"]),
        "counter": fact["template"].format(answer=fact["replace_name"]),
    }
    contents = [PROMPT_NONE.format(question=q)] + [
        PROMPT_CTX.format(context=contexts[c], question=q) for c in ("original", "counter")
    ]
    prompts = [build_prompt(lm.tokenizer, c, chat) for c in contents]
    sampled, greedy = generate(
        lm,
        prompts,
        cfg.samples,
        cfg.temperature,
        cfg.max_new_tokens,
        _fact_seed(cfg.seed, fact["fact_id"]),
        cfg.cp_tokens,
    )
    gen_rows: list[dict] = []
    dist_rows: list[dict] = []
    labels: dict[str, np.ndarray] = {}
    logd: dict[str, Any] = {}
    for ci, cond in enumerate(CONDITIONS):
        labels[cond] = equivalence.cluster(q, [a.text for a in sampled[ci]])
        logd[cond] = torch.stack([a.logdist for a in sampled[ci]])  # [N, V] float64
        _answer_rows(fact, cond, sampled[ci], greedy[ci], labels[cond], cfg.dist_topk, gen_rows, dist_rows)
    score_rows = [
        _score_row(fact, cond, sampled[ci], greedy[ci], greedy[0].text, labels, logd, equivalence, cfg)
        for ci, cond in enumerate(CONDITIONS)
    ]
    return gen_rows, dist_rows, score_rows


def _gold(fact: dict) -> list[str]:
    """The fact's correct answers: its aliases, else obj."""
    return fact["aliases"] or [fact["object"]]


def _answer_rows(
    fact: dict,
    cond: str,
    answers: list[Answer],
    g: Answer,
    lab: np.ndarray,
    dist_topk: int,
    gen_rows: list[dict],
    dist_rows: list[dict],
) -> None:
    """Append one condition's generation rows (sampled answers, then the greedy one as
    sample_index -1) and the top-k of each sampled answer's mean token distribution."""
    import torch

    gold = _gold(fact)
    for si, a in enumerate(answers):
        p = a.logdist.exp()
        top = torch.topk(p, min(dist_topk, p.shape[0]))
        gen_rows.append(
            {
                "fact_id": fact["fact_id"],
                "condition": cond,
                "sample_index": si,
                "text": a.text,
                "raw_text": a.raw_text,
                "logprob_sum": a.logprob_sum,
                "n_tokens": a.n_tokens,
                "cluster": int(lab[si]),
                "dist_topk_mass": float(top.values.sum()),
                "matches_gold": sem.contains_answer(a.text, gold),
                "matches_counter": sem.contains_answer(a.text, [fact["replace_name"]]),
            }
        )
        for r, (v, t) in enumerate(zip(top.values.tolist(), top.indices.tolist()), start=1):
            dist_rows.append(
                {
                    "fact_id": fact["fact_id"],
                    "condition": cond,
                    "sample_index": si,
                    "rank": r,
                    "token_id": t,
                    "prob": v,
                }
            )
    gen_rows.append(
        {
            "fact_id": fact["fact_id"],
            "condition": cond,
            "sample_index": -1,
            "text": g.text,
            "raw_text": g.raw_text,
            "logprob_sum": g.logprob_sum,
            "n_tokens": g.n_tokens,
            "cluster": None,
            "dist_topk_mass": None,
            "matches_gold": sem.contains_answer(g.text, gold),
            "matches_counter": sem.contains_answer(g.text, [fact["replace_name"]]),
        }
    )


def _score_row(
    fact: dict,
    cond: str,
    answers: list[Answer],
    g: Answer,
    g_none: str,
    labels: dict,
    logd: dict,
    equivalence: sem.Equivalence,
    cfg: DynamicConfig,
) -> dict:
    """One condition's score row: clusters, SE (both forms), accuracy; with a context also CP
    against the no-context answers and the persuaded / stubborn labels of the greedy answer."""
    gold = _gold(fact)
    lps = [a.logprob_sum for a in answers]
    row = {
        "fact_id": fact["fact_id"],
        "condition": cond,
        "n_samples": len(answers),
        "n_clusters": len(np.unique(labels[cond])),
        "semantic_entropy": sem.semantic_entropy(lps, labels[cond]),
        "semantic_entropy_mc": sem.semantic_entropy_mc(
            sem.sample_logliks(lps, [a.n_tokens for a in answers], cfg.se_form), labels[cond]
        ),
        "cp": None,
        "context_answer": None,
        "greedy_answer": g.text,
        "greedy_matches_gold": _matches(g.text, fact["object"], gold, cfg.labels),
        "greedy_matches_context": None,
        "sample_accuracy": float(np.mean([sem.contains_answer(a.text, gold) for a in answers])),
        "persuaded": None,
        "stubborn": None,
    }
    if cond != "none":
        ctx = fact["object"] if cond == "original" else fact["replace_name"]
        al = gold if cond == "original" else [fact["replace_name"]]
        m_ctx = _matches(g.text, ctx, al, cfg.labels)
        row["cp"] = sem.coherent_persuasion(
            logd[cond], labels[cond], logd["none"], labels["none"], cfg.kl_zeros
        )
        row["context_answer"] = ctx
        row["greedy_matches_context"] = m_ctx
        row["persuaded"] = bool(m_ctx and not _matches(g_none, ctx, al, cfg.labels))
        if cfg.labels == "rouge":
            same = sem.rouge_match(g.text, g_none, clean_reference=True)
        else:
            same = bool(equivalence.equivalent(fact["question"], [g.text, g_none])[0, 1])
        row["stubborn"] = bool(not m_ctx and same)
    return row


def _matches(answer: str, target: str, aliases: list[str], rule: str) -> bool:
    """Does an answer state ``target``? ``rouge``: the released code's ROUGE-L F1 > 0.3 against
    ``target`` (obj or replace_name); ``alias``: a whole-word occurrence of one of ``aliases``."""
    if rule == "rouge":
        return sem.rouge_match(answer, target)
    return sem.contains_answer(answer, aliases)
