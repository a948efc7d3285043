"""docs/scaling.md's GPU figures against their raw files (benchmarks/scaling_figures.py, issue 34):
the real page passes (its tables without raw files say so, their arithmetic holds), a table is
generated from a synthetic results folder (tests/fixtures/results_gpu), and an edited figure, a
missing raw file or wrong arithmetic fails the check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_DOC = ROOT / "tests" / "fixtures" / "scaling_doc.md"
RUN = "tests/fixtures/results_gpu/2026-01-01-h100-80gb-hbm3"


def _figures(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "scaling_figures.py"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_the_docs_figures_check():
    out = _figures("--check")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "throughput-2026-11-26-h100: not backed by committed raw files" in out.stdout
    assert "grid-hours-2026-11-26-h100: not backed by committed raw files" in out.stdout
    text = (ROOT / "docs" / "scaling.md").read_text()
    # issue 34's arithmetic: 46.7 % and 28.5 %; the old figures only where the page corrects them
    assert text.count("48.7 %") == text.count("not 48.7 %") == 1
    assert text.count("30.1 %") == text.count("not\n30.1 %") == 1
    assert "43.6 % → **46.7 %** | 34.6 % → 37.0 %" in text


def test_a_table_is_generated_from_its_results_folder(tmp_path):
    doc = tmp_path / "scaling.md"
    shutil.copy(FIXTURE_DOC, doc)
    stale = _figures("--check", "--doc", str(doc), "--root", str(ROOT))
    assert stale.returncode == 1 and "throughput-fixture: the table differs" in stale.stdout
    assert _figures("--write", "--doc", str(doc), "--root", str(ROOT)).returncode == 0
    out = _figures("--check", "--doc", str(doc), "--root", str(ROOT))
    assert out.returncode == 0, out.stdout
    assert f"throughput-fixture: generated from {RUN}" in out.stdout
    assert "old-run: not backed by committed raw files" in out.stdout
    text = doc.read_text()
    # one run's measured peak (784) and the card's nominal one (989): 2 x 6.444e9 x 499,488 x 5,000 / 60,100
    assert "of the floor (measured peak 784 TFLOP/s) | of the nominal peak (989 TFLOP/s)" in text
    assert "| 6.9b | float16 | real | 8.31 (24.48) | 5,000 | 68.3 % | 54.2 % |" in text
    assert "| 1,500 | 3.33× | yes | 350 | 14.3× |" in text and "1.4b" not in text  # a failed row is left out
    assert "| 6.9b float16 | `nvjet_sm90_tst_256x128` | 57.0 % |" in text

    doc.write_text(text.replace("| 5,000 | 68.3 %", "| 5,000 | 70.1 %"))  # a figure edited by hand
    out = _figures("--check", "--doc", str(doc), "--root", str(ROOT))
    assert out.returncode == 1 and f"throughput-fixture: the table differs from {RUN}" in out.stdout


def test_a_run_without_its_raw_files_fails(tmp_path):
    run = tmp_path / RUN
    shutil.copytree(ROOT / RUN, run)
    (run / "profile.json").unlink()
    doc = tmp_path / "scaling.md"
    shutil.copy(FIXTURE_DOC, doc)
    out = _figures("--check", "--doc", str(doc), "--root", str(tmp_path))
    assert out.returncode == 1 and "lacks profile.json" in out.stdout


def test_wrong_arithmetic_in_a_table_without_raw_files_fails(tmp_path):
    doc = tmp_path / "scaling.md"
    doc.write_text(FIXTURE_DOC.read_text().replace("| 4,972 | 46.7 % |", "| 4,972 | 48.7 % |"))
    out = _figures("--check", "--doc", str(doc), "--root", str(ROOT))
    assert out.returncode == 1
    assert (
        "6.9b float16 at 4,972 prompts/s is 46.69 % of the unique-token floor (784 TFLOP/s), the doc says 48.7 %"
        in out.stdout
    )


def test_pythia_parameters_match_the_model():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu
    import scaling_figures
    import torch

    assert scaling_figures.pythia_params("6.9b") == 6_444_163_072
    lm = gpu.pythia("smoke", torch.float32, "cpu")
    assert gpu.non_embedding_params(lm.model) == scaling_figures.pythia_params("smoke")
