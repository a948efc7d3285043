"""``--prompt-format raw|chat``: prompts in the user turn of the model's chat template.

Fast tests use a tiny random model and a small byte-level BPE trained in-test, given a chat template
string like SmolLM2's (a default system turn when the user gives none); the slow ones use
SmolLM2-135M-Instruct's real template."""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ctxprior.errors import UserError
from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import answer_set, first_token
from ctxprior.scoring.models import LoadedModel
from ctxprior.scoring.options import ScoreRequest
from ctxprior.scoring.prompts import PLACEHOLDER, PromptFormat, prompt_format, render_chat
from ctxprior.scoring.runs.score import score_sample
from ctxprior.scoring.units import ScoreConfig
from ctxprior.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from chat_helpers import TEMPLATE, TRIM, _tokenizer
from naive_scoring import _last_logprobs, naive_first_token
from scoring_helpers import _demo as scoring_demo
from scoring_helpers import interrupted_run, prefix_plan, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CONTEXTS = [
    "The capital of France is Rome.\n",
    "The capital of Spain is Paris.\n",
    "The capital of Italy is not Madrid.\n",
]
QUERIES = [f"Q: What is the capital of {e}?\nA:" for e in ["France", "Spain", "Zorblax"]]


@functools.cache
def tiny(template: str | None = TEMPLATE) -> LoadedModel:
    return tiny_model(_tokenizer(template), seed=0, arch="llama")


# ---------------------------------------------------------------- rendering


def test_chat_format_renders_context_and_query_as_the_user_turn():
    tok = _tokenizer()
    raw = prompt_format(tok, "raw")
    assert raw(CONTEXTS[0], QUERIES[0]) == CONTEXTS[0] + QUERIES[0] and raw.prior(QUERIES[0]) == QUERIES[0]
    assert raw.template is None
    chat = prompt_format(tok, "chat")
    for c in CONTEXTS:
        for q in QUERIES:
            assert chat(c, q) == render_chat(tok, c + q)
    assert chat.prior(QUERIES[0]) == render_chat(tok, QUERIES[0])
    # no system message given: the template's default system turn stays, before the user turn
    assert chat.template == (
        "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\n"
        + PLACEHOLDER
        + "<|im_end|>\n<|im_start|>assistant\n"
    )
    assert chat.template_sha256 == hashlib.sha256(TEMPLATE.encode()).hexdigest() and chat.slow is None
    with pytest.raises(UserError, match="use raw or chat"):
        prompt_format(tok, "jinja")


def test_template_that_edits_the_content_is_rendered_prompt_by_prompt():
    tok = _tokenizer(TRIM)
    chat = prompt_format(tok, "chat")
    assert chat.slow is not None  # `| trim` drops the context's trailing newline of the prior prompt
    assert chat(" ", QUERIES[0] + "\n") == render_chat(tok, QUERIES[0])
    assert chat(CONTEXTS[0], QUERIES[0]) == render_chat(tok, CONTEXTS[0] + QUERIES[0])


def test_a_bos_the_tokenizer_adds_is_not_doubled():
    tok = _tokenizer("{{ bos_token }}" + TEMPLATE, bos=True)
    chat = prompt_format(tok, "chat")
    assert not chat.template.startswith("<bos>")
    ids = tok(chat(CONTEXTS[0], QUERIES[0]), add_special_tokens=True)["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[1] != tok.bos_token_id
    # a tokenizer that adds no BOS keeps the template's (SmolLM2's bos_token is <|im_start|>)
    plain = _tokenizer("{{ bos_token }}" + TEMPLATE)
    assert prompt_format(plain, "chat").template.startswith("<bos>")


def test_no_chat_template_is_a_user_error():
    with pytest.raises(UserError, match="has no chat template"):
        prompt_format(_tokenizer(None), "chat")
    assert prompt_format(_tokenizer(None), "raw") == PromptFormat()
    with pytest.raises(UserError, match="fails on a user turn"):
        prompt_format(_tokenizer("{{ raise_exception('system turn first') }}"), "chat")
    with pytest.raises(UserError, match="once"):
        prompt_format(_tokenizer("{% if add_generation_prompt %}assistant:{% endif %}"), "chat")


# ---------------------------------------------------------------- scores


def test_chat_scores_equal_one_prompt_at_a_time():
    lm = tiny()
    chat = prompt_format(lm.tokenizer, "chat")
    naive = naive_first_token(
        lm.model,
        lm.tokenizer,
        [chat.head + c for c in CONTEXTS],
        [q + chat.tail for q in QUERIES],
        batch_size=1,
        with_prior=False,
    )
    for eng in (Engine(lm, batch_size=32), Engine(lm, batch_size=2, share_prefix=False)):
        res = first_token(eng, CONTEXTS, QUERIES, prior_topk=3, prompt=chat)
        for r, n, q in zip(res, naive, QUERIES):
            np.testing.assert_allclose(r.persuasion, n["persuasion"], atol=1e-6)
            assert r.susceptibility == pytest.approx(n["susceptibility"], abs=1e-6)
            prior = _last_logprobs(lm.model, lm.tokenizer, [chat.prior(q)], 1)[0]
            assert r.prior_entropy == pytest.approx(-(np.exp(prior) * prior).sum(), abs=1e-5)
    raw = first_token(Engine(lm), CONTEXTS, QUERIES)
    assert not np.allclose(raw[0].persuasion, res[0].persuasion)


def test_chat_prompts_still_share_the_header_and_context_prefix():
    lm = tiny()
    chat = prompt_format(lm.tokenizer, "chat")
    shared, plain = Engine(lm, batch_size=8), Engine(lm, batch_size=8, share_prefix=False)
    first_token(shared, CONTEXTS, QUERIES, prompt=chat)
    first_token(plain, CONTEXTS, QUERIES, prompt=chat)
    assert shared.tokens_computed < plain.tokens_computed
    # every context's group shares at least the system turn, the user header and the context
    head_ctx = shared.encode([chat.head + c for c in CONTEXTS])
    for c, hc in zip(CONTEXTS, head_ctx):
        seqs = shared.encode([chat(c, q) for q in QUERIES])
        plan = prefix_plan(shared, seqs, [list(range(len(QUERIES)))])
        assert len(plan[0][0]) >= len(hc) - 1
    # the prior prompts share the system turn and user header
    seqs = shared.encode([chat.prior(q) for q in QUERIES])
    assert len(prefix_plan(shared, seqs, [[0, 1, 2]])[0][0]) >= len(shared.encode([chat.head])[0]) - 1
    # saved tokens: at least (queries - 1) x (header + context) per context
    saved = plain.tokens_computed - shared.tokens_computed
    assert saved >= sum((len(QUERIES) - 1) * (len(hc) - 1) for hc in head_ctx)


def test_answer_set_with_chat_format():
    lm = tiny()
    chat = prompt_format(lm.tokenizer, "chat")
    eng = Engine(lm)
    cands = [["Paris", "Rome"]] * len(QUERIES)
    res = answer_set(eng, CONTEXTS, QUERIES, cands, prompt=chat)
    ref = answer_set(
        Engine(lm, batch_size=1, share_prefix=False),
        [chat.head + c for c in CONTEXTS],
        [q + chat.tail for q in QUERIES],
        cands,
        with_prior=False,
    )
    for r, n in zip(res, ref):
        np.testing.assert_allclose(r.persuasion, n.persuasion, atol=1e-6)


# ---------------------------------------------------------------- runs


def _demo(db_path: str) -> int:
    return scoring_demo(db_path, entities=2, contexts=6)


def test_chat_run_stores_the_format_and_renders_generations_the_same_way(db_path, monkeypatch):
    sid = _demo(db_path)
    lm = tiny()
    chat = prompt_format(lm.tokenizer, "chat")
    seen = []
    greedy, one_pass = Engine.greedy, Engine.last_logprobs_and_greedy

    def spy(self, seqs, *a, **k):
        seen.extend(self.lm.tokenizer.decode(s) for s in seqs)
        return greedy(self, seqs, *a, **k)

    def spy_one_pass(self, seqs, groups, n_generate, *a, **k):  # generations from the scoring pass
        seen.extend(self.lm.tokenizer.decode(s) for s in seqs[:n_generate])
        return one_pass(self, seqs, groups, n_generate, *a, **k)

    monkeypatch.setattr(Engine, "greedy", spy)
    monkeypatch.setattr(Engine, "last_logprobs_and_greedy", spy_one_pass)
    cfg = ScoreRequest.of(query_types=("open",), prompt_format="chat", memorization=True, max_new_tokens=2)
    with open_store(db_path) as store:
        s = score_sample(
            store,
            cfg.replace(sample=sid, model="tiny", shard_size=1),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        chat_seen = list(seen)  # the chat run's generations (the raw run below may generate too)
        r = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", query_types=("open",), shard_size=1),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == r.status == "done" and s.run_id != r.run_id
        ident = json.loads(store.scalar("SELECT config_json FROM run WHERE run_id = ?", [s.run_id]))[
            "identity"
        ]
        assert (
            ident["score"]["prompt_format"] == "chat" and ident["score"]["prompt_template"] == chat.template
        )
        assert ident["score"]["prompt_template_sha256"] == chat.template_sha256
        raw = json.loads(store.scalar("SELECT config_json FROM run WHERE run_id = ?", [r.run_id]))["identity"]
        assert raw["score"]["prompt_format"] == "raw" and raw["score"]["prompt_template"] is None
        n = store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [s.run_id])
        assert n == store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [r.run_id]) > 0
        diff = store.scalar(
            "SELECT max(abs(a.persuasion - b.persuasion)) FROM persuasion a JOIN persuasion b "
            "USING (query_form_id, fact_id, context_id) WHERE a.run_id = ? AND b.run_id = ?",
            [s.run_id, r.run_id],
        )
        assert diff > 1e-6
        assert store.scalar("SELECT count(*) FROM generation WHERE run_id = ?", [s.run_id]) == n
    assert chat_seen and all(t.startswith(chat.head) and t.endswith(chat.tail) for t in chat_seen)


def test_resume_respects_the_prompt_format(db_path):

    sid = _demo(db_path)
    lm = tiny()
    cfg = ScoreRequest.of(query_types=("open",), prompt_format="chat", shard_size=1)
    quiet = {"progress": False, "log": lambda m: None}
    with open_store(db_path) as store:
        interrupted_run(store, cfg.replace(sample=sid, model="tiny"), lm, after=1)
        chat_run = store.scalar("SELECT max(run_id) FROM run")
        # a raw request does not continue the unfinished chat run
        raw = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", query_types=("open",), shard_size=1),
            lm=lm,
            **quiet,
        )
        assert raw.run_id != chat_run and not raw.resumed
        # a tokenizer whose template renders differently cannot continue it
        other = tiny(TEMPLATE.replace("helpful", "terse"))
        before = store.query("SELECT status, units_done FROM run WHERE run_id = ?", [chat_run])
        with pytest.raises(UserError, match="renders differently"):
            score_sample(
                store,
                ScoreRequest.of(model="tiny", resume=chat_run),
                lm=other,
                progress=False,
                log=lambda m: None,
            )
        assert store.query("SELECT status, units_done FROM run WHERE run_id = ?", [chat_run]) == before
        # the same chat request continues it
        again = score_sample(store, cfg.replace(sample=sid, model="tiny"), lm=lm, **quiet)
        assert again.run_id == chat_run and again.resumed and again.units_skipped == 1
        assert again.status == "done"


@pytest.fixture(scope="module")
def plain_folder(tmp_path_factory):
    """A tiny model saved without a chat template."""
    d = tmp_path_factory.mktemp("plain")
    lm = tiny(None)
    lm.model.save_pretrained(d)
    lm.tokenizer.save_pretrained(d)
    return str(d)


def test_cli_chat_without_a_template_is_one_line_and_writes_nothing(run_cli, db_path, plain_folder, tmp_path):
    sid = _demo(db_path)
    before = Path(db_path).read_bytes()
    r = run_cli("score", "--sample", sid, "--model", plain_folder, "--prompt-format", "chat", "--quiet")
    assert r.exit_code == 2 and r.output.strip().splitlines()[-1].startswith("Error: --prompt-format chat")
    assert (
        "no chat template" in r.output
        and len([ln for ln in r.output.splitlines() if ln.startswith("Error")]) == 1
    )
    assert Path(db_path).read_bytes() == before
    ents, ctxs = tmp_path / "e.txt", tmp_path / "c.txt"
    ents.write_text("France\n")
    ctxs.write_text("The capital of France is Rome.\\n\n")
    r = run_cli(
        "quick",
        "--model",
        plain_folder,
        "--query",
        "Q: What is the capital of {entity}?\\nA:",
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
        "--prompt-format",
        "chat",
    )
    assert r.exit_code == 2 and "no chat template" in r.output
    r = run_cli(
        "quick",
        "--model",
        plain_folder,
        "--query",
        "Q: {entity}?",
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
        "--prompt-format",
        "raw",
        "--json",
    )
    assert r.exit_code == 0, r.output


def test_api_quick_with_a_notebook_model_and_chat_format():
    import ctxprior

    lm = tiny()
    df = ctxprior.quick(
        lm.model,
        "Q: What is the capital of {entity}?\nA:",
        ["France"],
        CONTEXTS[:2],
        tokenizer=lm.tokenizer,
        prompt_format="chat",
    )
    chat = prompt_format(lm.tokenizer, "chat")
    ref = first_token(Engine(lm), CONTEXTS[:2], [QUERIES[0]], prompt=chat, with_prior=False)[0]
    np.testing.assert_allclose(df["persuasion"].to_numpy(), ref.persuasion, atol=1e-9)
    with pytest.raises(UserError, match="--prompt-format x: use raw or chat"):
        ctxprior.quick(
            lm.model, "{entity}", ["France"], CONTEXTS[:1], tokenizer=lm.tokenizer, prompt_format="x"
        )


# ---------------------------------------------------------------- SmolLM2's real template


@pytest.fixture(scope="module")
def smol():
    from ctxprior.scoring.models import load_model

    return load_model("smollm2-135m", device="cpu")


@pytest.mark.slow
def test_smollm2_chat_template_and_scores(smol):
    chat = prompt_format(smol.tokenizer, "chat")
    assert chat.slow is None
    assert chat.template == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
        "Hugging Face<|im_end|>\n<|im_start|>user\n" + PLACEHOLDER + "<|im_end|>\n<|im_start|>assistant\n"
    )
    eng = Engine(smol, batch_size=16)
    res = first_token(eng, CONTEXTS, QUERIES, prior_topk=3, prompt=chat)
    naive = naive_first_token(
        smol.model,
        smol.tokenizer,
        [chat.head + c for c in CONTEXTS],
        [q + chat.tail for q in QUERIES],
        with_prior=False,
    )
    for r, n in zip(res, naive):
        np.testing.assert_allclose(r.persuasion, n["persuasion"], atol=1e-4)
    plain = Engine(smol, batch_size=16, share_prefix=False)
    first_token(plain, CONTEXTS, QUERIES, prior_topk=3, prompt=chat)
    # the system turn, user header and context are computed once per context, not once per query
    head_ctx = eng.encode([chat.head + c for c in CONTEXTS])
    assert plain.tokens_computed - eng.tokens_computed >= sum(
        (len(QUERIES) - 1) * (len(h) - 1) for h in head_ctx
    )
    # in the assistant turn, "Paris" is among the top answers of France's no-context prompt
    assert "Paris" in [t for _, t, _ in res[0].prior_topk]


def test_a_driver_without_the_weights_renders_with_the_tokenizer_alone(tmp_path):
    """Ray's driver holds no model (``describe_model``): the chat template comes from the tokenizer
    files alone."""
    from ctxprior.scoring.runs.score import _resolve_prompt_format, _Resolved

    lm = tiny()
    lm.model.save_pretrained(tmp_path)
    lm.tokenizer.save_pretrained(tmp_path)
    described = LoadedModel(
        model=None, tokenizer=None, model_id=str(tmp_path), revision=None, dtype="float32", device="cpu"
    )
    req = _Resolved(1, str(tmp_path), "auto", None, ScoreConfig(prompt_format="chat"))
    _resolve_prompt_format(req, described)
    assert req.config.prompt_template == prompt_format(lm.tokenizer, "chat").template
    raw = _Resolved(1, str(tmp_path), "auto", None, ScoreConfig())
    _resolve_prompt_format(raw, described)
    assert raw.config.prompt_template is None
