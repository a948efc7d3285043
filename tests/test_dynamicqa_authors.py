"""DynamicQA against the released code (copenlu/dynamicqa): KL with exact zeros, the per-sample
distribution's steps, the Monte-Carlo SE's per-sample log-likelihood, ROUGE-L labels, and the
defaults (docs/departures.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from ctxprior.dynamicqa import answers, facts, run
from ctxprior.dynamicqa import semantic as sem
from ctxprior.dynamicqa.config import CONDITIONS, DynamicConfig

LN = math.log


# ---- KL with exact zeros ----------------------------------------------------------------------


def _authors_kl(p: np.ndarray, q: np.ndarray) -> float:
    """robust_persuasion.py calculate_kl_div: rel_entr, then drop inf / nan terms."""
    import scipy.special

    vec = scipy.special.rel_entr(p, q)
    return float(np.sum(np.ma.masked_invalid(vec).compressed()))


def _log(x) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64).log()


def test_kl_zero_on_the_context_side_is_a_number():
    # a context-side cluster distribution with an exact zero (a -inf logit): 0 log 0 = 0, not NaN
    p = [[0.5, 0.5, 0.0]]
    q = [[0.25, 0.25, 0.5]]
    kl = sem.kl_matrix(_log(p), _log(q))
    assert torch.isfinite(kl).all()
    assert float(kl[0, 0]) == pytest.approx(LN(2), abs=1e-15)
    assert sem.coherent_persuasion(_log(p), [0], _log(q), [0]) == pytest.approx(LN(2), abs=1e-15)
    assert float(sem.kl_matrix(_log(p), _log(q), "drop")[0, 0]) == pytest.approx(
        _authors_kl(p[0], q[0]), abs=1e-15
    )
    # zero on both sides: the term is 0 under both rules
    both = [[0.5, 0.5, 0.0]]
    assert float(sem.kl_matrix(_log(p), _log(both))[0, 0]) == pytest.approx(0.0, abs=1e-15)
    assert float(sem.kl_matrix(_log(p), _log(both), "drop")[0, 0]) == pytest.approx(0.0, abs=1e-15)


def test_kl_zero_on_the_no_context_side_is_infinite_by_default_and_dropped_as_the_authors():
    p = [[0.5, 0.25, 0.25], [0.2, 0.0, 0.8]]
    q = [[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]]
    true = sem.kl_matrix(_log(p), _log(q))
    assert math.isinf(float(true[0, 0])) and math.isinf(float(true[1, 0]))
    assert sem.coherent_persuasion(_log(p), [0, 1], _log(q), [0, 1]) == math.inf
    drop = sem.kl_matrix(_log(p), _log(q), "drop")
    for a in range(2):
        for b in range(2):
            assert float(drop[a, b]) == pytest.approx(_authors_kl(np.array(p[a]), np.array(q[b])), abs=1e-14)
    # where q has no zeros both rules are the KL
    assert float(true[0, 1]) == pytest.approx(float(drop[0, 1]), abs=1e-14)
    with pytest.raises(ValueError):
        sem.kl_matrix(_log(p), _log(q), "nan")


def test_kl_without_zeros_equals_the_authors_on_random_distributions():
    rng = np.random.default_rng(3)
    p = torch.log_softmax(torch.tensor(rng.normal(size=(3, 40)) * 4), -1)
    q = torch.log_softmax(torch.tensor(rng.normal(size=(4, 40)) * 4), -1)
    kl, drop = sem.kl_matrix(p, q), sem.kl_matrix(p, q, "drop")
    for a in range(3):
        for b in range(4):
            ref = _authors_kl(p[a].exp().numpy(), q[b].exp().numpy())
            assert float(kl[a, b]) == pytest.approx(ref, rel=1e-12)
            assert float(drop[a, b]) == pytest.approx(ref, rel=1e-12)


# ---- semantic entropy: the authors' per-token mean -------------------------------------------


def _authors_se(avg_logliks, labels, shift=5.0):
    """compute_confidence_measure.py get_predictive_entropy_over_concepts for one row, one model."""
    lk = [np.logaddexp.reduce(np.array(avg_logliks)[np.array(labels) == k]) for k in np.unique(labels)]
    return float(-np.sum(np.array(lk) - shift) / len(lk))


def test_se_authors_form_uses_per_token_means():
    sums, n_tok, labels = [-1.0, -2.0, -6.0], [1, 2, 3], [0, 0, 1]
    means = sem.sample_logliks(sums, n_tok, "authors")
    assert means == [-1.0, -1.0, -2.0]
    assert sem.sample_logliks(sums, n_tok, "sum") == sums
    got = sem.semantic_entropy_mc(means, labels, shift=sem.LIKELIHOOD_SHIFT)
    assert got == pytest.approx((13 - LN(2)) / 2, abs=1e-12)  # -((-1 + ln 2 - 5) + (-2 - 5)) / 2
    assert got == pytest.approx(_authors_se([-1.0, -1.0, -2.0], labels), abs=1e-12)
    # the summed form differs unless every answer is one token long
    summed = sem.semantic_entropy_mc(sums, labels, shift=sem.LIKELIHOOD_SHIFT)
    assert summed == pytest.approx(-((LN(math.exp(-1) + math.exp(-2)) - 5) + (-6 - 5)) / 2, abs=1e-12)
    assert summed - got > 1.0
    one = [1, 1, 1]
    assert sem.semantic_entropy_mc(sem.sample_logliks(sums, one, "authors"), labels) == pytest.approx(
        sem.semantic_entropy_mc(sums, labels), abs=1e-15
    )


# ---- ROUGE-L F1 (the released code's match), hand-computed ------------------------------------


@pytest.mark.parametrize(
    "pred, target, f1",
    [
        ("the cat sat on the mat", "the cat on a mat", 8 / 11),  # LCS 4: 2 * 4 / (6 + 5)
        ("a journalist", "journalist", 2 / 3),  # LCS 1: 2 * 1 / (2 + 1)
        ("Herlyn Espinal Martínez is a journalist.", "journalist", 0.25),  # 7 tokens (mart, nez): 2 / 8
        ("Paris", "paris", 1.0),
        ("New York City", "York New", 0.4),  # LCS 1 (order matters): 2 / 5
        ("", "paris", 0.0),
        ("...", "paris", 0.0),
        ("Lyon", "Paris", 0.0),
    ],
)
def test_rouge_l_f1_hand_computed(pred, target, f1):
    assert sem.rouge_l_f1(pred, target) == pytest.approx(f1, abs=1e-12)
    assert sem.rouge_l_f1(target, pred) == pytest.approx(f1, abs=1e-12)  # F1 is symmetric


def test_rouge_tokens_and_clean_answer_follow_the_released_code():
    assert sem.rouge_tokens("Herlyn Espinal-Martínez, 1990s!") == [
        "herlyn",
        "espinal",
        "mart",
        "nez",
        "1990s",
    ]
    assert sem.clean_answer("Assistant: Answer: Paris") == " paris"
    assert sem.clean_answer("answered: yes") == "ed yes"  # every 'answer' and ':' goes, as in clean_str
    assert sem.rouge_match("Answer: Paris", "Paris")
    assert not sem.rouge_match("Herlyn Espinal Martínez is a journalist.", "journalist")  # 0.25 <= 0.3
    assert sem.rouge_match("He is a journalist", "Journalist")  # 2 / 5 = 0.4 > 0.3
    assert sem.rouge_match("The journalist", "Assistant: a journalist", clean_reference=True)


# ---- persuaded / stubborn under both rules ----------------------------------------------------


class _Eq:
    """Equivalence stub: equivalent when the normalized texts share a word."""

    def equivalent(self, question, answers):
        a, b = (set(sem.normalize(x).split()) for x in answers)
        return np.array([[True, bool(a & b)], [bool(a & b), True]])


def _fact():
    return {
        "fact_id": 1,
        "object": "journalist",
        "replace_name": "literary critic",
        "aliases": ["journalist", "reporter"],
        "question": "What is Herlyn Espinal's occupation?",
    }


def _row(cond, g_text, g_none, rule):
    a = answers.Answer(g_text, g_text, -1.0, 2, None)
    cfg = DynamicConfig(labels=rule)
    labels = {c: np.zeros(1, np.int64) for c in CONDITIONS}
    logd = {c: torch.log_softmax(torch.zeros(1, 4, dtype=torch.float64), -1) for c in CONDITIONS}
    return facts._score_row(_fact(), cond, [a], a, g_none, labels, logd, _Eq(), cfg)


def test_labels_rouge_and_alias_differ_where_the_released_code_does():
    long_answer = "Herlyn Espinal Martínez is a journalist."
    # alias: a whole-word alias is enough; rouge: F1 0.25 is no match (the released code)
    r = _row("original", long_answer, "He is a boxer", "alias")
    assert r["greedy_matches_context"] and r["persuaded"] and not r["stubborn"]
    r = _row("original", long_answer, "He is a boxer", "rouge")
    assert not r["greedy_matches_context"] and not r["persuaded"]
    # ... and stubborn: "is a" is a common subsequence, F1 2 * 2 / (7 + 4) = 0.36 > 0.3
    assert r["stubborn"] and sem.rouge_l_f1(long_answer, "He is a boxer") == pytest.approx(4 / 11)
    # an alias other than obj counts for alias only (the released code compares with obj)
    assert _row("original", "reporter", "boxer", "alias")["persuaded"]
    assert not _row("original", "reporter", "boxer", "rouge")["persuaded"]
    # stubborn: rouge compares the two greedy answers by ROUGE-L; alias uses the equivalence test
    r = _row("counter", "a journalist", "journalist", "rouge")
    assert r["stubborn"] and not r["persuaded"] and r["context_answer"] == "literary critic"
    assert _row("counter", "a journalist", "journalist", "alias")["stubborn"]
    # no-context accuracy follows the rule too
    assert _row("none", long_answer, long_answer, "alias")["greedy_matches_gold"]
    assert not _row("none", long_answer, long_answer, "rouge")["greedy_matches_gold"]


@pytest.mark.parametrize("rule", ["rouge", "alias"])
def test_persuaded_needs_the_no_context_answer_to_differ(rule):
    # the paper's wording: matches the context's answer *but* the no-context answer does not
    # (the released code counts every instance that matches with context)
    assert _row("original", "journalist", "boxer", rule)["persuaded"]
    r = _row("original", "journalist", "journalist", rule)
    assert r["greedy_matches_context"] and not r["persuaded"]


# ---- the per-sample distribution's steps ------------------------------------------------------


class _Tok:
    pieces = {0: "Par", 1: "is", 2: "\n", 3: "more", 9: "</s>", 8: ""}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(self.pieces[i] for i in ids if not (skip_special_tokens and i in (8, 9)))


def _mean_dist(logits: torch.Tensor) -> torch.Tensor:
    return torch.softmax(logits.double(), -1).mean(0)


def test_cp_tokens_generated_includes_every_step_up_to_eos():
    torch.manual_seed(0)
    seqs = torch.tensor([[0, 1, 9, 8, 8], [0, 2, 3, 9, 8], [0, 1, 1, 1, 1]])  # rows: EOS, newline, no EOS
    logits = torch.randn(3, 5, 10)
    for rule, steps in (("generated", (3, 4, 5)), ("answer", (2, 1, 5))):
        sampled, greedy = answers._answers(_Tok(), seqs, logits, 3, 1, {9}, rule)
        rows = [greedy[0], *sampled[0]]
        assert [a.text for a in rows] == ["Paris", "Par", "Parisisisis"]
        assert [a.n_tokens for a in rows] == [2, 1, 5]  # SE's tokens do not change with the rule
        for b, (a, k) in enumerate(zip(rows, steps)):
            assert torch.allclose(a.logdist.exp(), _mean_dist(logits[b, :k]), atol=1e-12), (rule, b)
            lp = torch.log_softmax(logits[b].double(), -1)[
                torch.arange(a.n_tokens), seqs[b, : a.n_tokens]
            ].sum()
            assert a.logprob_sum == pytest.approx(float(lp), abs=1e-12)


# ---- defaults, options, resume ----------------------------------------------------------------


@pytest.mark.quick
def test_defaults_follow_the_paper_and_the_released_code():
    cfg = DynamicConfig()
    assert (cfg.se_form, cfg.cp_tokens, cfg.labels, cfg.kl_zeros) == ("sum", "generated", "rouge", "inf")
    cfg.validate()
    from ctxprior.errors import UserError

    for bad in (dict(se_form="mean"), dict(cp_tokens="all"), dict(labels="nli"), dict(kl_zeros="nan")):
        with pytest.raises(UserError, match=r"^--[a-z-]+ [a-z]+: use "):
            DynamicConfig(**bad).validate()


@pytest.mark.quick
def test_cli_options_and_their_defaults(run_cli):
    out = run_cli("score-dynamic", "--help").output
    for opt in (
        "--se-form [sum|authors]",
        "--cp-tokens [generated|answer]",
        "--labels [rouge|alias]",
        "--kl-zeros [inf|drop]",
    ):
        assert opt in out
    res = run_cli("score-dynamic", "--labels", "nli")
    assert res.exit_code == 2
    from ctxprior.commands.dynamicqa import score_dynamic_cmd

    defaults = {p.name: p.default for p in score_dynamic_cmd.params}
    cfg = DynamicConfig()
    for name in ("se_form", "cp_tokens", "labels", "kl_zeros"):
        assert defaults[name] == getattr(cfg, name), name  # the CLI's defaults are the API's


class _RunRow:
    def __init__(self, cfg: dict):
        self.cfg = cfg

    def query(self, sql, params):
        return [("dynamic", json.dumps(self.cfg), "running")]


def test_resuming_a_run_from_before_the_options_keeps_its_rules():
    old = run._stored_config(_RunRow({"dataset": "dynamicqa", "samples": 3}), 1)
    assert (old.se_form, old.cp_tokens, old.labels, old.kl_zeros) == ("sum", "answer", "alias", "inf")
    new = run._stored_config(_RunRow({"samples": 3, "cp_tokens": "generated", "labels": "rouge"}), 1)
    assert (new.cp_tokens, new.labels) == ("generated", "rouge")


# ---- a run records its rules, and its stored SE follows --se-form ------------------------------


@pytest.mark.parametrize(
    "opts", [{}, dict(se_form="authors", cp_tokens="answer", labels="alias", kl_zeros="drop")]
)
def test_run_records_the_rules_and_se_follows_the_form(opts, tmp_path):
    from dynamicqa_helpers import subset
    from fixtures.make_dynamicqa import make_dynamicqa
    from scoring_helpers import tiny_model
    from transformers import AutoTokenizer

    from ctxprior.dynamicqa.ingest import ingest_dynamicqa
    from ctxprior.storage import open_store

    tok = AutoTokenizer.from_pretrained(sem.resolve_encoder("minilm"))
    tok.eos_token = "[SEP]"
    lm = tiny_model(tok, seed=0, hidden=32)
    d = subset(make_dynamicqa(tmp_path / "full", n=12, seed=0).folder, tmp_path / "dq", 2)
    with open_store(str(tmp_path / "wh.duckdb")) as store:
        ingest_dynamicqa(store, d)
        cfg = DynamicConfig(
            limit=1, samples=3, max_new_tokens=4, threshold=0.89, chat_template="none", **opts
        )
        rid = run.run_facts(
            store, cfg, lm=lm, equivalence=sem.EmbeddingEquivalence("minilm", 0.89), progress=False
        )
        stored = json.loads(store.scalar("SELECT config_json FROM run WHERE run_id = ?", [rid]))
        want = {**dict(se_form="sum", cp_tokens="generated", labels="rouge", kl_zeros="inf"), **opts}
        assert {k: stored[k] for k in want} == want
        rows = store.query(
            """SELECT s.semantic_entropy_mc, list(g.logprob_sum ORDER BY g.sample_index),
                                  list(g.n_tokens ORDER BY g.sample_index), list(g.cluster ORDER BY g.sample_index)
                           FROM dynamicqa_score s JOIN dynamicqa_generation g USING (run_id, fact_id, condition)
                           WHERE s.run_id = ? AND g.sample_index >= 0 GROUP BY ALL""",
            [rid],
        )
    assert len(rows) == 9
    other = "authors" if want["se_form"] == "sum" else "sum"
    n_differ = 0
    for se_mc, lps, nts, cl in rows:
        assert se_mc == pytest.approx(
            sem.semantic_entropy_mc(sem.sample_logliks(lps, nts, want["se_form"]), cl), abs=1e-9
        )
        n_differ += abs(se_mc - sem.semantic_entropy_mc(sem.sample_logliks(lps, nts, other), cl)) > 1e-6
    assert n_differ > 0  # answers longer than one token: the two forms differ
