"""A small scored demo warehouse built through the Python API (for the API, doc-example and
notebook tests): the bundled demo, one sample of two relations, scored by a tiny random model
with SmolLM2's tokenizer (real forward passes, seconds), analyzed with few permutations."""

from __future__ import annotations

import shutil
from pathlib import Path

from scale_helpers import make_tiny_folder

_BUILT: dict[str, Path] = {}


def build_scored_demo(folder: Path) -> Path:
    """``folder/demo.duckdb`` scored (run 1, with generations) and analyzed; built once per
    session and copied on later calls."""
    import ctxprior

    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / "demo.duckdb"
    if "db" in _BUILT:
        shutil.copy(_BUILT["db"], dest)
        return dest
    tiny = make_tiny_folder(folder / "tiny-model")
    wh = ctxprior.open(dest, write=True)
    wh.datasets.ingest_demo(only=["demo"])
    sid = wh.samples.draw("demo", relations=["capital", "officialLanguage"], entities=4, contexts=12, seed=11)
    run = wh.runs.score(sid, model=tiny, outcome_rule="prefix", max_new_tokens=3, progress=False, log=None)
    assert run.status == "done", run
    wh.analyses.run([run.id], permutations=200, log=None)
    _BUILT["db"] = dest
    _BUILT["model"] = Path(tiny)
    return dest


def tiny_model_folder() -> str:
    return str(_BUILT["model"])
