"""The scoring benchmarks run (tiny settings) and print what they promise: the GPU benchmark's
CPU smoke mode, the host-overhead comparison, the commit-time table."""

from __future__ import annotations

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

    text = _run("gpu.py", "--smoke", "--json", str(tmp_path / "gpu.json"))
    assert "prompts/s" in text and "floor" in text and "naive" in text and "precision" in text
    rows = json.loads((tmp_path / "gpu.json").read_text())["rows"]
    assert rows[0]["vs_naive"] > 0 and {r.get("precision_dtype") for r in rows[1:]} == {
        "float32",
        "bfloat16",
        "float16",
    }


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
