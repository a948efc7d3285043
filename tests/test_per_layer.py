"""Per-layer scores (logit lens, ``--per-layer``): the last layer is today's χ exactly, every layer
equals a naive one-prompt-at-a-time logit lens, the tables and the view, the CLI and the API."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scoring_helpers import prompts, tiny, tiny_family

from ctxprior.scoring.engine import Engine, final_norm
from ctxprior.scoring.estimators import first_token
from ctxprior.scoring.metrics import scores_np

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ARCHS = ["llama", "gpt_neox", "gpt2"]


def _lm(arch):
    return tiny("gpt2") if arch == "gpt2" else tiny_family(arch)


@torch.inference_mode()
def naive_lens(lm, texts) -> np.ndarray:
    """[layers + 1, prompts, V]: each prompt alone through the model's own forward; layer l < L is
    the final norm and output head applied to hidden_states[l] at the last position, layer L the
    model's logits."""
    norm, head = final_norm(lm.model), lm.model.get_output_embeddings()
    out = []
    for t in texts:
        ids = torch.tensor([lm.tokenizer(t)["input_ids"]])
        o = lm.model(input_ids=ids, output_hidden_states=True)
        layers = [head(norm(h[0, -1])) for h in o.hidden_states[:-1]] + [o.logits[0, -1]]
        out.append(torch.stack([torch.log_softmax(x.double(), -1) for x in layers]).numpy())
    return np.stack(out, axis=1)


@pytest.mark.parametrize("arch", ARCHS)
def test_last_layer_equals_the_final_scores_exactly(arch):
    lm = _lm(arch)
    contexts, queries = prompts()
    plain = first_token(Engine(lm, batch_size=5), contexts, queries, prior_topk=3)
    layered = first_token(Engine(lm, batch_size=5), contexts, queries, prior_topk=3, per_layer="psi")
    n_layers = lm.model.config.num_hidden_layers + 1
    for p, r in zip(plain, layered):
        assert r.by_layer["susceptibility"].shape == (n_layers,)
        assert r.by_layer["persuasion"].shape == (n_layers, len(contexts))
        assert r.by_layer["susceptibility"][-1] == p.susceptibility  # exactly, not approx
        assert r.by_layer["mixture_entropy"][-1] == p.mixture_entropy
        assert r.by_layer["mean_conditional_entropy"][-1] == p.mean_conditional_entropy
        np.testing.assert_array_equal(r.by_layer["persuasion"][-1], p.persuasion)
        assert r.susceptibility == p.susceptibility  # the final scores unchanged
        np.testing.assert_array_equal(r.persuasion, p.persuasion)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("batch_size", [64, 3])
def test_every_layer_equals_a_naive_logit_lens(arch, batch_size):
    lm = _lm(arch)
    contexts, queries = prompts()
    res = first_token(Engine(lm, batch_size=batch_size), contexts, queries, prior_topk=0, per_layer="psi")
    for q, r in zip(queries, res):
        ref = naive_lens(lm, [c + q for c in contexts])
        for layer in range(ref.shape[0]):
            s = scores_np(ref[layer])
            assert r.by_layer["susceptibility"][layer] == pytest.approx(s.susceptibility, rel=1e-3, abs=1e-8)
            # ψ's float32 terms (metrics.vocab_pass: within 1e-6 of float64) matter only where ψ is
            # itself ~1e-5, as on these random tiny models
            np.testing.assert_allclose(r.by_layer["persuasion"][layer], s.persuasion, rtol=1e-3, atol=1e-6)
            assert r.by_layer["mixture_entropy"][layer] == pytest.approx(s.mixture_entropy, abs=1e-5)
    # the layers differ (the lens is not the output at every depth)
    assert len(set(res[0].by_layer["susceptibility"].tolist())) == len(res[0].by_layer["susceptibility"])


def test_chi_only_keeps_no_persuasion_by_layer():
    lm = tiny()
    contexts, queries = prompts()
    r = first_token(Engine(lm), contexts, queries, per_layer="chi")[0]
    assert set(r.by_layer) == {"susceptibility", "mixture_entropy", "mean_conditional_entropy"}


# ---------------------------------------------------------------- warehouse, view, CLI, API

from scoring_helpers import _demo, tiny_folder  # noqa: E402,F401

from ctxprior.errors import UserError  # noqa: E402
from ctxprior.scoring.options import ScoreRequest  # noqa: E402
from ctxprior.scoring.runs.score import score_sample  # noqa: E402
from ctxprior.storage import open_store  # noqa: E402


def _score(db_path, per_layer, **kw):
    sid = _demo(db_path, entities=2, contexts=6)
    with open_store(db_path) as store:
        return sid, score_sample(
            store,
            ScoreRequest.of(
                sample=sid, model="tiny", query_types=("open",), per_layer=per_layer, shard_size=2
            ),
            lm=tiny(),
            progress=False,
            log=lambda m: None,
            **kw,
        )


def test_run_writes_layer_tables_and_the_view(db_path):
    _, s = _score(db_path, "psi")
    n_layers = tiny().model.config.num_hidden_layers + 1
    with open_store(db_path, read_only=True) as store:
        n_sus = store.scalar("SELECT count(*) FROM susceptibility WHERE run_id = ?", [s.run_id])
        n_pers = store.scalar("SELECT count(*) FROM persuasion WHERE run_id = ?", [s.run_id])
        assert n_sus > 0
        assert (
            store.scalar("SELECT count(*) FROM susceptibility_layer WHERE run_id = ?", [s.run_id])
            == n_sus * n_layers
        )
        assert (
            store.scalar("SELECT count(*) FROM persuasion_layer WHERE run_id = ?", [s.run_id])
            == n_pers * n_layers
        )
        # the last layer is the final-layer table, exactly
        diff = store.query(
            """SELECT count(*), count(*) FILTER (WHERE l.susceptibility <> s.susceptibility)
                           FROM susceptibility_layer l JOIN susceptibility s USING (run_id, query_form_id, fact_id)
                           WHERE l.layer = ? AND l.run_id = ?""",
            [n_layers - 1, s.run_id],
        )[0]
        assert diff == (n_sus, 0)
        diff = store.query(
            """SELECT count(*), count(*) FILTER (WHERE l.persuasion <> p.persuasion)
                           FROM persuasion_layer l JOIN persuasion p USING (run_id, query_form_id, fact_id, context_id)
                           WHERE l.layer = ? AND l.run_id = ?""",
            [n_layers - 1, s.run_id],
        )[0]
        assert diff == (n_pers, 0)
        # χ of a layer is the mean of its ψ (uniform context weights)
        gap = store.scalar("""SELECT max(abs(l.susceptibility - p.m)) FROM susceptibility_layer l
                           JOIN (SELECT run_id, query_form_id, fact_id, layer, avg(persuasion) AS m FROM persuasion_layer
                                 GROUP BY ALL) p USING (run_id, query_form_id, fact_id, layer)""")
        assert gap < 1e-12
        v = store.df(
            "SELECT * FROM v_susceptibility_by_layer WHERE run_id = ? ORDER BY entity, layer", [s.run_id]
        )
        assert len(v) == n_sus * n_layers and set(v["n_layers"]) == {n_layers}
        assert set(v["entity_kind"]) <= {"real", "fake"} and v["entity"].notna().all()
        ref = store.df(
            "SELECT query_form_id, fact_id, susceptibility FROM v_susceptibility WHERE run_id = ?", [s.run_id]
        )
        both = ref.merge(v[v["layer"] == n_layers - 1], on=["query_form_id", "fact_id"])
        assert len(both) == len(ref) and (both["susceptibility_x"] == both["susceptibility_y"]).all()


def test_chi_only_run_writes_no_persuasion_by_layer_and_plain_runs_nothing(db_path):
    _, s = _score(db_path, "chi")
    with open_store(db_path) as store:
        assert store.scalar("SELECT count(*) FROM susceptibility_layer WHERE run_id = ?", [s.run_id]) > 0
        assert store.scalar("SELECT count(*) FROM persuasion_layer") == 0
        cfg = store.scalar("SELECT config_json FROM run WHERE run_id = ?", [s.run_id])
        assert '"per_layer": "chi"' in cfg
        sid = store.scalar("SELECT sample_id FROM run WHERE run_id = ?", [s.run_id])
        plain = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", query_types=("open",), shard_size=2),
            lm=tiny(),
            progress=False,
            log=lambda m: None,
        )
        assert plain.run_id != s.run_id  # another identity: not a resume of the per-layer run
        assert store.scalar("SELECT count(*) FROM susceptibility_layer WHERE run_id = ?", [plain.run_id]) == 0
        assert "per_layer" not in store.scalar("SELECT config_json FROM run WHERE run_id = ?", [plain.run_id])


def test_per_layer_needs_first_token(db_path):
    sid = _demo(db_path, entities=2, contexts=6)
    with open_store(db_path) as store:
        with pytest.raises(UserError, match="--per-layer"):
            score_sample(
                store,
                ScoreRequest.of(sample=sid, model="tiny", estimator="answer-set", per_layer="chi"),
                lm=tiny(),
                progress=False,
            )
        with pytest.raises(UserError, match="--per-layer"):
            score_sample(
                store, ScoreRequest.of(sample=sid, model="tiny", per_layer="all"), lm=tiny(), progress=False
            )


def test_cli_score_per_layer(run_cli, db_path, tiny_folder):
    sid = _demo(db_path, entities=2, contexts=6)
    r = run_cli(
        "score", "--sample", sid, "--model", tiny_folder, "--query-types", "open", "--quiet", "--per-layer"
    )
    assert r.exit_code == 0, r.output
    run_id = int(r.stdout.strip().splitlines()[-1])
    r = run_cli(
        "score",
        "--sample",
        sid,
        "--model",
        tiny_folder,
        "--query-types",
        "open",
        "--quiet",
        "--per-layer",
        "psi",
        "--fresh",
    )
    assert r.exit_code == 0, r.output
    run_psi = int(r.stdout.strip().splitlines()[-1])
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM v_susceptibility_by_layer WHERE run_id = ?", [run_id]) > 0
        assert store.scalar("SELECT count(*) FROM persuasion_layer WHERE run_id = ?", [run_id]) == 0
        assert store.scalar("SELECT count(*) FROM persuasion_layer WHERE run_id = ?", [run_psi]) > 0
    before = open(db_path, "rb").read()
    r = run_cli("score", "--sample", sid, "--model", tiny_folder, "--per-layer", "all")
    assert r.exit_code == 2 and "--per-layer" in r.output
    r = run_cli("score", "--sample", sid, "--model", tiny_folder, "--estimator", "answer-set", "--per-layer")
    assert r.exit_code == 2 and r.output.strip().splitlines()[-1].startswith("Error: --per-layer")
    assert open(db_path, "rb").read() == before


def test_cli_and_api_quick_per_layer(run_cli, tmp_path, tiny_folder):
    import json

    import ctxprior

    ents, ctxs = tmp_path / "e.txt", tmp_path / "c.txt"
    ents.write_text("France\nZorblax\n")
    ctxs.write_text("The capital of France is Rome.\\n\nThe capital of Spain is Paris.\\n\n")
    query = "Q: What is the capital of {entity}?\nA:"
    n_layers = tiny().model.config.num_hidden_layers + 1
    r = run_cli(
        "quick",
        "--model",
        tiny_folder,
        "--query",
        query,
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
        "--json",
        "--per-layer",
        "psi",
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 2 * n_layers * 2 and {x["layer"] for x in rows} == set(range(n_layers))
    r = run_cli(
        "quick",
        "--model",
        tiny_folder,
        "--query",
        query,
        "--entities-file",
        ents,
        "--contexts-file",
        ctxs,
        "--per-layer",
    )
    assert r.exit_code == 0, r.output
    assert len(r.stdout.strip().splitlines()) == 2 * n_layers and "layer 0\tsusceptibility" in r.stdout
    lm = ctxprior.load_model(tiny_folder, device="cpu")
    plain = ctxprior.quick(lm, query, ["France", "Zorblax"], ["The capital of France is Rome.\n", "Rome.\n"])
    chi = ctxprior.quick(
        lm, query, ["France", "Zorblax"], ["The capital of France is Rome.\n", "Rome.\n"], per_layer=True
    )
    assert list(chi.columns) == ["entity", "layer", "susceptibility"] and len(chi) == 2 * n_layers
    last = chi[chi["layer"] == n_layers - 1].set_index("entity")["susceptibility"]
    assert (last == plain.groupby("entity")["susceptibility"].first()).all()
    psi = ctxprior.quick(lm, query, ["France"], ["A.\n", "B.\n"], per_layer="psi")
    assert list(psi.columns) == ["entity", "context", "layer", "persuasion", "susceptibility"]
    with pytest.raises(UserError, match="--per-layer"):
        ctxprior.quick(lm, query, ["France"], ["A.\n"], per_layer="layers")


def test_figure_and_report_line(tmp_path):
    import pandas as pd

    from ctxprior.analyses.figures import fig_layers_real_fake
    from ctxprior.analyses.report import layers_reading, write_report

    db = str(tmp_path / "w.duckdb")
    sid = _demo(db, entities=4, contexts=12)
    with open_store(db) as store:
        kinds = set(
            r[0]
            for r in store.query(
                "SELECT DISTINCT f.entity_kind FROM sample_fact JOIN fact f USING (fact_id) "
                "WHERE sample_id = ?",
                [sid],
            )
        )
        assert kinds == {"real", "fake"}
        plain = score_sample(
            store, ScoreRequest.of(sample=sid, model="tiny"), lm=tiny(), progress=False, log=lambda m: None
        )
        f = fig_layers_real_fake(store, [plain.run_id])
        assert f.fig is None and "--per-layer" in f.note
        s = score_sample(
            store,
            ScoreRequest.of(sample=sid, model="tiny", per_layer="chi"),
            lm=tiny(),
            progress=False,
            log=lambda m: None,
        )
        f = fig_layers_real_fake(store, [s.run_id])
        n_layers = tiny().model.config.num_hidden_layers + 1
        assert f.fig is not None and set(f.data["grp"]) == {"real", "fake"}
        assert len(f.data) == 2 * 2 * n_layers  # (open, closed) x (real, fake) x layers
        final = store.df(
            """SELECT q.query_type, f.entity_kind AS grp, avg(s.susceptibility) AS m FROM susceptibility s
                         JOIN fact f USING (fact_id) JOIN query_form q USING (query_form_id)
                         WHERE run_id = ? GROUP BY ALL""",
            [s.run_id],
        )
        last = f.data[f.data["layer"] == n_layers - 1].merge(final, on=["query_type", "grp"])
        assert len(last) == 4 and ((last["mean"] - last["m"]).abs() < 1e-12).all()
        line = layers_reading(f.data)
        assert f"run {s.run_id} open: real χ = " in line and "fake χ = " in line
        assert f"at the output (layer {n_layers - 1})" in line
        html = open(write_report(store, tmp_path / "r.html", [s.run_id]), encoding="utf-8").read()
    assert "per-layer χ, logit lens" in html and line.split(";")[0] in html
    assert (
        layers_reading(pd.DataFrame(columns=["run_id", "query_type", "grp", "layer", "n_layers", "mean"]))
        == ""
    )


def test_a_model_without_a_final_norm_is_refused_in_one_line():
    lm = tiny()
    eng = Engine(lm)
    assert eng.norm is final_norm(lm.model) is lm.model.model.norm
    eng.norm = None  # as for a family whose final norm has another name
    contexts, queries = prompts()
    with pytest.raises(ValueError, match="per-layer scores: no final norm found on LlamaForCausalLM"):
        first_token(eng, contexts, queries, per_layer="chi")
    assert first_token(eng, contexts, queries)[0].by_layer is None  # plain scoring does not need it
