"""The example notebook runs headless, cell by cell, against a small scored warehouse."""

from __future__ import annotations

import pytest
from conftest import ROOT
from demo_warehouse import build_scored_demo


@pytest.mark.slow
def test_quickstart_notebook_runs(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    db = build_scored_demo(tmp_path)
    monkeypatch.setenv("CTXPRIOR_DB", str(db))
    nb = nbformat.read(ROOT / "examples" / "quickstart.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "permutation p =" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the real-vs-fake plot
