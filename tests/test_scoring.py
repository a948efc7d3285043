"""Scoring engine, estimators, units, runs and resume with a tiny random model (fast)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from ctxprior.errors import UserError
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import answer_set, first_token
from ctxprior.scoring.models import load_model
from ctxprior.scoring.options import ScoreRequest
from ctxprior.scoring.outcomes import label
from ctxprior.scoring.runs.plan import plan_units
from ctxprior.scoring.runs.score import score_sample
from ctxprior.scoring.units import ScoreConfig
from ctxprior.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from naive_scoring import naive_first_token
from scoring_helpers import (  # noqa: F401 (tiny_folder: a fixture)
    CONTEXTS,
    QUERIES,
    _demo,
    _rows,
    bpe_tokenizer,
    interrupted_run,
    prefix_plan,
    tiny,
    tiny_folder,
    tiny_model,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------- engine


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_fast_matches_naive_and_batching_does_not_matter(arch):
    lm = tiny(arch)
    naive = naive_first_token(lm.model, lm.tokenizer, CONTEXTS, QUERIES, batch_size=32)
    variants = [
        Engine(lm, batch_size=32),
        Engine(lm, batch_size=1),
        Engine(lm, batch_size=3, share_prefix=False),
    ]
    for eng in variants:
        res = first_token(eng, CONTEXTS, QUERIES, prior_topk=3)
        for r, n in zip(res, naive):
            np.testing.assert_allclose(r.persuasion, n["persuasion"], atol=1e-6)
            assert r.susceptibility == pytest.approx(n["susceptibility"], abs=1e-6)
            assert r.mixture_entropy == pytest.approx(n["mixture_entropy"], abs=1e-6)
            assert r.prior_entropy == pytest.approx(n["prior_entropy"], abs=1e-6)
            assert r.prior_kl == pytest.approx(n["prior_kl"], abs=1e-6)
            # the duplicated context gets identical scores
            assert r.persuasion[0] == pytest.approx(r.persuasion[3], abs=1e-12)
            assert len(r.prior_topk) == 3 and r.prior_topk[0][2] >= r.prior_topk[1][2]


def test_prefix_sharing_computes_fewer_tokens_and_dedupes():
    lm = tiny()
    shared, plain = Engine(lm, batch_size=8), Engine(lm, batch_size=8, share_prefix=False)
    first_token(shared, CONTEXTS, QUERIES)
    first_token(plain, CONTEXTS, QUERIES)
    assert shared.tokens_computed < plain.tokens_computed
    # plain still dedupes the duplicated context's prompts: 4 unique contexts x 3 queries + 3 priors
    seqs = plain.encode([c + q for q in QUERIES for c in CONTEXTS] + QUERIES)
    assert plain.tokens_computed == sum(len(s) for s in dict.fromkeys(seqs))


def test_prefix_plan_uses_whole_prompt_tokens():
    """The shared prefix is a common prefix of the whole prompts' token ids, never the context's
    own tokenization; a lone prompt or one with no common prefix is computed in full."""
    lm = tiny()
    eng = Engine(lm)
    seqs = eng.encode(["The capital of Peru is Lima" + q for q in QUERIES])
    plan = prefix_plan(eng, seqs, [[0, 1, 2]])
    for (pre, suf), s in zip(plan, seqs):
        assert pre + suf == s and len(suf) >= 1
    # the common prefix runs past the context into the shared query words
    assert len(plan[0][0]) > len(eng.encode(["The capital of Peru is"])[0])
    assert prefix_plan(eng, seqs[:1], [[0]]) == [((), seqs[0])]


@pytest.mark.quick
def test_answer_set_estimator():
    lm = tiny()
    cands = [["Paris", "Rome", "Madrid", "Lima"]] * len(QUERIES)
    a = answer_set(Engine(lm, batch_size=16), CONTEXTS, QUERIES, cands, prior_topk=2)
    b = answer_set(Engine(lm, batch_size=1), CONTEXTS, QUERIES, cands, prior_topk=2)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.persuasion, y.persuasion, atol=1e-6)
        assert 0 <= x.susceptibility <= min(x.mixture_entropy, math.log(4)) + 1e-9
        assert x.prior_topk[0][1] in cands[0]
    # brute force for one prompt: sum of token log-probs of " Paris" after the prompt
    tok = lm.tokenizer
    prompt = CONTEXTS[0] + QUERIES[0]
    p_ids = tok(prompt)["input_ids"]
    logps = []
    for cand in cands[0]:
        ids = tok(prompt + " " + cand)["input_ids"]
        assert ids[: len(p_ids)] == p_ids
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].double(), -1)
        logps.append(sum(float(lp[i - 1, ids[i]]) for i in range(len(p_ids), len(ids))))
    logps = np.array(logps)
    probs = np.exp(logps - np.logaddexp.reduce(logps))
    ent = -(probs * np.log(probs)).sum()
    assert a[0].entropy[0] == pytest.approx(ent, abs=1e-6)


def test_greedy_generation_batched_equals_single():
    lm = tiny()
    eng1, eng8 = Engine(lm, batch_size=1), Engine(lm, batch_size=8)
    seqs = eng1.encode([c + q for c in CONTEXTS for q in QUERIES])
    assert eng1.greedy(seqs, 3) == eng8.greedy(seqs, 3)


@pytest.mark.quick
def test_memorization_labels():
    def label_generation(text, query_type, true, ctx):
        return label(text, "prefix", query_type, true, ctx)

    assert label_generation(" Paris, of course", "open", "Paris", "Rome") == "ORIGINAL"
    assert label_generation(" rome\nQ:", "open", "Paris", "Rome") == "CONTEXT"
    assert label_generation(" Berlin", "open", "Paris", "Rome") == "OTHER"
    assert label_generation(" Paris", "open", "Paris", "Paris") == "ORIGINAL"
    assert label_generation(" Yes.", "closed", "Paris", "Rome") == "ORIGINAL"
    assert label_generation(" No", "closed", "Paris", "Rome") == "CONTEXT"
    assert label_generation(" Nobody", "closed", "Paris", "Rome") == "OTHER"


# ---------------------------------------------------------------- warehouse runs


def test_score_sample_rows_views_and_bookkeeping(db_path):
    sid = _demo(db_path, entities=4, contexts=12)
    lm = tiny()
    with open_store(db_path) as store:
        s = score_sample(
            store,
            ScoreRequest.of(
                sample=sid, model="tiny", store_topk=2, memorization=True, max_new_tokens=3, shard_size=3
            ),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "done" and s.units_failed == 0
        n_facts = store.scalar("SELECT count(*) FROM sample_fact WHERE sample_id = ?", [sid])
        n_ctx = store.scalar("SELECT count(*) FROM context WHERE sample_id = ?", [sid])
        n_qf = store.scalar(
            "SELECT count(*) FROM query_form qf JOIN relation r USING (relation_id) "
            "WHERE r.short_name = 'capital' AND qf.relation_id IN "
            "(SELECT relation_id FROM context WHERE sample_id = ?)",
            [sid],
        )
        assert s.units_total == n_qf * math.ceil(n_facts / 3)
        assert (
            store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [s.run_id])
            == n_qf * n_facts * n_ctx
        )
        assert (
            store.scalar("SELECT count(*) FROM susceptibility WHERE run_id = ?", [s.run_id]) == n_qf * n_facts
        )
        assert (
            store.scalar("SELECT count(*) FROM prompt_topk WHERE run_id = ?", [s.run_id])
            == 2 * n_qf * n_facts * n_ctx
        )
        assert (
            store.scalar("SELECT count(*) FROM generation WHERE run_id = ?", [s.run_id])
            == n_qf * n_facts * n_ctx
        )
        assert (
            store.scalar("SELECT count(*) FROM prior_topk WHERE run_id = ?", [s.run_id])
            == 10 * n_qf * n_facts
        )
        # chi = mean psi, per (query form, fact)
        diff = store.scalar(
            """SELECT max(abs(s.susceptibility - p.m)) FROM susceptibility s JOIN
                            (SELECT query_form_id, fact_id, avg(persuasion) m FROM persuasion WHERE run_id = ?
                             GROUP BY ALL) p USING (query_form_id, fact_id) WHERE s.run_id = ?""",
            [s.run_id, s.run_id],
        )
        assert diff < 1e-9
        run = store.query(
            "SELECT status, model, estimator, units_total, units_done, prompts_done, ended_at, "
            "config_json, host, pid, ctxprior_version FROM run WHERE run_id = ?",
            [s.run_id],
        )[0]
        assert run[0] == "done" and run[1] == "tiny" and run[2] == "first-token"
        assert run[3] == run[4] == s.units_total and run[5] == n_qf * n_facts * (n_ctx + 1)
        assert run[6] is not None and json.loads(run[7])["identity"]["score"]["shard_size"] == 3
        # views
        v = store.df("SELECT * FROM v_persuasion WHERE run_id = ?", [s.run_id])
        assert len(v) == n_qf * n_facts * n_ctx
        assert {
            "model",
            "dataset",
            "relation",
            "query_form",
            "query_type",
            "entity",
            "entity_kind",
            "context",
            "context_type",
            "is_relevant",
            "persuasion",
        } <= set(v.columns)
        assert v["is_relevant"].sum() > 0 and (~v["is_relevant"]).sum() > 0
        vs = store.df("SELECT * FROM v_susceptibility WHERE run_id = ?", [s.run_id])
        assert len(vs) == n_qf * n_facts and set(vs["entity_kind"]) == {"real", "fake"}
        k = store.df("SELECT * FROM v_kappa WHERE run_id = ?", [s.run_id])
        assert len(k) == n_qf * n_ctx and (k["n_facts"] == n_facts).all()
        g = store.df("SELECT * FROM v_gamma WHERE run_id = ?", [s.run_id])
        assert len(g) == n_qf
        gamma_direct = store.scalar(
            "SELECT avg(persuasion) FROM persuasion WHERE run_id = ? AND query_form_id = ?",
            [s.run_id, int(g["query_form_id"][0])],
        )
        assert float(g["gamma"][0]) == pytest.approx(gamma_direct, abs=1e-12)
        m = store.df("SELECT * FROM v_memorization WHERE run_id = ?", [s.run_id])
        assert len(m) == n_qf * n_facts
        # generation labels are aligned to their own context (no sorted-list misalignment): each
        # stored label is its own text's under the default rule, and the outcome is that label
        g = store.df(
            """SELECT g.text, g.label, q.query_type, fa.name AS answer, ca.name AS context_answer,
                      r.outcome, r.outcome_source
               FROM generation g JOIN context c USING (context_id)
               JOIN fact f USING (fact_id) JOIN query_form q USING (query_form_id)
               LEFT JOIN answer ca ON ca.answer_id = c.answer_id
               LEFT JOIN answer fa ON fa.answer_id = f.answer_id
               LEFT JOIN reliance r ON r.run_id = g.run_id AND r.query_form_id = g.query_form_id
                    AND r.fact_id = g.fact_id AND r.context_id = g.context_id
               WHERE g.run_id = ?""",
            [s.run_id],
        )
        cols = ["text", "query_type", "answer", "context_answer"]
        want = [label(t, "recall", qt, a, ca) for t, qt, a, ca in g[cols].itertuples(False)]
        assert g.label.tolist() == [w or "UNDECIDED" for w in want]
        assert g.outcome.tolist() == want and set(g.outcome_source) == {"recall"}


def test_interrupt_then_rerun_gives_the_uninterrupted_rows(tmp_path):
    lm = tiny()
    cfg = ScoreRequest.of(query_types=("open",), max_new_tokens=4)  # generations resume too, 4 tokens each
    db_a, db_b = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    sid_a, sid_b = _demo(db_a, 2, 6), _demo(db_b, 2, 6)
    with open_store(db_a) as store:
        full = score_sample(
            store,
            cfg.replace(sample=sid_a, model="tiny", shard_size=1),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        ref = _rows(store, full.run_id)
    with open_store(db_b) as store:
        interrupted_run(store, cfg.replace(sample=sid_b, model="tiny", shard_size=1), lm, after=3)
        run = store.query("SELECT run_id, status, units_done FROM run")[0]
        assert run[1] == "cancelled" and run[2] == 3
        # rerunning the same command continues the unfinished run
        msgs = []
        s2 = score_sample(
            store,
            cfg.replace(sample=sid_b, model="tiny", shard_size=1),
            lm=lm,
            progress=False,
            log=msgs.append,
        )
        assert s2.run_id == run[0] and s2.resumed and s2.units_skipped == 3
        assert any("resuming" in m for m in msgs)
        got = _rows(store, s2.run_id)
        assert store.scalar("SELECT status FROM run WHERE run_id = ?", [s2.run_id]) == "done"
        # --resume of a finished run does nothing
        s3 = score_sample(store, ScoreRequest.of(resume=s2.run_id), lm=lm, progress=False, log=lambda m: None)
        assert s3.status == "done" and _rows(store, s2.run_id) == got
    for a, b in zip(ref, got):
        assert len(a) == len(b)
        for ra, rb in zip(a, b):
            assert ra[:3] == rb[:3]
            np.testing.assert_allclose(ra[3:], rb[3:], atol=1e-9)


def _drop_from_identity(store, run_id: int, field: str) -> None:
    """Make run ``run_id`` one that predates option ``field``: its stored identity lacks it."""
    cfg = json.loads(store.scalar("SELECT config_json FROM run WHERE run_id = ?", [run_id]))
    del cfg["identity"]["score"][field]
    store.execute("UPDATE run SET config_json = ? WHERE run_id = ?", [json.dumps(cfg), run_id])


def test_a_run_that_predates_an_option_resumes_with_its_default(db_path):
    """A stored identity without a ScoreConfig field is compared with that field's current default
    filled in: the same options resume the run; a non-default value starts a new run."""
    sid, lm, quiet = _demo(db_path, 2, 6), tiny(), {"progress": False, "log": lambda m: None}
    cfg = ScoreRequest.of(query_types=("open",), shard_size=1, max_new_tokens=2)
    with open_store(db_path) as store:
        interrupted_run(store, cfg.replace(sample=sid, model="tiny"), lm, after=1)
        old = store.scalar("SELECT run_id FROM run")
        _drop_from_identity(store, old, "prior_topk")  # a run from before --prior-topk
        assert cfg.prior_topk == ScoreConfig().prior_topk == 10
        other = score_sample(store, cfg.replace(sample=sid, model="tiny", prior_topk=3), lm=lm, **quiet)
        assert other.run_id != old and not other.resumed  # not what the old run computed
        again = score_sample(store, cfg.replace(sample=sid, model="tiny"), lm=lm, **quiet)
        assert again.run_id == old and again.resumed and again.units_skipped == 1
        assert store.scalar("SELECT status FROM run WHERE run_id = ?", [old]) == "done"


def test_nan_scores_fail_the_unit_and_write_no_rows(db_path):
    sid = _demo(db_path, 2, 6)
    lm = tiny_model(bpe_tokenizer(), seed=1)
    with torch.no_grad():
        lm.model.lm_head.weight[5, 0] = float("nan")
    with open_store(db_path) as store:
        s = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny-nan", query_types=("open",), shard_size=2),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "failed" and s.units_failed == s.units_total
        assert store.scalar("SELECT count(*) FROM persuasion") == 0
        assert store.scalar("SELECT count(*) FROM susceptibility") == 0
        errs = store.query("SELECT DISTINCT status, error FROM run_unit")
        assert errs and all(st == "failed" and "NaN" in e for st, e in errs)
        assert store.scalar("SELECT status FROM run") == "failed"


@pytest.mark.quick
def test_plan_is_stable_and_validation(db_path):
    sid = _demo(db_path, 2, 6)
    with open_store(db_path) as store:
        cfg = ScoreConfig(shard_size=3)
        a, b = plan_units(store, sid, cfg), plan_units(store, sid, cfg)
        assert a == b and [u.unit_id for u in a] == list(range(len(a)))
        with pytest.raises(UserError, match="no such sample"):
            score_sample(store, ScoreRequest.of(sample=99, model="tiny"), lm=tiny(), progress=False)
        with pytest.raises(UserError, match="query-types"):
            score_sample(
                store,
                ScoreRequest.of(sample=sid, model="tiny", query_types=("opn",)),
                lm=tiny(),
                progress=False,
            )
        with pytest.raises(UserError, match="relation"):
            score_sample(
                store,
                ScoreRequest.of(sample=sid, model="tiny", relations=("nope",)),
                lm=tiny(),
                progress=False,
            )
        assert store.scalar("SELECT count(*) FROM run") == 0


def test_answer_set_run(db_path):
    sid = _demo(db_path, entities=2, contexts=6)
    with open_store(db_path) as store:
        s = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", estimator="answer-set", shard_size=2),
            lm=tiny(),
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "done"
        assert store.scalar("SELECT estimator FROM run") == "answer-set"
        # closed forms include Yes/No among the candidates
        toks = {
            r[0]
            for r in store.query("""SELECT token FROM prior_topk JOIN query_form USING (query_form_id)
                                          WHERE query_type = 'closed'""")
        }
        assert {"Yes", "No"} & toks


def test_reliance_matches_a_naive_reference():
    """first_token's reliance measures (same pass, same distributions) equal metrics.reliance_np on
    one-prompt-at-a-time log-probs, each answer read as its first token after the prompt."""
    from naive_scoring import _last_logprobs

    from ctxprior.scoring.metrics import RELIANCE_KEYS, reliance_np

    lm = tiny()
    ctx_answers = ["Rome", "Paris", None, "Rome", "Lima"]
    gold = ["Paris", "Madrid", None]
    res = first_token(Engine(lm, batch_size=4), CONTEXTS, QUERIES, answers=([ctx_answers] * 3, gold))

    def first(a):
        return lm.tokenizer(" " + a, add_special_tokens=False)["input_ids"][0] if a else -1

    ids = np.array([first(a) for a in ctx_answers])
    for q, g, r in zip(QUERIES, gold, res):
        lp = _last_logprobs(lm.model, lm.tokenizer, [c + q for c in CONTEXTS], 32)
        prior = _last_logprobs(lm.model, lm.tokenizer, [q], 1)[0]
        ref = reliance_np(lp, prior, ids, first(g))
        for k in RELIANCE_KEYS:
            np.testing.assert_allclose(np.asarray(r.reliance[k], np.float64), ref[k], atol=1e-6, err_msg=k)


@pytest.mark.parametrize("estimator", ["first-token", "answer-set"])
def test_reliance_rows_and_views(db_path, estimator):
    sid = _demo(db_path, entities=2, contexts=6)
    with open_store(db_path) as store:
        config = ScoreRequest.of(estimator=estimator)
        s = score_sample(
            store,
            config.replace(sample=sid, model="tiny", shard_size=2),
            lm=tiny(),
            progress=False,
            log=print,
        )
        run = [s.run_id]
        n = store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", run)
        assert store.scalar("SELECT count(*) FROM reliance WHERE run_id = ?", run) == n > 0
        assert store.scalar("SELECT count(*) FROM v_reliance WHERE run_id = ?", run) == n
        # the mean shift over an item's contexts = chi + KL(mixture || no-context prompt), over the
        # space chi is computed over (answer-set: the candidates' shift_answer_set; shift is the vocabulary's)
        shift = "shift_answer_set" if estimator == "answer-set" else "shift"
        diff = store.scalar(
            f"""SELECT max(abs(s.susceptibility + s.prior_kl - r.m)) FROM susceptibility s JOIN
               (SELECT query_form_id, fact_id, avg({shift}) m FROM reliance WHERE run_id = ? GROUP BY ALL) r
               USING (query_form_id, fact_id) WHERE s.run_id = ?""",
            run * 2,
        )
        assert diff < 1e-9
        bad = store.scalar(
            """SELECT count(*) FROM v_reliance WHERE run_id = ? AND NOT (jsd BETWEEN 0 AND ln(2)
               AND shift >= 0 AND scaled_difference BETWEEN -1 AND 1 AND answer_context IS NOT NULL
               AND answer_gold IS NOT NULL AND keeps_prior = (answer_top = answer_prior)
               AND choice = CASE WHEN answer_top = answer_gold THEN 'ORIGINAL'
                                  WHEN answer_top = answer_context THEN 'CONTEXT' ELSE 'OTHER' END)""",
            run,
        )
        assert bad == 0
        if estimator == "answer-set":  # closed forms: candidates Yes, No, ...; gold Yes, a context Yes or No
            got = store.query(
                "SELECT DISTINCT answer_gold, answer_context IN (0, 1) FROM v_reliance "
                "WHERE run_id = ? AND query_type = 'closed'",
                run,
            )
            assert got == [(0, True)]
        rates = store.df("SELECT * FROM v_reliance_rates WHERE run_id = ?", run)
        assert set(rates["scope"]) == {"relation", "all relations"}
        c = rates[rates["n_conflict"] > 0]
        np.testing.assert_allclose(c["conr"] + c["memr"] + c["other_rate"], 1.0)
        assert (rates.groupby("scope")["n"].sum() == n).all()


# ---------------------------------------------------------------- CLI and model loading


def test_load_local_folder_records_hash(tiny_folder):
    lm = load_model(tiny_folder, device="cpu")
    assert lm.revision.startswith("sha256:") and lm.dtype == "float32" and lm.device == "cpu"
    assert lm.quantization is None


def test_quantization_without_cuda_is_a_user_error():
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(UserError, match="needs a CUDA GPU"):
        load_model("smollm2-135m", quantization="8bit")


def test_cli_score_and_errors(run_cli, db_path, tiny_folder):
    sid = _demo(db_path, entities=2, contexts=6)
    r = run_cli("score", "--sample", sid, "--model", tiny_folder, "--query-types", "open", "--quiet")
    assert r.exit_code == 0, r.output
    run_id = int(r.stdout.strip().splitlines()[-1])
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT status FROM run WHERE run_id = ?", [run_id]) == "done"
        assert store.scalar("SELECT model_revision FROM run WHERE run_id = ?", [run_id]).startswith("sha256:")
    assert run_cli("score", "--sample", 42, "--model", tiny_folder).exit_code == 2
    r = run_cli("score", "--sample", sid, "--model", tiny_folder, "--load-in-8bit")
    if not torch.cuda.is_available():
        assert r.exit_code == 2 and "CUDA" in r.output
    r = run_cli("score", "--sample", sid, "--model", "/nonexistent/model.gguf")
    assert r.exit_code == 2 and "no such GGUF file" in r.output
    assert run_cli("score", "--model", tiny_folder).exit_code == 2
    assert run_cli("score", "--sample", sid, "--batch-size", "zero").exit_code == 2


def test_model_folder_without_tokenizer_is_one_line_and_writes_nothing(run_cli, db_path, tmp_path):
    sid = _demo(db_path, entities=2, contexts=6)
    folder = tmp_path / "no-tokenizer"
    tiny().model.save_pretrained(folder)
    before = Path(db_path).read_bytes()
    r = run_cli("score", "--sample", sid, "--model", str(folder))
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [
        f"Error: --model {folder}: folder has no tokenizer (none of tokenizer.json, tokenizer_config.json, "
        "vocab.json, vocab.txt, tokenizer.model); save it beside the weights with "
        "tokenizer.save_pretrained(FOLDER)"
    ]
    assert Path(db_path).read_bytes() == before


def test_cli_quick_json(run_cli, tmp_path, tiny_folder):
    ents = tmp_path / "e.txt"
    ents.write_text("France\nZorblax\n")
    ctxs = tmp_path / "c.txt"
    ctxs.write_text("The capital of France is Rome.\\n\nThe capital of Spain is Paris.\\n\n")
    r = run_cli(
        "quick",
        "--model",
        tiny_folder,
        "--query",
        "Q: What is the capital of {entity}?\\nA:",
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
        "--json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["model"] == tiny_folder and [e["entity"] for e in out["entities"]] == ["France", "Zorblax"]
    for e in out["entities"]:
        assert len(e["persuasion"]) == 2
        assert e["susceptibility"] == pytest.approx(np.mean(e["persuasion"]), abs=1e-9)
    r = run_cli(
        "quick",
        "--model",
        tiny_folder,
        "--query",
        "no placeholder",
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
    )
    assert r.exit_code == 2


def test_engine_docstring_describes_the_padding_it_does():
    """The module docstring once said batches need no padding; the engine computes the prefixes
    right-padded (no fully masked attention row), keeps them left-padded in the key/value block and
    right-pads the suffixes (exactly, with masked slots). Keep the description true."""
    from ctxprior.scoring import engine

    doc = engine.__doc__
    assert "need no padding at all" not in doc
    assert "left-padded" in doc and "right-padded" in doc and "masked" in doc
    assert "one gather" in doc.replace("ONE", "one")
    assert "gather of the block" in engine.Engine._forward_rows.__doc__
