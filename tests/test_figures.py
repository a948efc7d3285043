"""`ctxprior figures`: a PNG and the CSV behind it per figure, and clear skips when data is missing."""

from __future__ import annotations

import pandas as pd

from analysis_fixtures import analyzed_warehouse, make_yago_like  # noqa: F401 (fixture)
from ctxprior.schema import open_warehouse

EXPECTED = ["fig2_answer_groups", "fig3_mr_bins", "fig4_reliability", "fig5_summary", "fig8_real_fake",
            "fig9_frequency", "fig10_friend_enemy", "fig11_gender"]


def test_figures_cli_writes_png_and_csv(analyzed_warehouse, run_cli, tmp_path):
    out = tmp_path / "figs"
    r = run_cli("figures", "--out", str(out), db=analyzed_warehouse)
    assert r.exit_code == 0, r.output
    for name in EXPECTED:
        png, csv = out / f"{name}.png", out / f"{name}.csv"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert len(pd.read_csv(csv)) > 0, name
    fig5 = pd.read_csv(out / "fig5_summary.csv")
    assert set(fig5["analysis"]) == {"relevance", "familiarity", "assertive", "negation"}
    assert set(fig5["model"]) == {"m-small", "m-big"}


def test_figures_skip_with_a_reason_when_data_is_missing(tmp_path, run_cli):
    db = str(tmp_path / "w.duckdb")
    w = open_warehouse(db)
    make_yago_like(w, n_relations=2, n_entities=4, generations=False)
    w.close()
    r = run_cli("figures", "--out", str(tmp_path / "f"), db=db)
    assert r.exit_code == 0, r.output
    assert "skipped: no generations" in r.output          # Fig. 2 needs --memorization
    assert "skipped: no friend-enemy runs" in r.output
    assert (tmp_path / "f" / "fig10_friend_enemy.png").exists() is False
