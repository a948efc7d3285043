"""`ctxprior figures`: a PNG and the CSV behind it per figure, and clear skips when data is missing."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from analysis_fixtures import add_friend_enemy, add_gender, analyzed_warehouse, make_yago_like  # noqa: F401
from parquet_fixtures import record_covariate_view

from ctxprior.analyses.driver import analyze
from ctxprior.storage import open_store

EXPECTED = [
    "fig2_answer_groups",
    "fig3_mr_bins",
    "fig4_reliability",
    "fig5_summary",
    "fig8_real_fake",
    "fig9_frequency",
    "fig10_friend_enemy",
    "fig11_gender",
    "fig_layers_real_fake",
]


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
    w = open_store(db)
    make_yago_like(w, n_relations=2, n_entities=4, generations=False)
    w.close()
    r = run_cli("figures", "--out", str(tmp_path / "f"), db=db)
    assert r.exit_code == 0, r.output
    assert "skipped: no generations" in r.output  # Fig. 2 needs --memorization
    assert "skipped: no friend-enemy runs" in r.output
    assert (tmp_path / "f" / "fig10_friend_enemy.png").exists() is False


LONG_MODEL = "/home/researcher/models/EleutherAI/pythia-6.9b-deduped"


@pytest.fixture(scope="module")
def long_names_warehouse(tmp_path_factory) -> str:
    """Long model path, long relation names, one query form per type (Fig. 8 and 10 get one
    panel), a long covariate name: the titles the report's figures must still show in full."""
    path = str(tmp_path_factory.mktemp("long") / "wh.duckdb")
    w = open_store(path, threads=1)
    make_yago_like(w, n_relations=2, n_entities=5, models=(LONG_MODEL,), seeds=(11, 12))
    w.execute("UPDATE relation SET short_name = 'reverse-isCitizenOfTheCountryWithCapital' || relation_id")
    for table in ("persuasion", "susceptibility", "generation"):
        w.execute(
            f"DELETE FROM {table} WHERE query_form_id IN (SELECT query_form_id FROM query_form WHERE ordinal = 1)"
        )
    add_friend_enemy(w, model=LONG_MODEL)
    add_gender(w, model=LONG_MODEL)
    w.execute("""CREATE VIEW cov_cooccurrence_in_the_pile_window_50_words AS
                 SELECT dataset, relation, entity, answer,
                        CASE WHEN entity_kind = 'real' THEN ln(1 + 10 * (position + 1)) ELSE 0.0 END
                        AS log_count_of_entity_answer_pairs
                 FROM v_entity""")
    record_covariate_view(w, "cov_cooccurrence_in_the_pile_window_50_words")
    analyze(
        w,
        k=20,
        log=lambda m: None,
        covariates=["cov_cooccurrence_in_the_pile_window_50_words.log_count_of_entity_answer_pairs"],
    )
    w.close()
    return path


def _texts(fig):
    """Titles, axis labels and the tick labels of ticks inside the axis limits (drawn ones)."""
    out = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        for labels, lim, i in (
            (ax.get_xticklabels(), ax.get_xlim(), 0),
            (ax.get_yticklabels(), ax.get_ylim(), 1),
        ):
            lo, hi = sorted(lim)
            out += [t for t in labels if lo - 1e-6 <= t.get_position()[i] <= hi + 1e-6]
    return [t for t in out if t.get_visible() and t.get_text()]


@pytest.mark.parametrize("which", ["analyzed", "long names"])
def test_titles_and_labels_lie_inside_the_canvas(analyzed_warehouse, long_names_warehouse, which):
    from ctxprior.analyses.figures import build_figures

    w = open_store(analyzed_warehouse if which == "analyzed" else long_names_warehouse, read_only=True)
    figs = build_figures(w)
    w.close()
    assert [f.name for f in figs if f.fig is not None] == EXPECTED
    for f in figs:
        for dpi in (90, 110):  # the report's and `ctxprior figures`' PNG sizes
            f.fig.set_dpi(dpi)
            f.fig.canvas.draw()
            r = f.fig.canvas.get_renderer()
            width, height = f.fig.bbox.width, f.fig.bbox.height
            for t in _texts(f.fig):
                bb = t.get_window_extent(r)
                assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= width + 1 and bb.y1 <= height + 1, (
                    f.name,
                    dpi,
                    t.get_text(),
                    bb.extents,
                    (width, height),
                )
        plt.close(f.fig)


def test_wrap_breaks_at_separators():
    from ctxprior.analyses.figures import _wrap

    assert _wrap("Fig. 8: rel, open — /home/researcher/models/EleutherAI/pythia", 24).split("\n") == [
        "Fig. 8: rel, open —",
        "/home/researcher/models/",
        "EleutherAI/pythia",
    ]
    assert _wrap("a" * 30, 10) == "aaaaaaaaaa\naaaaaaaaaa\naaaaaaaaaa"
    assert _wrap("short\nlines", 10) == "short\nlines"


def test_fig11_labels_a_mixture_of_collections(analyzed_warehouse):
    from ctxprior.analyses.figures import fig11_gender

    w = open_store(analyzed_warehouse, read_only=True)
    f = fig11_gender(w, [6])
    w.close()
    assert "mixture of 4 collections" in f.fig.axes[0].get_ylabel() and "mixture of 4" in f.note
    plt.close(f.fig)
