"""The scoring benchmarks run (tiny settings) and print what they promise: the GPU benchmark's
CPU smoke mode, the host-overhead comparison, the commit-time table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(*args: str) -> str:
    out = subprocess.run([sys.executable, *args], cwd=BENCH, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_gpu_benchmark_smoke(tmp_path):
    import json

    jsonl = tmp_path / "gpu.jsonl"
    text = _run("gpu.py", "--smoke", "--json", str(tmp_path / "gpu.json"), "--jsonl", str(jsonl))
    assert "prompts/s" in text and "floor" in text and "naive" in text and "precision" in text
    assert "profile smoke" in text and "top kernels" in text
    doc = json.loads((tmp_path / "gpu.json").read_text())
    rows = doc["rows"]
    assert doc["measured_peak_flops"] > 0 and doc["torch"]
    assert rows[0]["vs_naive"] > 0 and rows[0]["head"] == "engine" and "engine_peak_mem_gib" in rows[0]
    assert rows[1]["profile"] == "smoke" and rows[1]["top_kernels"] and rows[1]["host_ms_per_forward"] > 0
    assert {r.get("precision_dtype") for r in rows[2:]} == {"float32", "bfloat16", "float16"}
    lines = [json.loads(x) for x in jsonl.read_text().splitlines()]  # the same rows, as they came
    assert lines[0]["bench"] == "header" and lines[1:] == rows


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
    assert rows[0]["shape"] == "smoke" and "prompts_per_s" in rows[0]
    assert rows[1]["shape"] == "nope" and rows[1]["error"].startswith("KeyError")


def test_gpu_check_smoke_mode(tmp_path):
    """The GPU check's CPU smoke mode: every step, each result in results.jsonl, a summary."""
    import json

    root = BENCH.parent
    out = subprocess.run(
        [
            "bash",
            str(root / "scripts" / "gpu-check.sh"),
            "--smoke",
            "--out",
            str(tmp_path),
            "--deadline",
            "400",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    steps = {r.get("step") for r in rows}
    assert {"environment", "probe", "e2e", "e2e_vs_engine", "summary"} <= steps
    assert any(r.get("probe") == "sdpa" for r in rows) and any(r.get("probe") == "engine" for r in rows)
    e2e = next(r for r in rows if r.get("step") == "e2e")
    assert e2e["run"][0]["status"] == "done" and e2e["engine"][0]["head"] == "engine"
    assert int(e2e["rows"][0]["persuasion_rows"]) > 0 and e2e["rows"][0]["units_not_done"] == "0"
    assert any("prompts_per_s" in r for r in rows)  # the benchmark's rows
    assert rows[-1]["step"] == "summary" and rows[-1]["engine_finite"] is True
    assert "summary" in (tmp_path / "log.txt").read_text()


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
    assert float(text.split("measures: ")[1].split()[0]) < 1e-9
