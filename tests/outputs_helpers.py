"""What the output-folder tests share (tests/test_outputs.py, tests/test_outputs_paths.py)."""

from __future__ import annotations

from pathlib import Path


def fake_demo(wh, echo, out, **kw):
    """The demo's writes without its minutes of work: the same writers, the same file names."""
    from ctxprior import pipeline
    from ctxprior.outputs import replacing

    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "corpus").mkdir(parents=True, exist_ok=True)
    for rel in (pipeline.REPORT, pipeline.CORPUS, "figures/fig5_summary.png", "figures/fig5_summary.csv"):
        with replacing(out / rel) as tmp:
            tmp.write_text("demo")
    return {"samples": {}, "runs": {"demo": 1}, "figures": [], "report": str(out / pipeline.REPORT)}
