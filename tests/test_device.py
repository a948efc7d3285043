"""Where a run computes, said out loud: the device line, the CPU-fallback warning, and the torch
build that scripts/setup.sh picks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_score_prints_device_and_dtype(run_cli, db_path, tmp_path, monkeypatch):
    from scale_helpers import make_tiny_folder

    monkeypatch.delenv("CTXPRIOR_ASSUME_GPU", raising=False)
    tiny = make_tiny_folder(tmp_path / "tiny")
    assert run_cli("ingest", "demo").exit_code == 0
    assert (
        run_cli(
            "sample", "--dataset", "demo", "--relation", "capital", "--entities", "2", "--contexts", "6"
        ).exit_code
        == 0
    )
    r = run_cli("score", "--sample", "1", "--model", tiny, "--device", "cpu", "--query-types", "open")
    assert r.exit_code == 0, r.output
    assert "device cpu, dtype float32" in r.stderr
    assert "warning" not in r.stderr


def test_a_visible_gpu_with_a_cpu_torch_is_one_warning_line(monkeypatch):
    import torch

    from ctxprior.scoring.device import cpu_fallback_warning

    monkeypatch.setenv("CTXPRIOR_ASSUME_GPU", "1")
    monkeypatch.setattr(torch.version, "cuda", None)
    w = cpu_fallback_warning("cpu")
    assert w.startswith("warning: an NVIDIA GPU is visible but scoring runs on the CPU: ")
    assert "CPU build" in w and "scripts/setup.sh" in w and "\n" not in w
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    assert "cannot use it" in cpu_fallback_warning("cpu")
    assert cpu_fallback_warning("cuda:0") is None
    monkeypatch.delenv("CTXPRIOR_ASSUME_GPU")
    if not os.path.exists("/proc/driver/nvidia/gpus"):
        assert cpu_fallback_warning("cpu") is None


def test_score_warns_when_a_gpu_is_visible_but_unused(run_cli, db_path, tmp_path, monkeypatch):
    from scale_helpers import make_tiny_folder

    tiny = make_tiny_folder(tmp_path / "tiny")
    assert run_cli("ingest", "demo").exit_code == 0
    assert (
        run_cli(
            "sample", "--dataset", "demo", "--relation", "capital", "--entities", "2", "--contexts", "6"
        ).exit_code
        == 0
    )
    monkeypatch.setenv("CTXPRIOR_ASSUME_GPU", "1")
    r = run_cli("score", "--sample", "1", "--model", tiny, "--query-types", "open")
    assert r.exit_code == 0, r.output
    lines = [x for x in r.stderr.splitlines() if x.startswith("warning: an NVIDIA GPU is visible")]
    assert len(lines) == 1


def test_describe_model_has_no_weights(tmp_path):
    from scale_helpers import make_tiny_folder

    from ctxprior.scoring.device import describe_model, vocab_size

    d = describe_model(make_tiny_folder(tmp_path / "tiny"), device="cpu")
    assert d.model is None and d.dtype == "float32" and d.device == "cpu" and vocab_size(d) > 0
    assert describe_model(make_tiny_folder(tmp_path / "t2"), worker_gpus=True).dtype == "float16"


def _spec(path_extra: str | None = None, **env) -> list[str]:
    e = {**os.environ, **env}
    if path_extra:
        e["PATH"] = path_extra + os.pathsep + e["PATH"]
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "torch-spec.sh")], capture_output=True, text=True, env=e
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_setup_picks_the_torch_build_from_the_gpu(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    smi = fake / "nvidia-smi"
    smi.write_text('#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n')
    smi.chmod(0o755)
    assert _spec(str(fake)) == [
        "torch>=2.4",
        "a CUDA build of torch: GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)",
    ]
    assert _spec(str(fake), CTXPRIOR_TORCH="cpu")[0] == "torch==2.13.0"
    smi.write_text("#!/bin/sh\nexit 9\n")  # a driver that does not answer: CPU
    assert _spec(str(fake))[0] == "torch==2.13.0"
    assert "setup: installing" in (ROOT / "scripts" / "setup.sh").read_text()
