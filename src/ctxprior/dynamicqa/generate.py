"""`score-dynamic`: sampled answers, semantic entropy and Coherent Persuasion for DynamicQA facts.

Per fact, three conditions: ``none`` (question alone), ``original`` (context filled with obj) and
``counter`` (context filled with replace_name). Per condition: N answers sampled at the given
temperature (full vocabulary: top_k=0, top_p=1) and one greedy answer (accuracy and the
persuaded / stubborn labels use the greedy answer, as in the paper §5.1).

Per sampled answer we keep its text, the sum of its token log-probs at temperature 1 over its
answer tokens (the model's likelihood, used by semantic entropy; ``--se-form authors`` divides it
by the token count for the Monte-Carlo SE) and the mean of the full softmax distribution over its
generated steps, the end-of-sequence step included, as the released code (``--cp-tokens answer``:
over its answer tokens only), computed in log space in float64 (logsumexp of log_softmax minus log m).
CP is computed inside the run from these exact full-vocabulary distributions; the warehouse keeps
only a sparse top-k (default 50) of each sample's mean distribution plus its mass, because full
rows would cost V×8 bytes = 393 kB per sample for SmolLM2 (11.8 MB per fact). Re-deriving CP from
the stored top-k with the remainder as one extra "other" outcome gives a lower bound on the exact
CP (coarse-graining never increases KL, data-processing inequality).

Answer tokens: generated tokens up to (excluding) the end-of-sequence token or the first token that
starts a new line after some answer text; at least one token (so an empty answer still has a
distribution). Persuaded / stubborn and greedy accuracy follow ``--labels`` (``rouge``: the
released code's ROUGE-L F1 > 0.3; ``alias``: whole-word aliases and the equivalence test).
Departures from the paper and the released code: docs/departures.md. Resumable: one transaction per fact writes all its rows plus the
``dynamicqa_fact_done`` marker; a rerun with the same configuration (or ``--resume RUN``)
continues the unfinished run, skipping finished facts. Sampling is seeded per fact
(seed, fact_id), so a resumed run produces the same rows as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import UserError
from ..options import check_options
from ..schema import runs
from ..schema.store import Store, utcnow
from ..scoring.hfcompat import cache_arg, output_cache
from ..scoring.prompts import render_chat
from ..sqlfiles import read_sql
from . import semantic as sem
from .options import CP_TOKENS, LABEL_RULES, SCORE_DYNAMIC_OPTIONS, default  # noqa: F401  (re-exported)
from .sample import make_sample, parse_partitions, resolve_dataset, select_facts

CONDITIONS = ("none", "original", "counter")
PROMPT_NONE = "Answer the following question with a short answer.\nQuestion: {question}"
PROMPT_CTX = "Answer the following question with a short answer, based on the context.\nContext: {context}\nQuestion: {question}"
RAW_SUFFIX = "\nAnswer:"
# options added after the first dynamic runs, with the rule those runs used (resume keeps them)
LEGACY_OPTIONS = {"se_form": "sum", "cp_tokens": "answer", "labels": "alias", "kl_zeros": "inf"}
RUN_KIND = "dynamic"
PKG = "ctxprior.dynamicqa"


@dataclass
class DynamicConfig:
    """The options of a dynamic run (stored with it); defaults and checks from their
    declarations (``dynamicqa/options.py``)."""

    dataset: str = default("dataset")
    partitions: list[str] = field(default_factory=lambda: list(default("partitions")))
    limit: int | None = None
    model: str = default("model")
    samples: int = default("samples")
    temperature: float = default("temperature")
    max_new_tokens: int = default("max_new_tokens")
    equivalence: str = default("equivalence")
    threshold: float | None = None
    chat_template: str = default("chat_template")
    seed: int = default("seed")
    dist_topk: int = 50
    device: str = default("device")
    dtype: str = "auto"
    se_form: str = default("se_form")
    cp_tokens: str = default("cp_tokens")
    labels: str = default("labels")
    kl_zeros: str = default("kl_zeros")

    def validate(self) -> None:
        self.partitions = parse_partitions(self.partitions)
        check_options(SCORE_DYNAMIC_OPTIONS, {k: v for k, v in asdict(self).items() if k != "partitions"})
        kind = self.equivalence.partition(":")[0]
        if kind not in ("nli", "embedding") or not self.equivalence.partition(":")[2]:
            raise UserError(f"--equivalence {self.equivalence}: expected nli:MODEL or embedding:minilm")


# ---- threshold calibration on real DynamicQA pairs --------------------------------------------


def calibrate(
    store: Store, dataset: str, equivalence: sem.EmbeddingEquivalence, n_facts: int = 1200, seed: int = 0
) -> dict[str, Any]:
    """Calibrate the cosine threshold on DynamicQA itself; cached per (dataset, encoder, seed).

    Positives: (question + obj, question + another alias of obj) from possible_answers (same
    meaning, different surface). Negatives: (question + obj, question + replace_name), the
    substitute chosen as the most similar *different* entity (hard negatives), and the disputable
    partition's annotator-verified competing values. Facts are split in halves: the threshold
    maximizing balanced accuracy on one half is reported with its accuracy on the other.
    """
    ds_id = resolve_dataset(store, dataset)
    row = store.query(read_sql(PKG, "sql/calibration_latest.sql"), [ds_id, equivalence.encoder, seed])
    cols = (
        [c[0] for c in store.execute("SELECT * FROM dynamicqa_calibration LIMIT 0").description]
        if row
        else []
    )
    if row:
        return dict(zip(cols, row[0]))
    facts = store.query(read_sql(PKG, "sql/calibration_facts.sql"), [ds_id])
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(facts))[:n_facts]
    pos: list[tuple[int, str, str, str]] = []
    neg: list[tuple[int, str, str, str]] = []
    for k, i in enumerate(order.tolist()):
        _fid, q, obj, rep, aliases = facts[i]
        others = [a for a in aliases if sem.normalize(a) != sem.normalize(obj) and sem.normalize(a)]
        if others:
            pos.append((k, q, obj, others[int(rng.integers(len(others)))]))
        if sem.normalize(rep) != sem.normalize(obj):
            neg.append((k, q, obj, rep))

    def sims(pairs):
        a = equivalence.embed([sem._qa(q, x) for _, q, x, _ in pairs])
        b = equivalence.embed([sem._qa(q, y) for _, q, _, y in pairs])
        return np.sum(a * b, axis=1), np.array([k % 2 for k, *_ in pairs])

    ps, pfold = sims(pos)
    ns, nfold = sims(neg)
    t, bacc_fit = sem.best_threshold(ps[pfold == 0], ns[nfold == 0])
    tpr = float(np.mean(ps[pfold == 1] >= t))
    tnr = float(np.mean(ns[nfold == 1] < t))
    rec = {
        "calibration_id": store.next_id("dynamicqa_calibration", "calibration_id"),
        "dataset_id": ds_id,
        "encoder": equivalence.encoder,
        "encoder_revision": None,
        "method": (
            "cosine of emb(question+' '+answer); pos = obj vs another possible_answers alias, "
            "neg = obj vs replace_name; threshold maximizing balanced accuracy on facts of fold 0, "
            f"evaluated on fold 1; {len(order)} facts drawn with seed {seed}"
        ),
        "n_pos": len(pos),
        "n_neg": len(neg),
        "threshold": t,
        "balanced_accuracy_fit": bacc_fit,
        "balanced_accuracy_heldout": 0.5 * (tpr + tnr),
        "tpr_heldout": tpr,
        "tnr_heldout": tnr,
        "seed": seed,
        "created_at": utcnow(),
    }
    with store.transaction():
        store.insert_arrow("dynamicqa_calibration", pa.Table.from_pylist([rec]))
    return rec


# ---- generation -----------------------------------------------------------------------------


@dataclass
class Answer:
    text: str
    raw_text: str
    logprob_sum: float
    n_tokens: int
    logdist: Any  # torch [V] float64: log of the mean token distribution (over cp_tokens' steps)


def build_prompt(tokenizer, content: str, chat: bool) -> str:
    if chat:
        return render_chat(tokenizer, content)
    return content + RAW_SUFFIX


def _answer_len(tokenizer, tokens: list[int], stop_ids: set[int]) -> tuple[int, int]:
    """(answer tokens m >= 1, generated tokens before end of sequence)."""
    text = ""
    end = len(tokens)
    m = None
    for t, tid in enumerate(tokens):
        if tid in stop_ids:
            end = t
            if m is None:
                m = t
            break
        piece = tokenizer.decode([tid])
        if m is None and "\n" in piece and text.strip():
            m = t
        text += piece
    if m is None:
        m = end
    return max(1, m), end


def generate(
    lm,
    prompts: Sequence[str],
    n: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    cp_tokens: str = "generated",
) -> tuple[list[list[Answer]], list[Answer]]:
    """For each prompt: n answers sampled at ``temperature`` (full vocabulary) and one greedy answer.

    Each prompt is encoded once (prefill), then its KV cache is repeated for its n + 1 rows
    (row 0 greedy): B = len(prompts) * (n + 1) rows decode together, one token per step.
    ``cp_tokens``: the steps each sample's mean token distribution averages, ``generated`` (every
    generated step, the end-of-sequence one included, as the released code) or ``answer`` (the
    answer tokens only).
    """
    stop_ids = _stop_ids(lm)
    seqs, all_logits = _decode(lm, prompts, n + 1, temperature, max_new_tokens, seed, stop_ids)
    return _answers(lm.tokenizer, seqs, all_logits, n + 1, len(prompts), stop_ids, cp_tokens)


def _stop_ids(lm) -> set[int]:
    """Token ids that end an answer: the tokenizer's and the generation config's EOS, and
    ``<|im_end|>`` when the vocabulary has it."""
    tok, model = lm.tokenizer, lm.model
    stop_ids = {
        i
        for i in (tok.eos_token_id, getattr(model.generation_config, "eos_token_id", None))
        if isinstance(i, int)
    }
    if "<|im_end|>" in tok.get_vocab():
        stop_ids.add(tok.convert_tokens_to_ids("<|im_end|>"))
    return stop_ids


def _decode(
    lm, prompts: Sequence[str], r: int, temperature: float, max_new_tokens: int, seed: int, stop_ids: set[int]
):
    """Prefill once per prompt, repeat its KV cache ``r`` times, decode all rows together (row 0 of
    each prompt greedy, the rest sampled); returns tokens [B, T] and raw logits [B, T, V]."""
    import torch

    tok, model = lm.tokenizer, lm.model
    tok.padding_side = "left"
    gen = torch.Generator(device="cpu").manual_seed(seed)
    enc = tok(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False).to(lm.device)
    attn = enc["attention_mask"]  # [P, L]
    with torch.no_grad():
        out = model(
            input_ids=enc["input_ids"],
            attention_mask=attn,
            position_ids=(attn.cumsum(-1) - 1).clamp_min(0),
            use_cache=True,
        )
        past = output_cache(out)
        past.batch_repeat_interleave(r)
        logits = out.logits[:, -1].float().repeat_interleave(r, 0)  # [B, V]
        attn = attn.repeat_interleave(r, 0)  # [B, L]
        B = logits.shape[0]
        greedy_row = torch.arange(B) % r == 0  # [B]
        finished = torch.zeros(B, dtype=torch.bool)
        steps_logits, steps_tokens = [], []
        for _ in range(max_new_tokens):
            probs = torch.softmax(logits / temperature, dim=-1)  # [B, V] sampling distribution
            sampled = torch.multinomial(probs.cpu(), 1, generator=gen).squeeze(1)  # [B]
            nxt = torch.where(greedy_row, logits.argmax(-1).cpu(), sampled)
            nxt = torch.where(finished, torch.full_like(nxt, tok.pad_token_id), nxt)
            steps_logits.append(logits)
            steps_tokens.append(nxt)
            finished |= torch.isin(nxt, torch.tensor(sorted(stop_ids)))
            if bool(finished.all()):
                break
            attn = torch.cat([attn, torch.ones(B, 1, dtype=attn.dtype, device=attn.device)], dim=1)
            out = model(
                input_ids=nxt[:, None].to(lm.device),
                attention_mask=attn,
                position_ids=(attn.sum(-1, keepdim=True) - 1),
                use_cache=True,
                **cache_arg(model, past),
            )
            past = output_cache(out)
            logits = out.logits[:, -1].float()
    return torch.stack(steps_tokens, 1), torch.stack(steps_logits, 1)  # [B, T], [B, T, V] temperature 1


def _answers(
    tok, seqs, all_logits, r: int, n_prompts: int, stop_ids: set[int], cp_tokens: str = "generated"
) -> tuple[list[list[Answer]], list[Answer]]:
    """Each row's answer: text, log-prob sum over its answer tokens and mean token distribution
    (float64, log space) over the steps ``cp_tokens`` names; rows grouped back per prompt
    (sampled) and the greedy row apart."""
    import torch

    sampled_out: list[list[Answer]] = [[] for _ in range(n_prompts)]
    greedy_out: list[Answer] = []
    for b in range(seqs.shape[0]):
        toks = seqs[b].tolist()
        m, end = _answer_len(tok, toks, stop_ids)
        m = min(m, len(toks))
        steps = m if cp_tokens == "answer" else min(end + 1, len(toks))  # generated: EOS step included
        logp = torch.log_softmax(
            all_logits[b, : max(m, steps)].double(), dim=-1
        )  # [max(m, steps), V] float64
        lp_sum = float(logp[:m].gather(1, seqs[b, :m, None].to(logp.device)).sum())
        logdist = torch.logsumexp(logp[:steps], dim=0) - math.log(steps)  # [V]
        a = Answer(
            tok.decode(toks[:m], skip_special_tokens=True).strip(),
            tok.decode(toks[:end], skip_special_tokens=True),
            lp_sum,
            m,
            logdist,
        )
        if b % r == 0:
            greedy_out.append(a)
        else:
            sampled_out[b // r].append(a)
    return sampled_out, greedy_out


# ---- per-fact scoring -------------------------------------------------------------------------


def _fact_rows(facts: list[int], store: Store) -> list[dict]:
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


# ---- the run ----------------------------------------------------------------------------------


def _config_key(cfg: DynamicConfig, extra: dict) -> str:
    return json.dumps({**asdict(cfg), **extra}, sort_keys=True)


def _write_fact(store: Store, run_id: int, fact_id: int, gen, dist, scores, seconds: float) -> None:
    def tbl(rows, types):
        cols = {k: [r[k] for r in rows] for k in rows[0]}
        return pa.table(
            {
                "run_id": pa.array([run_id] * len(rows), pa.int32()),
                **{k: pa.array(v, types.get(k)) for k, v in cols.items()},
            }
        )

    i32 = pa.int32()
    with store.transaction():
        if store.scalar(
            "SELECT count(*) FROM dynamicqa_fact_done WHERE run_id = ? AND fact_id = ?", [run_id, fact_id]
        ):
            return
        store.insert_arrow(
            "dynamicqa_generation",
            tbl(
                gen,
                {
                    "fact_id": i32,
                    "sample_index": i32,
                    "n_tokens": i32,
                    "cluster": i32,
                    "dist_topk_mass": pa.float64(),
                },
            ),
        )
        store.insert_arrow(
            "dynamicqa_token_dist",
            tbl(dist, {"fact_id": i32, "sample_index": i32, "rank": i32, "token_id": i32}),
        )
        store.insert_arrow(
            "dynamicqa_score",
            tbl(
                scores,
                {
                    "fact_id": i32,
                    "n_samples": i32,
                    "n_clusters": i32,
                    "cp": pa.float64(),
                    "context_answer": pa.string(),
                    "greedy_matches_context": pa.bool_(),
                    "persuaded": pa.bool_(),
                    "stubborn": pa.bool_(),
                },
            ),
        )
        store.insert_arrow(
            "dynamicqa_fact_done",
            {
                "run_id": pa.array([run_id], i32),
                "fact_id": pa.array([fact_id], i32),
                "seconds": [seconds],
                "finished_at": pa.array([utcnow()], pa.timestamp("us")),
            },
        )
        store.execute(read_sql(PKG, "sql/fact_done_counts.sql"), [run_id, len(gen), run_id])


@dataclass
class DynamicRun:
    """A dynamic run after a call of ``run_dynamic``: its units are facts, its prompts the answers
    generated in this call (sampled and greedy)."""

    id: int
    status: str
    units_total: int
    units_done: int
    prompts: int
    seconds: float
    mean_cp: float | None
    mean_se_with_context: float | None
    units_failed: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def prompts_per_second(self) -> float:
        return self.prompts / self.seconds if self.seconds > 0 else 0.0


def run_dynamic(
    store: Store,
    cfg: DynamicConfig | None = None,
    resume: int | None = None,
    progress: bool = True,
    echo=None,
) -> DynamicRun:
    """``score_dynamic`` (a new run, the unfinished one with the same configuration, or run
    ``resume`` with its stored configuration) and its summary."""
    t0 = time.perf_counter()
    opened: dict = {}
    rid = score_dynamic(store, cfg, resume=resume, progress=progress, echo=echo, opened=opened)
    status, done, total, prompts, cp, se, error = store.query(read_sql(PKG, "sql/run_summary.sql"), [rid])[0]
    return DynamicRun(
        rid,
        status,
        int(total or 0),
        int(done or 0),
        int(prompts) - opened.get("prompts", 0),
        time.perf_counter() - t0,
        cp,
        se,
        errors=[error] if error else [],
    )


def score_dynamic(
    store: Store,
    cfg: DynamicConfig | None = None,
    resume: int | None = None,
    lm=None,
    equivalence: sem.Equivalence | None = None,
    progress: bool = True,
    max_facts: int | None = None,
    echo=None,
    opened: dict | None = None,
) -> int:
    """Run (or resume) a dynamic run; returns its run_id. ``lm``/``equivalence`` may be injected (tests).

    max_facts: stop after this many facts in this call (leaves the run 'running'; for tests/resume).
    opened: filled with the run's answers generated before this call (``prompts``).
    """
    echo = echo or (lambda s: None)
    cfg = _stored_config(store, resume) if resume is not None else cfg
    cfg = cfg or DynamicConfig()
    cfg.validate()
    ds_id = resolve_dataset(store, cfg.dataset)
    facts = select_facts(store, ds_id, cfg.partitions, cfg.limit)
    if not facts:
        raise UserError(f"dataset '{cfg.dataset}' has no facts in partition(s) {', '.join(cfg.partitions)}")
    calib = None
    if equivalence is None:
        equivalence, calib = _equivalence(store, cfg)
    if lm is None:
        from ..scoring.models import load_model

        lm = load_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    chat = cfg.chat_template == "auto" and bool(getattr(lm.tokenizer, "chat_template", None))
    extra = {
        "equivalence_detail": equivalence.describe(),
        "calibration_id": calib and calib["calibration_id"],
        "chat_template_applied": chat,
        "prompt_none": PROMPT_NONE,
        "prompt_context": PROMPT_CTX,
        "raw_prompt_suffix": None if chat else RAW_SUFFIX,
        "conditions": list(CONDITIONS),
        "sampling": {"top_k": 0, "top_p": 1.0, "greedy_answer": True},
        "model_id": lm.model_id,
        "model_revision": lm.revision,
    }
    key = _config_key(cfg, extra)
    if resume is None:
        old = runs.find_resumable(store, RUN_KIND, lambda cfg: cfg == key)
        if old is not None:
            resume = int(old)
            echo(f"continuing unfinished run {resume} (same configuration)")
    sample_id = make_sample(store, cfg.dataset, cfg.partitions, cfg.limit)
    run_id = _open_run(store, cfg, key, lm, ds_id, sample_id, len(facts), resume)
    if opened is not None:
        opened["prompts"] = int(
            store.scalar("SELECT coalesce(prompts_done, 0) FROM run WHERE run_id = ?", [run_id])
        )
    _score_facts(store, run_id, facts, lm, equivalence, cfg, chat, progress, max_facts)
    return run_id


def _stored_config(store: Store, resume: int) -> DynamicConfig:
    """The configuration dynamic run ``resume`` was started with."""
    row = store.query("SELECT kind, config_json, status FROM run WHERE run_id = ?", [resume])
    if not row:
        raise UserError(f"--resume {resume}: no such run in {store.path}")
    if row[0][0] != RUN_KIND:
        raise UserError(f"--resume {resume}: run {resume} is a {row[0][0]} run, not a dynamic one")
    stored = {**LEGACY_OPTIONS, **json.loads(row[0][1])}
    return DynamicConfig(**{k: stored[k] for k in DynamicConfig.__dataclass_fields__ if k in stored})


def _equivalence(store: Store, cfg: DynamicConfig) -> tuple[sem.Equivalence, dict | None]:
    """The configured equivalence test; an embedding one without a threshold is calibrated on the
    dataset first (the calibration row is returned too)."""
    kind, _, arg = cfg.equivalence.partition(":")
    if kind != "embedding":
        return sem.NLIEquivalence(arg), None
    equivalence = sem.EmbeddingEquivalence(arg, cfg.threshold if cfg.threshold is not None else 0.8)
    calib = None
    if cfg.threshold is None:
        calib = calibrate(store, cfg.dataset, equivalence)
        equivalence.threshold = float(calib["threshold"])
    return equivalence, calib


def _open_run(
    store: Store,
    cfg: DynamicConfig,
    key: str,
    lm,
    ds_id: int,
    sample_id: int,
    n_facts: int,
    resume: int | None,
) -> int:
    """Insert the dynamic run row (status running), or mark run ``resume`` running again."""
    if resume is not None:
        runs.reopen_run(store, resume)
        return resume
    return runs.start_run(
        store,
        RUN_KIND,
        sample_id=sample_id,
        dataset_id=ds_id,
        model=cfg.model,
        model_revision=lm.revision,
        dtype=lm.dtype,
        quantization=lm.quantization or "none",
        device=lm.device,
        estimator="sampled",
        batch_size=3 * cfg.samples,
        seed=cfg.seed,
        config_json=key,
        units_total=n_facts,
    )


def _score_facts(
    store: Store,
    run_id: int,
    facts: list[int],
    lm,
    equivalence: sem.Equivalence,
    cfg: DynamicConfig,
    chat: bool,
    progress: bool,
    max_facts: int | None,
) -> None:
    """Score the run's unfinished facts, one transaction each; the run ends done, cancelled
    (Ctrl-C) or failed (with the error), or stays running after ``max_facts`` facts."""
    from tqdm.auto import tqdm

    done = {r[0] for r in store.query("SELECT fact_id FROM dynamicqa_fact_done WHERE run_id = ?", [run_id])}
    todo = [f for f in facts if f not in done]
    rows = _fact_rows(todo, store) if todo else []
    n_this = 0
    with runs.closing(store, run_id, record_crash=True) as out:
        for fact in tqdm(
            rows,
            desc=f"run {run_id}",
            unit="fact",
            disable=None if progress else True,
            initial=len(done),
            total=len(facts),
        ):
            if max_facts is not None and n_this >= max_facts:
                out.status = "running"
                return
            t0 = time.perf_counter()
            gen, dist, scores = score_fact(lm, equivalence, fact, cfg, chat)
            _write_fact(store, run_id, fact["fact_id"], gen, dist, scores, time.perf_counter() - t0)
            n_this += 1
        out.status = "done"
