"""The transformers release at the floor of pyproject.toml (``transformers>=4.56``), installed once
into a side folder of the model cache for ``test_transformers_versions``. ``scripts/test.sh``
installs it with the rest of the set-up (``python tests/transformers_floor.py``: ~9 s the first
time, nothing after); the test installs it itself when run alone."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ctxprior.scoring.models import cache_dir

FLOOR = ("transformers==4.56.2", "huggingface-hub==0.36.0", "tokenizers==0.22.1")


def floor_dir() -> Path:
    """The side folder (put it on PYTHONPATH to import the floor release)."""
    floor = cache_dir() / "transformers-floor"
    if not (floor / "transformers").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(floor), *FLOOR],
            check=True,
            timeout=600,
        )
    return floor


if __name__ == "__main__":
    t = time.perf_counter()
    floor_dir()
    print(f"test.sh: {FLOOR[0]} ready for the floor test ({time.perf_counter() - t:.0f} s)")
