"""`ctxprior report`: one self-contained HTML page (figures as base64 PNG, tables, plain readings)."""

from __future__ import annotations

import base64
import html
import io
import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..version import __version__
from . import registry
from .figures import _runs_with_results, build_figures
from .selection import query_file, sql
from .summary import summary_lines

CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.7em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 1.8em; }
table { border-collapse: collapse; font-size: .85em; margin: .6em 0 1.2em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; }
.reading { background: #f6f9ff; border-left: 4px solid #4a7bd0; padding: .5em 1em; }
.summary { background: #fafafa; border: 1px solid #ddd; padding: .6em 1em; font-family: ui-monospace, monospace;
           font-size: .85em; white-space: pre-wrap; }
.muted { color: #777; font-size: .85em; }
"""

DIRECTION = {"greater": "higher than", "less": "lower than", "two-sided": "different from"}


def _img(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return f'<img alt="figure" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3g}"
    return html.escape(str(v))


def _table(df: pd.DataFrame, max_rows: int = 60) -> str:
    if df.empty:
        return '<p class="muted">(no rows)</p>'
    more = len(df) - max_rows
    df = df.head(max_rows)
    head = "".join(
        f'<th class="{"l" if df[c].dtype == object else ""}">{html.escape(str(c))}</th>' for c in df.columns
    )
    rows = []
    for r in df.itertuples(index=False):
        cells = "".join(f'<td class="{"l" if isinstance(v, str) else ""}">{_fmt(v)}</td>' for v in r)
        rows.append(f"<tr>{cells}</tr>")
    tail = f'<p class="muted">... {more} more rows in the warehouse table.</p>' if more > 0 else ""
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{tail}"


def _verdicts(cmp, ran: pd.DataFrame, unit: str) -> str:
    """What the tests found, per query type (relations as strata: "2 of 3 (open)") or per
    stratum, each sentence saying what its own test found: "open_0: friend was not significantly
    higher than enemy (d = -0.34)", never "significantly higher ...: not significant"."""
    direction = f"{DIRECTION[cmp.alternative]} {cmp.label2}"
    bits = []
    for qt, dq in ran.groupby("query_type", sort=True):
        n_sig = int(dq["significant"].fillna(False).astype(bool).sum())
        if cmp.stratum == "query_type":
            bits.append(f"{n_sig} of {len(dq)} ({qt})")
        else:
            said = f"{cmp.label1} was {'not ' if not n_sig else ''}significantly {direction}"
            said += f" in {n_sig} of {len(dq)} tests" if 0 < n_sig < len(dq) else ""
            bits.append(f"{qt}: {said} (d = {dq['effect_size'].mean():+.2f})")
    if cmp.stratum == "query_type":
        return f"{cmp.label1} was significantly {direction} in " + ", ".join(bits) + f" {unit}"
    return "; ".join(bits)


def reading_for(store, analysis: str, ids: list[int]) -> str:
    """Plain-language reading of one comparison from its stored rows."""
    cmp = registry.get(analysis).comparison
    if cmp is None:
        raise RuntimeError(f"reading_for: {analysis} is not a group comparison (it declares no compare:)")
    df = store.df(
        "SELECT * FROM analysis_result WHERE analysis = ? AND list_contains(?::INTEGER[], run_id)",
        [analysis, ids],
    )
    if df.empty:
        return "Not run on these runs."
    parts = []
    unit = (
        "relations"
        if cmp.stratum == "query_type"
        else ("query forms" if cmp.stratum == "query_form" else "context collections")
    )
    for (run_id, test), d in df.groupby(["run_id", "test"], sort=True):
        ran = d[d["skip_reason"].isna()]
        if test != "independent":
            continue
        model = store.scalar("SELECT model FROM run WHERE run_id = ?", [int(run_id)])
        alt = d[d["test"] == cmp.alt_design] if cmp.alt_design else pd.DataFrame()
        alt_all = df[(df["run_id"] == run_id) & (df["test"] == cmp.alt_design)] if cmp.alt_design else alt
        alt_ran = alt_all[alt_all["skip_reason"].isna()]
        mean_d = ran["effect_size"].mean()
        txt = f"<b>{html.escape(model)} (run {run_id})</b>: " + _verdicts(cmp, ran, unit)
        if not math.isnan(mean_d):
            txt += f"; mean Cohen's d = {mean_d:+.2f}"
        if len(alt_ran):
            txt += (
                f". The {(cmp.alt_design or '').replace('_', ' ')} alternative (repeated measures of one entity "
                f"combined) is significant in {int(alt_ran['significant'].fillna(False).astype(bool).sum())} of "
                f"{len(alt_ran)}"
            )
        mix = d["unit"].str.extract(r"mixture of (\d+) collections")[0].dropna()
        if len(mix):
            txt += (
                f". Caution: this run's sample mixes {mix.iloc[0]} collections, so each value is the mean ψ of "
                f"the collection's contexts against the mixture of all {mix.iloc[0]}, not the susceptibility χ of "
                "a single collection (score one sample per collection for χ)"
            )
        n_skip = int(d["skip_reason"].notna().sum())
        if n_skip:
            txt += f". {n_skip} test(s) could not run (see the skipped tests table)"
        parts.append(txt + ".")
    return "<br>".join(parts)


def write_report(store, out_path, run_ids=None, overwrite: bool = False) -> str:
    """Write the HTML report of ``run_ids`` (default: every run with results) to ``out_path``; its path.
    ``out_path`` is never the warehouse, nor an existing file unless ``overwrite``."""
    from ..outputs import check_output_file

    check_output_file(out_path, store.path, overwrite=overwrite)
    ids = ids_list = _runs_with_results(store, run_ids)
    figs = {f.name: f for f in build_figures(store, ids_list)}
    out = _head()
    out += _runs_section(store, ids)
    out += _summary_section(store, ids_list)
    out += _across_models_section(store, ids, figs)
    cmps = [(a, a.comparison) for a in registry.analyses().values() if a.comparison]  # in their .sql files
    for a, cmp in cmps:
        if cmp.stratum == "query_type":
            out += _comparison_section(store, a, ids, figs)
    out += _mr_section(store, ids, figs)
    out += _reliability_section(store, ids, figs)
    out += _frequency_section(store, ids, figs)
    for a, cmp in cmps:
        if cmp.stratum != "query_type":
            out += _pair_section(store, a, ids, figs)
    out += _layers_section(store, ids_list, figs)
    out += _skipped_section(store, ids)
    out.append("</body></html>")
    return _write_html(out, out_path)


def _fig_block(figs: dict, name: str) -> str:
    """A figure by name as an inline image with its caption, a note when it was not drawn, or ''."""
    f = figs.get(name)
    if f is None:
        return ""
    if f.fig is None:
        return f"<p class='muted'>{html.escape(f.title)}: not drawn ({html.escape(f.note)}).</p>"
    return f"<figure>{_img(f.fig)}<figcaption class='muted'>{html.escape(f.title)}</figcaption></figure>"


def _head() -> list[str]:
    """The page head, title and the line naming the version, time and methods."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>ctxprior report</title>"
        f"<style>{CSS}</style></head><body>",
        "<h1>Context versus prior: analysis report</h1>",
        f"<p class='muted'>ctxprior {__version__}, {now}. Persuasion ψ = KL(p(A|c,q) ‖ p(A|q)); "
        "susceptibility χ = I(C; A | q). Tests: permutation test of Student's t, Benjamini–Hochberg "
        "across relations per run and query type, Cohen's d (pooled SD).</p>",
    ]


def _runs_section(store, ids: list[int]) -> list[str]:
    """The runs table: model, dataset, seed, estimator and precision of each run."""
    runs = store.df(sql("report_runs.sql"), [ids])
    return ["<h2>Runs</h2>", _table(runs)]


def _summary_section(store, ids_list: list[int]) -> list[str]:
    """The plain-text summary of the analyses (a note instead when it cannot be made)."""
    try:
        lines = summary_lines(store, ids_list)
    except Exception as e:
        lines = [f"(summary unavailable: {e})"]
    return ["<h2>Summary</h2>", f"<div class='summary'>{html.escape(chr(10).join(lines))}</div>"]


def _across_models_section(store, ids: list[int], figs: dict) -> list[str]:
    """Fig. 5: share of significant relations and mean effect size per model and comparison."""
    summ = store.df(sql("report_across_models.sql"), [ids])
    return [
        "<h2>Across models (Fig. 5)</h2>",
        "<p class='reading'>Share of relations where the comparison is significant after BH, and the mean "
        "effect size, per model. <i>independent</i> is the paper's design; <i>paired</i> / "
        "<i>entity_mean</i> combine the repeated measures of one entity first.</p>",
        _fig_block(figs, "fig5_summary"),
        _table(summ, 80),
    ]


def _comparison_section(store, a: registry.Analysis, ids: list[int], figs: dict) -> list[str]:
    """One per-relation comparison (relevance, assertive, ...): text, reading, figure, tests that ran."""
    name, title, what = a.name, a.report_title or a.name, a.report_text or a.help
    rows = store.df(sql("report_comparison.sql"), [name, ids])
    out = [
        f"<h2>{html.escape(title)}</h2>",
        f"<p>{html.escape(what)}</p>",
        f"<p class='reading'>{reading_for(store, name, ids)}</p>",
    ]
    out.append(_fig_block(figs, a.figure or ""))
    out.append(_table(rows, 40))
    return out


def _mr_section(store, ids: list[int], figs: dict) -> list[str]:
    """Fig. 3: Spearman correlation of the memorization ratio with susceptibility."""
    out = ["<h2>Memorization ratio (Fig. 3)</h2>"]
    mr = store.df(sql("report_mr.sql"), [ids])
    if len(mr):
        out.append(
            "<p class='reading'>"
            + "; ".join(
                f"run {r.run_id} {r.query_type}: Spearman ρ(MR, χ) = {r.spearman_rho:+.2f} (n = {r.n})"
                for r in mr.itertuples()
            )
            + ". The paper reads the plot as a decreasing upper bound of χ as MR grows.</p>"
        )
    out += [_fig_block(figs, "fig3_mr_bins"), _table(mr)]
    return out


def _reliability_section(store, ids: list[int], figs: dict) -> list[str]:
    """Fig. 4: variance of each score across seeds and query forms."""
    rel = store.df(sql("report_reliability.sql"), [ids])
    return [
        "<h2>Reliability (Fig. 4)</h2>",
        "<p class='reading'>Variance of each score across seeds (runs of one model on samples drawn with "
        "different seeds) and across the two query forms of a type. Low variance = a reliable measure; the "
        "paper finds low variance except across open query forms.</p>",
        _fig_block(figs, "fig4_reliability"),
        _table(rel),
    ]


def _frequency_section(store, ids: list[int], figs: dict) -> list[str]:
    """Fig. 9: correlation of susceptibility with entity frequency, KG degree and other covariates."""
    sp = store.df(sql("report_frequency.sql"), [ids])
    out = ["<h2>Frequency and KG degree (Fig. 9)</h2>"]
    pooled = sp[sp["relation"] == "(all)"]
    if len(pooled):
        out.append(
            "<p class='reading'>"
            + "; ".join(
                f"run {r.run_id}, {html.escape(str(r.covariate))}, {r.query_type}: ρ = {r.rho:+.2f} (n = {r.n})"
                for r in pooled.itertuples()
            )
            + ". A negative ρ means more frequent / better connected entities "
            "are less susceptible (paper: ρ = −0.23 for pythia-6.9b).</p>"
        )
    out += [_fig_block(figs, "fig9_frequency"), _table(sp, 40)]
    return out


def _pair_section(store, a: registry.Analysis, ids: list[int], figs: dict) -> list[str]:
    """One comparison per query form (friend-enemy, gender): text, reading, figure, every test row."""
    name, title, what, fig = a.name, a.report_title or a.name, a.report_text or a.help, a.figure or ""
    rows = store.df(sql("report_pair.sql"), [name, ids])
    return [
        f"<h2>{html.escape(title)}</h2>",
        f"<p>{html.escape(what)}</p>",
        f"<p class='reading'>{reading_for(store, name, ids)}</p>",
        _fig_block(figs, fig),
        _table(rows),
    ]


def layers_reading(df: pd.DataFrame) -> str:
    """One line per (run, query type) of ``layers_real_fake.sql`` rows: the final χ of real and fake
    entities and the first layer where each group's mean χ reaches half its final value."""
    parts = []
    for (rid, qt), d in df.groupby(["run_id", "query_type"], sort=True):
        last = int(d["n_layers"].max()) - 1
        bits = []
        for kind in ("real", "fake"):
            g = d[d["grp"] == kind].sort_values("layer")
            if g.empty:
                continue
            final = float(g["mean"].iloc[-1])
            half = g.loc[g["mean"] >= 0.5 * final, "layer"]
            at = f", half of it from layer {int(half.iloc[0])}" if final > 0 and len(half) else ""
            bits.append(f"{kind} χ = {final:.3g} at the output (layer {last}){at}")
        if bits:
            parts.append(f"run {rid} {qt}: " + "; ".join(bits))
    return "; ".join(parts) + "." if parts else ""


def _layers_section(store, ids_list: list[int], figs: dict) -> list[str]:
    """Per-layer scores (logit lens): one reading line and the figure, when a run has them."""
    df = query_file(store, "layers_real_fake.sql", ids_list)
    if df.empty:
        return []
    return [
        "<h2>Where the context takes over (per-layer χ, logit lens)</h2>",
        f"<p class='reading'>{html.escape(layers_reading(df))} The lens reads each layer's residual "
        "stream through the final norm and output head, an approximation for the inner layers.</p>",
        _fig_block(figs, "fig_layers_real_fake"),
    ]


def _skipped_section(store, ids: list[int]) -> list[str]:
    """The tests that could not run, grouped by analysis, test and reason."""
    skipped = store.df(sql("report_skipped.sql"), [ids])
    return [
        "<h2>Skipped tests</h2>",
        "<p>Tests that could not run are stored with their reason (never as a silent 0).</p>",
        _table(skipped),
    ]


def _write_html(out: list[str], out_path) -> str:
    """Write the page's parts, one a line, to ``out_path`` (its folder must exist); the path written."""
    path = Path(out_path)
    if path.parent and not path.parent.exists():
        from ..errors import UserError

        raise UserError(f"--out {out_path}: folder {path.parent} does not exist")
    from ..outputs import replacing

    with replacing(path) as tmp:  # a temporary file beside it, renamed over it: no name is followed
        tmp.write_text("\n".join(out), encoding="utf-8")
    return str(path)
