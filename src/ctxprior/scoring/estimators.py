"""Estimators: from (contexts, queries) to persuasion / susceptibility scores.

- ``first_token``: the paper's approximation -- A is the next token after the prompt, over the full
  vocabulary (fast engine: last-position logits, shared-prefix KV, no padding, float64 on device).
- ``answer_set``: A ranges over a set of candidate answer strings, each scored in full (teacher
  forcing, sum of token log-probs), normalized over the set.

``ESTIMATORS`` (at the end) is the registry: one ``Estimator`` entry per value of
``run.estimator``, with the call a unit makes and what the estimator supports; ``registry()`` is it
with the plug-ins of other packages added (entry points ``ctxprior.estimators``, see
``ctxprior.plugins``). The unit's dispatch (``units.compute_unit``), the run's checks, the shard
size, ``score --estimator`` (choices and help) and the dataset card read it.

Every query is scored against every context (the same contexts for every entity); the prompt is
``context + query`` as one string, rendered by a ``PromptFormat`` (``prompts.py``: raw, or the user
turn of the model's chat template). The no-context prompt ``query`` alone gives the prior entropy,
top-k and KL(mixture || prior).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..plugins import Registry
from .engine import Engine
from .metrics import (
    RELIANCE_ANSWER_SET,
    RELIANCE_DIVERGENCES,
    RELIANCE_KEYS,
    RELIANCE_VOCAB,
    scores_torch_chunk,
    vocab_pass,
)
from .prompts import PromptFormat
from .texts import RAW, UnitTexts, first_token_texts


class ScoreError(RuntimeError):
    """Scores that cannot be trusted (NaN / inf); the unit is marked failed."""


@dataclass
class QueryScores:
    persuasion: np.ndarray
    entropy: np.ndarray
    susceptibility: float
    mixture_entropy: float
    mean_conditional_entropy: float
    n_contexts: int
    prior_entropy: float | None = None
    prior_kl: float | None = None
    prior_topk: list[tuple[int, str, float]] = field(default_factory=list)
    prompt_topk: list[list[tuple[int, str, float]]] | None = None
    # per-layer logit-lens scores (``per_layer``): susceptibility, mixture_entropy,
    # mean_conditional_entropy [layers + 1] and, for "psi", persuasion [layers + 1, contexts]
    by_layer: dict[str, np.ndarray] | None = None
    # reliance against the no-context prompt (``metrics.RELIANCE_KEYS`` -> [contexts]), with a prior
    reliance: dict[str, np.ndarray] | None = None
    # the greedy generation after each context prompt (an estimator that ``generates``, asked to)
    generations: list[str] | None = None


def _check_finite(name: str, *values) -> None:
    for v in values:
        arr = np.asarray(v, dtype=np.float64)
        if not np.isfinite(arr).all():
            raise ScoreError(f"non-finite {name} score (NaN/inf); refusing to store it")


def _topk(logp_rows: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(probabilities, token ids) of the k most probable answers of each row, on the device."""
    if k <= 0:
        return None
    vals, idx = torch.topk(logp_rows, min(k, logp_rows.shape[-1]), dim=-1)
    return vals.to(torch.float64).exp(), idx


def _topk_lists(top, labels: Callable[[int], str]) -> list[list[tuple[int, str, float]]]:
    probs, idx = top[0].cpu().numpy(), top[1].cpu().numpy()
    return [[(int(t), labels(int(t)), float(p)) for t, p in zip(ti, pi)] for ti, pi in zip(idx, probs)]


SCORE_KEYS = ("persuasion", "entropy", "susceptibility", "mixture_entropy", "mean_conditional_entropy")


def scores_batch(
    table: torch.Tensor,
    rows: torch.Tensor,
    prior: torch.Tensor | None,
    prior_topk: int,
    store_topk: int,
    labels: Callable[[int], str],
    answers: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> list[QueryScores]:
    """Scores of every query from a log-prob ``table [prompts, answers]``: ``rows [queries,
    contexts]`` name each query's row with each context, ``prior [queries]`` its no-context row.
    The math is one pass over the answers on the device (``metrics.vocab_pass``, no host syncs),
    and the results come to the host at the end. With the no-context rows, the reliance measures
    come from the same pass; ``answers`` = (the index in A of the answer each context supports
    ``[queries, contexts]``, of the gold answer ``[queries]``; -1: none). NaN/+inf log-probs (a
    non-finite entropy) -> ScoreError."""
    nq, nc = rows.shape
    ctx, gold = answers if answers is not None else (None, None)
    dev = vocab_pass(table, rows, prior, ctx, gold)
    ents = [dev["entropy"]] + ([dev["prior_entropy"]] if prior is not None else [])
    if not bool(torch.stack([torch.isfinite(e).all() for e in ents]).all()):
        raise ScoreError("the model produced NaN/inf log-probabilities; refusing to store scores")
    host = {k: v.cpu().numpy() for k, v in dev.items()}
    prior_raw = _topk(table[prior], prior_topk) if prior is not None else None
    prior_top = _topk_lists(prior_raw, labels) if prior_raw is not None else None
    prompt_raw = _topk(table, store_topk)
    if prompt_raw is not None:
        flat = rows.reshape(-1)
        prompt_raw = (prompt_raw[0][flat], prompt_raw[1][flat])
    prompt_top = _topk_lists(prompt_raw, labels) if prompt_raw is not None else None
    return [_query_scores(host, i, nc, prior_top, prompt_top) for i in range(nq)]


def _query_scores(host: dict[str, np.ndarray], i: int, nc: int, prior_top, prompt_top) -> QueryScores:
    """Query i's ``QueryScores`` from the batch's host arrays, checked finite."""
    res = QueryScores(  # the fields of SCORE_KEYS
        persuasion=host["persuasion"][i],
        entropy=host["entropy"][i],
        susceptibility=float(host["susceptibility"][i]),
        mixture_entropy=float(host["mixture_entropy"][i]),
        mean_conditional_entropy=float(host["mean_conditional_entropy"][i]),
        n_contexts=nc,
    )
    _check_finite("persuasion", *(getattr(res, k) for k in SCORE_KEYS))
    if "prior_entropy" in host:
        res.prior_entropy = float(host["prior_entropy"][i])
        res.prior_kl = float(host["prior_kl"][i])
        res.reliance = {k: host[k][i] for k in RELIANCE_KEYS}
        res.reliance.update({k: np.full(nc, np.nan) for k in RELIANCE_ANSWER_SET})  # answer_set's
        _check_finite(
            "prior", res.prior_entropy, res.prior_kl, *(res.reliance[k] for k in RELIANCE_DIVERGENCES)
        )
        res.prior_topk = prior_top[i] if prior_top else []
    if prompt_top is not None:
        res.prompt_topk = prompt_top[i * nc : (i + 1) * nc]
    return res


def first_token(
    engine: Engine,
    contexts: Sequence[str],
    queries: Sequence[str],
    *,
    prior_topk: int = 0,
    store_topk: int = 0,
    with_prior: bool = True,
    progress: Callable[[int], None] | None = None,
    prompt: PromptFormat = RAW,
    per_layer: str | None = None,
    answers: Answers | None = None,
    generate: int = 0,
) -> list[QueryScores]:
    """Score every query against every context with the next-token distribution, keeping the top
    ``prior_topk`` answers of each no-context prompt and the top ``store_topk`` of every prompt
    (0: none; a run passes its ``--prior-topk`` / ``--store-topk``); ``per_layer``
    ("chi" or "psi") adds the logit-lens scores of every layer (``layer_scores``); ``answers``
    (``reliance_answers``) name the answers whose first tokens the reliance measures read;
    ``generate`` (N > 0, not with ``per_layer``): also the greedy generation of N tokens after
    every context prompt (``QueryScores.generations``), from the same prefill
    (``Engine.last_logprobs_and_greedy``)."""
    nc, nq = len(contexts), len(queries)
    seqs = engine.encode(first_token_texts(contexts, queries, prompt, with_prior))
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)]  # one context, every query
    if with_prior:
        groups.append([nq * nc + i for i in range(nq)])
    gens = None
    if per_layer:
        if generate:
            raise ValueError("first_token: generate with per_layer (the layers need their own pass)")
        table, row_of, hidden = engine.last_logprobs_by_layer(seqs, groups, progress=progress)
    elif generate:
        table, row_of, gens = engine.last_logprobs_and_greedy(seqs, groups, nq * nc, generate, progress)
    else:
        table, row_of = engine.last_logprobs(seqs, groups, progress=progress)
    row_at = np.asarray(row_of, np.int64)
    ids: tuple[torch.Tensor, torch.Tensor] | None = None
    if with_prior and answers is not None:
        ctx_ids, gold_ids = _first_token_ids(engine, answers, seqs[nq * nc], prompt.prior(queries[0]))
        idx, ctx_dev, gold_dev = engine.to_device(row_at, ctx_ids, gold_ids)
        ids = (ctx_dev, gold_dev)
    else:
        (idx,) = engine.to_device(row_at)
    rows, prior = idx[: nq * nc].view(nq, nc), (idx[nq * nc :] if with_prior else None)
    results = scores_batch(table, rows, prior, prior_topk, store_topk, _token_labels(engine), ids)
    if gens is not None:
        for i, r in enumerate(results):
            r.generations = gens[i * nc : (i + 1) * nc]
    if per_layer:
        inner = layer_scores(engine, hidden, idx[: nq * nc], nq, nc, psi=per_layer == "psi")
        for i, r in enumerate(results):
            r.by_layer = _with_output_layer(inner, r, i)
    return results


LAYER_KEYS = ("susceptibility", "mixture_entropy", "mean_conditional_entropy")


@torch.inference_mode()
def layer_scores(
    engine: Engine, hidden: torch.Tensor, idx: torch.Tensor, nq: int, nc: int, psi: bool = False
) -> dict[str, np.ndarray]:
    """Logit-lens scores of the inner layers: {key: [layers, queries] (persuasion: [layers,
    queries, contexts])}. Layer l reads ``hidden[l]`` (the stream before block l + 1) through the
    final norm and head (``Engine.lens``); the output layer is the final scores themselves
    (``first_token`` appends them). Per layer, queries go in chunks whose log-probs fit
    ``logits_elements``; the math stays on the device (no host syncs) and comes to the host in one
    transfer at the end."""
    from .sizing import logits_elements

    n_layers = hidden.shape[0]
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    out = {k: hidden.new_empty((n_layers, nq), dtype=torch.float64) for k in LAYER_KEYS}
    if psi:
        out["persuasion"] = hidden.new_empty((n_layers, nq, nc), dtype=torch.float64)
    chunk = max(1, logits_elements(engine.lm) // max(1, 2 * nc * vocab))
    for layer in range(n_layers):
        for q0 in range(0, nq, chunk):
            q1 = min(nq, q0 + chunk)
            # float32 like the final table, so every layer is rounded alike
            lp = engine.lens(hidden[layer, idx[q0 * nc : q1 * nc]]).to(torch.float32).view(q1 - q0, nc, -1)
            for k, v in scores_torch_chunk(lp).items():
                if k in out:
                    out[k][layer, q0:q1] = v
    if bool(torch.stack([~torch.isfinite(v).all() for v in out.values()]).any()):
        raise ScoreError("non-finite per-layer score (NaN/inf); refusing to store it")
    return {k: v.cpu().numpy() for k, v in out.items()}


def _with_output_layer(inner: dict[str, np.ndarray], r: QueryScores, i: int) -> dict[str, np.ndarray]:
    """Query i's per-layer scores: the inner layers, then the output layer = its final scores."""
    final = {
        "susceptibility": r.susceptibility,
        "mixture_entropy": r.mixture_entropy,
        "mean_conditional_entropy": r.mean_conditional_entropy,
        "persuasion": r.persuasion,
    }
    return {k: np.concatenate([v[:, i], np.asarray(final[k])[None]]) for k, v in inner.items()}


def _token_labels(engine: Engine) -> Callable[[int], str]:
    tok = engine.lm.tokenizer
    cache: dict[int, str] = {}

    def label(t: int) -> str:
        if t not in cache:
            cache[t] = tok.decode([t])
        return cache[t]

    return label


def _continuation_ids(
    engine: Engine,
    prompts_ids: Sequence[tuple[int, ...]],
    prompts: Sequence[str],
    answers: Sequence[Sequence[str]],
) -> list[list[tuple[int, ...]]]:
    """Tokens of each answer after its prompt: from the whole string when the prompt's tokens are
    a prefix of it (the usual case), else the answer tokenized on its own. One tokenizer call for
    all (prompt, answer) strings."""
    seps = ["" if (not t or t[-1].isspace()) else " " for t in prompts]
    full = engine.encode([t + sep + a for t, sep, ans in zip(prompts, seps, answers) for a in ans])
    alone = {}
    out, k = [], 0
    for ids, sep, ans in zip(prompts_ids, seps, answers):
        row = []
        for a in ans:
            f = full[k]
            k += 1
            if len(f) > len(ids) and f[: len(ids)] == ids:
                row.append(f[len(ids) :])
            else:
                if (sep, a) not in alone:
                    alone[sep, a] = tuple(engine.lm.tokenizer(sep + a, add_special_tokens=False)["input_ids"])
                row.append(alone[sep, a])
        out.append(row)
    return out


def answer_set(
    engine: Engine,
    contexts: Sequence[str],
    queries: Sequence[str],
    candidates: Sequence[Sequence[str]],
    *,
    prior_topk: int = 0,
    store_topk: int = 0,
    with_prior: bool = True,
    progress: Callable[[int], None] | None = None,
    prompt: PromptFormat = RAW,
    answers: Answers | None = None,
) -> list[QueryScores]:
    """Score every query against every context over a candidate answer set per query.

    ``candidates[i]``: the answer strings of query i (deduplicated, order kept). p(a | prompt) =
    exp(sum log p(tokens of a)) normalized over the set. ``answers`` (``reliance_answers``): the
    answers the reliance measures read. The measures declared ``vocab`` (the sources' confidence
    gain, scaled difference, ...) are read from the same pass over the whole vocabulary at the
    first answer token (``_vocab_reliance``); their values over the candidates go under their
    ``*_answer_set`` names (an answer outside the set counts as none there).
    """
    nc, nq = len(contexts), len(queries)
    per = nc + (1 if with_prior else 0)
    texts, owner = [], []
    for i, q in enumerate(queries):
        texts += [prompt(c, q) for c in contexts] + ([prompt.prior(q)] if with_prior else [])
        owner += [i] * per
    seqs = engine.encode(texts)
    cands = [list(dict.fromkeys(c)) for c in candidates]
    conts = _continuation_ids(engine, seqs, texts, [cands[i] for i in owner])
    last = None
    if answers and with_prior:
        vocab = engine.model.get_output_embeddings().weight.shape[0]
        last = torch.full((len(texts), vocab), float("nan"), dtype=torch.float32, device=engine.device)
    sums = engine.continuation_logprobs(seqs, conts, progress=progress, last=last)
    results = []
    for i in range(nq):
        block = torch.tensor(sums[i * per : (i + 1) * per], dtype=torch.float64)
        logp = torch.log_softmax(block, dim=-1)
        prior = torch.tensor([nc]) if with_prior else None
        names = cands[i]
        ids = _candidate_ids(names, answers[0][i], answers[1][i]) if answers and with_prior else None
        results += scores_batch(
            logp, torch.arange(nc)[None], prior, prior_topk, store_topk, names.__getitem__, ids
        )
    if last is not None and answers is not None:
        _vocab_reliance(engine, results, last.view(nq, per, -1), answers, (seqs[nc], texts[nc]))
    return results


def _vocab_reliance(
    engine: Engine,
    results: list[QueryScores],
    table: torch.Tensor,
    answers: Answers,
    prior_prompt: tuple[tuple[int, ...], str],
) -> None:
    """Move each query's answer-set values of the ``vocab`` measures to their ``*_answer_set``
    names and put in their place the values over the whole vocabulary, from ``table [queries,
    contexts + 1, V]`` (the next-token log-probs after each prompt, the no-context one last) and
    the first token of each answer after the prompt, as ``first_token`` reads them; one pass over
    the vocabulary on the device (``metrics.vocab_pass``), to the host in one transfer."""
    nq, per = table.shape[:2]
    ctx_ids, gold_ids = _first_token_ids(engine, answers, *prior_prompt)
    ctx_d, gold_d = engine.to_device(ctx_ids, gold_ids)
    at = torch.arange(nq * per, device=table.device).view(nq, per)
    out = vocab_pass(table.view(nq * per, -1), at[:, :-1], at[:, -1], ctx_d, gold_d)
    host = {k: out[k].cpu().numpy() for k in RELIANCE_VOCAB}
    if results and not np.isfinite(np.stack([host[k] for k in RELIANCE_DIVERGENCES if k in host])).all():
        raise ScoreError("non-finite reliance measure over the vocabulary (NaN/inf); refusing to store it")
    for i, r in enumerate(results):
        assert r.reliance is not None  # a prior was scored
        for name, of in RELIANCE_ANSWER_SET.items():
            r.reliance[name] = r.reliance[of]
        r.reliance.update({k: host[k][i] for k in RELIANCE_VOCAB})


def full_answer_choice(
    engine: Engine, prompts: Sequence[str], pairs: Sequence[tuple[str, str]]
) -> np.ndarray:
    """For each prompt, which of its two answers has the higher sequence probability after it (0:
    the first, 1: the second; teacher forcing, sums of token log-probs as ``answer_set`` scores
    them). Decides the outcome where the first token cannot tell the gold answer from the
    context's (they share it, e.g. " 1977" / " 1967" under a digit-by-digit tokenizer)."""
    if not prompts:
        return np.zeros(0, np.int64)
    seqs = engine.encode(list(prompts))
    conts = _continuation_ids(engine, seqs, prompts, [list(p) for p in pairs])
    sums = np.asarray(engine.continuation_logprobs(seqs, conts), np.float64)
    return (sums[:, 1] > sums[:, 0]).astype(np.int64)


# -- the answers the reliance measures read -----------------------------------------------------
Answers = tuple[Sequence[Sequence[str | None]], Sequence[str | None]]


def reliance_answers(unit: UnitTexts) -> Answers:
    """(per query, the answer each context supports; per query, the gold answer), as strings.
    Open queries: the context's stated answer and the fact's answer. Closed queries (a yes/no
    question about the fact's answer): gold "Yes"; a context supports "No" when it states another
    answer than the fact's (case-insensitively), "Yes" when it states the fact's -- as the
    generation labels read them."""
    ctx = list(unit.context_answers)
    if unit.query_type != "closed":
        return [ctx] * len(unit.queries), list(unit.answers)
    yes, no = closed_candidates()

    def supports(c: str | None, a: str | None) -> str | None:
        same = a is not None and c is not None and c.strip().casefold() == a.strip().casefold()
        return None if c is None else (yes if same else no)

    return [[supports(c, a) for c in ctx] for a in unit.answers], [yes] * len(unit.queries)


def _first_token_ids(
    engine: Engine, answers: Answers, prompt_ids: tuple[int, ...], prompt_text: str
) -> tuple[np.ndarray, np.ndarray]:
    """The first token of each answer after a no-context prompt of the unit (its queries share the
    template's ending, so one prompt stands for all): ([queries, contexts], [queries]) int64, -1
    where there is no answer. One tokenizer call for the unit's distinct answers."""
    ctx, gold = answers
    words = sorted({a for row in ctx for a in row if a} | {a for a in gold if a})
    conts = _continuation_ids(engine, [prompt_ids], [prompt_text], [words])[0] if words else []
    first: dict[str | None, int] = {w: (c[0] if c else -1) for w, c in zip(words, conts)}
    c_ids = np.array([[first.get(a, -1) for a in row] for row in ctx], np.int64).reshape(len(gold), -1)
    return c_ids, np.array([first.get(a, -1) for a in gold], np.int64)


def _candidate_ids(names: Sequence[str], ctx: Sequence[str | None], gold: str | None):
    """(each context's answer, the gold answer) as indices into one query's candidates, -1: none."""
    pos: dict[str | None, int] = {n: k for k, n in enumerate(names)}
    c = torch.tensor([pos.get(a, -1) for a in ctx], dtype=torch.int64)
    return c[None], torch.tensor([pos.get(gold, -1)], dtype=torch.int64)


def closed_candidates() -> list[str]:
    return ["Yes", "No"]


# -- the registry -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Estimator:
    """One ``--estimator``: ``run(engine, unit, *, prior_topk, store_topk, progress, prompt, per_layer)``
    scores a unit's queries; ``per_layer``: it can add the logit-lens scores of every layer;
    ``vocab_table``: a unit holds a [prompts x vocab] table (the shard size follows free memory),
    else units hold at most 8 entities; ``help``: its line in ``ctxprior score --help``;
    ``prompts(unit, prompt)``: the texts ``run`` will tokenize first, when known ahead (the executor
    tokenizes the next unit's while the device computes this one's); ``card``: what the answer
    variable A is, for the dataset card (default: ``help``); ``score``: a choice of ``ctxprior
    score --estimator`` (False: another kind of run writes it, with ``run`` None); ``generates``:
    ``run`` also takes ``generate=N`` and returns each context prompt's greedy generation of N
    tokens (``QueryScores.generations``) from its own pass over the prompts (not with
    ``per_layer``), so a run's outcome labels cost no second prefill."""

    name: str
    run: Callable[..., list[QueryScores]] | None
    per_layer: bool = False
    vocab_table: bool = False
    help: str = ""
    prompts: Callable[[UnitTexts, PromptFormat], list[str]] | None = None
    card: str = ""
    score: bool = True
    generates: bool = False


def answer_candidates(unit: UnitTexts, answer: str | None) -> list[str]:
    """The answer set of one query: Yes/No for a closed query (its fixed choices); the dataset's
    declared answer space where it has one (DRUID's True / False / None, ``--answer-label``);
    else the original answer and the answers the contexts state (deduplicated, order kept)."""
    if unit.query_type == "closed":
        return closed_candidates()
    if unit.answer_labels:
        return list(dict.fromkeys(unit.answer_labels))
    stated = [a for a in unit.context_answers if a]
    return list(dict.fromkeys(([answer] if answer else []) + stated))


def _run_first_token(
    engine: Engine, unit: UnitTexts, *, per_layer: str | None = None, **kw
) -> list[QueryScores]:
    return first_token(
        engine, unit.contexts, unit.queries, per_layer=per_layer, answers=reliance_answers(unit), **kw
    )


def _run_answer_set(
    engine: Engine, unit: UnitTexts, *, per_layer: str | None = None, **kw
) -> list[QueryScores]:
    cands = [answer_candidates(unit, a) for a in unit.answers]
    return answer_set(engine, unit.contexts, unit.queries, cands, answers=reliance_answers(unit), **kw)


ESTIMATORS: Registry[Estimator] = Registry(
    "estimators",
    "estimator",
    found=lambda obj: [(obj.name, obj)] if isinstance(obj, Estimator) else [],  # an entry point's Estimator
)
for _estimator in (
    Estimator(
        "first-token",
        _run_first_token,
        per_layer=True,
        vocab_table=True,
        generates=True,
        help="next-token distribution over the vocabulary (the paper)",
        prompts=lambda unit, prompt: first_token_texts(unit.contexts, unit.queries, prompt),
        card="the answer variable A is the next token: the softmax of the last prompt position's "
        "logits over the full vocabulary (as in the paper)",
    ),
    Estimator(
        "answer-set",
        _run_answer_set,
        help="full answer strings (the dataset's answer labels where it declares them, else {true "
        "answer} + the contexts' answers; Yes/No for closed) scored by teacher forcing and normalized "
        "over the set (psi and chi; the sources' measures stay over the vocabulary)",
        card="A ranges over the relation's answer strings, each scored by its sequence likelihood "
        "after the prompt and renormalized",
    ),
    Estimator(
        "sampled",
        None,
        help="semantic clusters of sampled answers (ctxprior score-dynamic)",
        card="A is the semantic cluster of sampled generations (DynamicQA-style, Marjanović et al. 2024)",
        score=False,
    ),
):
    ESTIMATORS.add(_estimator.name, _estimator)


AUTO_HELP = (
    "answer-set for a fixed-context sample (`sample --design fixed`: free-form answers such as "
    "' 1977' / ' 1967' that one first token cannot tell apart), first-token otherwise (the paper)"
)


def auto_estimator(design: str) -> str:
    """What ``--estimator auto`` scores a sample of this design with (``AUTO_HELP``)."""
    return "answer-set" if design == "fixed" else "first-token"


def register_estimator(estimator: Estimator) -> Estimator:
    """Add ``estimator`` to the registry (a plug-in module calls it; a name already taken by
    another estimator is a mistake in the code)."""
    return ESTIMATORS.add(estimator.name, estimator)


def registry() -> dict[str, Estimator]:
    """Every estimator by name: the built-ins above, then the entry points ``ctxprior.estimators``
    (an ``Estimator``, or a module that calls ``register_estimator``), loaded on first use."""
    return ESTIMATORS.all()


def score_estimators() -> dict[str, Estimator]:
    """The estimators ``ctxprior score --estimator`` offers (``score``), by name."""
    return {n: e for n, e in registry().items() if e.score}
