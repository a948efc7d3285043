"""The paper's figures (Fig. 2, 3, 4, 5, 8, 9, 10, 11 analogues) from the warehouse.

Each figure function returns ``Figure(name, title, data, fig, note)``: ``data`` is the DataFrame
behind the plot (written as CSV beside the PNG), ``fig`` a matplotlib figure (Agg backend) or
None when the runs hold no data for it (``note`` says why). Per-run figures (2, 3, 8, 9, 10,
11) use the first selected run that has the data; Fig. 4 uses the first run group; Fig. 5
compares all selected runs (models).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .selection import covariate_values, query_file, sql

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

QT_COLORS = {"open": "#1f77b4", "closed": "#ff7f0e"}


@dataclass
class Figure:
    name: str
    title: str
    data: pd.DataFrame
    fig: MplFigure | None
    note: str = ""


def _runs_with_results(store, run_ids):
    if run_ids:
        return sorted({int(r) for r in run_ids})
    from ..storage.runs import default_runs

    return default_runs(store, with_results=True)


def _model(store, run_id) -> str:
    return store.scalar("SELECT model FROM run WHERE run_id = ?", [int(run_id)]) or "?"


def _first_run_rows(store, sql_file: str, run_ids) -> tuple[pd.DataFrame, int | None]:
    """The rows of ``sql_file`` of the first run that has any, and its id (None: no rows)."""
    df = query_file(store, sql_file, run_ids)
    rid = None if df.empty else int(sorted(df["run_id"].unique())[0])
    return (df if rid is None else df[df["run_id"] == rid]), rid


def _empty(name, title, note):
    return Figure(name, title, pd.DataFrame(), None, note)


def _wrap(text: str, width: int) -> str:
    """Wrap each line of `text` to at most `width` characters, breaking after spaces, '/', '-',
    '_' or '.' when possible (model paths, relation URIs) and inside a word only when it must."""
    out = []
    for line in text.split("\n"):
        cur = ""
        for tok in re.findall(r"/?[^ /_.\-]*[ /_.\-]?", line):  # a path keeps its leading '/'
            if not tok:
                continue
            while len(tok) > width:  # a token longer than a line: cut it
                if cur:
                    out.append(cur.rstrip())
                    cur = ""
                out.append(tok[:width])
                tok = tok[width:]
            if len(cur) + len(tok.rstrip()) > width and cur:
                out.append(cur.rstrip())
                cur = ""
            cur += tok
        out.append(cur.rstrip())
    return "\n".join(out)


def _in_view(labels, lim, axis: int) -> list:
    """The tick labels whose tick lies inside the axis limits (the others are not drawn)."""
    lo, hi = sorted(lim)
    return [
        t for t in labels if lo - 1e-9 * abs(hi - lo) <= t.get_position()[axis] <= hi + 1e-9 * abs(hi - lo)
    ]


def _texts(fig) -> list:
    """The titles, axis labels and drawn tick labels of a figure: what must lie inside the canvas."""
    out = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        out += _in_view(ax.get_xticklabels(), ax.get_xlim(), 0) + _in_view(
            ax.get_yticklabels(), ax.get_ylim(), 1
        )
    return [t for t in out if t.get_visible() and t.get_text()]


def _finish(fig, margin: float = 6.0) -> None:
    """tight_layout, then wrap every title / axis label that leaves the canvas (long model names,
    relation names, covariate specs) and lay out again, until all fit."""
    for _ in range(6):
        fig.tight_layout()
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        w, h = fig.bbox.width, fig.bbox.height
        changed = False
        for t in _texts(fig):
            bb = t.get_window_extent(r)
            vertical = abs(t.get_rotation() % 180 - 90) < 1
            lo, hi, size = (bb.y0, bb.y1, h) if vertical else (bb.x0, bb.x1, w)
            if lo >= 0 and hi <= size:
                continue
            center = (lo + hi) / 2
            room = 2 * min(center, size - center) - 2 * margin
            longest = max(len(line) for line in t.get_text().split("\n"))
            width = max(8, int(longest * max(room, 1) / max(hi - lo, 1)))
            if width >= longest:
                width = longest - 1
            t.set_text(_wrap(t.get_text(), width))
            changed = True
        if not changed:
            return
    fig.tight_layout()


def _box_by(ax, groups: list[tuple[str, np.ndarray]], colors=None):
    data = [g[1][~np.isnan(g[1])] if len(g[1]) else np.array([np.nan]) for g in groups]
    bp = ax.boxplot(data, tick_labels=[g[0] for g in groups], patch_artist=True, showfliers=False)
    for i, patch in enumerate(bp["boxes"]):
        patch.set_facecolor((colors or ["#9ecae1"] * len(groups))[i])
        patch.set_alpha(0.7)
    for i, d in enumerate(data):
        x = np.random.default_rng(i).normal(i + 1, 0.06, len(d))
        ax.scatter(x, d, s=6, color="k", alpha=0.35, zorder=3)


def fig2_answer_groups(store, run_ids) -> Figure:
    title = "Fig. 2: persuasion by the model's answer"
    df, rid = _first_run_rows(store, "answer_groups.sql", run_ids)
    if rid is None:
        return _empty("fig2_answer_groups", title, "no generations (score with --memorization)")
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    for ax, qt in zip(axes, ("open", "closed")):
        d = df[df["query_type"] == qt]
        _box_by(
            ax,
            [(g, d.loc[d["grp"] == g, "value"].to_numpy(float)) for g in ("ORIGINAL", "CONTEXT", "OTHER")],
            ["#a1d99b", "#fc9272", "#d9d9d9"],
        )
        ax.set_title(f"{qt} queries")
        ax.set_xlabel("the model's answer with the context agrees with ...")
    axes[0].set_ylabel("mean persuasion score ψ (nats)\nper (entity, query form)")
    fig.suptitle(f"{title} — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig2_answer_groups", title, df, fig)


def fig3_mr_bins(store, run_ids) -> Figure:
    title = "Fig. 3: susceptibility vs memorization ratio"
    df, rid = _first_run_rows(store, "mr.sql", run_ids)
    if rid is None:
        return _empty("fig3_mr_bins", title, "no memorization ratios (score with --memorization)")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for off, qt in ((-0.18, "open"), (0.18, "closed")):
        d = df[df["query_type"] == qt]
        total = max(1, len(d))
        for b in range(5):
            x = d.loc[d["bin"] == b, "susceptibility"].dropna().to_numpy(float)
            if not len(x):
                continue
            share = len(x) / total
            bp = ax.boxplot([x], positions=[b + off], widths=0.32, patch_artist=True, showfliers=False)
            bp["boxes"][0].set_facecolor(QT_COLORS[qt])
            bp["boxes"][0].set_alpha(0.25 + 0.75 * share)
        ax.plot([], [], "s", color=QT_COLORS[qt], label=f"{qt} queries")
    ax.set_xticks(range(5), [f"{b / 5:.1f}–{(b + 1) / 5:.1f}" for b in range(5)])
    ax.set_xlabel("memorization ratio (share of answers that keep the original answer)")
    ax.set_ylabel("susceptibility χ (nats)")
    ax.legend(title="opacity = share of points in the bin", fontsize=8)
    ax.set_title(f"{title} — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig3_mr_bins", title, df, fig)


def _fig4_boxes(df, series: str) -> list[dict]:
    """Box statistics (quartiles, whiskers 0 to max) of one series per query type, for ``Axes.bxp``."""
    stats = []
    for qt in ("closed", "open"):
        r = df[(df["series"] == series) & (df["query_type"] == qt)]
        if len(r):
            r = r.iloc[0]
            stats.append(
                dict(
                    label=qt,
                    med=r["median"],
                    q1=r["q25"],
                    q3=r["q75"],
                    whislo=0.0,
                    whishi=r["max"],
                    fliers=[],
                )
            )
    return stats


def fig4_reliability(store, run_ids) -> Figure:
    title = "Fig. 4: reliability (variance across seeds and query forms)"
    df = store.df(sql("fig4_reliability.sql"), [list(run_ids)])
    if df.empty:
        return _empty(
            "fig4_reliability", title, "no reliability rows (run `ctxprior analyze --only reliability`)"
        )
    rid = int(df["run_id"].iloc[0])
    df = df[df["run_id"] == rid]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    for ax, across in zip(axes, ("seeds", "query forms")):
        for j, (score, color) in enumerate((("susceptibility", "#1f77b4"), ("persuasion", "#ff7f0e"))):
            stats = _fig4_boxes(df, f"{score} across {across}")
            if stats:
                pos = [i + (j - 0.5) * 0.35 for i in range(len(stats))]
                bp = ax.bxp(stats, positions=pos, widths=0.3, patch_artist=True, showfliers=False)
                for b in bp["boxes"]:
                    b.set_facecolor(color)
                    b.set_alpha(0.6)
                ax.set_xticks(range(len(stats)), [s["label"] for s in stats])
            ax.plot([], [], "s", color=color, label=f"{score} ({'χ' if score == 'susceptibility' else 'ψ'})")
        ax.set_title(f"across {across}")
        ax.set_xlabel("query type (box: quartiles, whisker: 0 to max)")
        if not df["series"].str.endswith(f"across {across}").any():
            ax.set_xticks([])
            ax.text(
                0.5,
                0.5,
                "no data: "
                + ("one seed per replicate group" if across == "seeds" else "one query form per type"),
                ha="center",
                va="center",
                transform=ax.transAxes,
                color="#777",
            )
        ax.set_yscale("symlog", linthresh=1e-4)
    axes[0].set_ylabel("variance of the score (nats²)")
    axes[1].legend(fontsize=8)
    runs = df["run_ids"].iloc[0]
    fig.suptitle(f"{title} — {df['model'].iloc[0]} ({'runs' if ',' in runs else 'run'} {runs})")
    _finish(fig)
    return Figure(
        "fig4_reliability",
        title,
        df,
        fig,
        "" if (df["series"].str.contains("seeds")).any() else "only one seed: no across-seed variance",
    )


FIG5_ANALYSES = [
    ("relevance", "relevant > irrelevant", "v"),
    ("familiarity", "fake > real (susceptibility)", "o"),
    ("assertive", "assertive > base", "s"),
    ("negation", "negation ≠ base", "^"),
]


def _fig5_series(ax, d: pd.DataFrame, order: list, metric: str, style: dict) -> None:
    """One analysis's points on ``ax``: a line joins only the runs of one ``series`` (the same
    sample and relations, models scored alike); other runs are points of their own."""
    for _, part in d[d[metric].notna()].groupby("series", sort=True):
        x = [order.index(m) for m in part["model_run"]]
        ax.plot(x, part[metric].to_numpy(float), **style)
        style = {**style, "label": None}  # one legend entry per analysis


def fig5_summary(store, run_ids) -> Figure:
    title = "Fig. 5: share of relations significant and mean effect size, per model"
    df = store.df(sql("fig5_summary.sql"), [list(run_ids)])
    if df.empty:
        return _empty("fig5_summary", title, "no group comparisons stored (run `ctxprior analyze`)")
    df["model_run"] = [_wrap(f"{m} (run {r})", 24) for m, r in zip(df["model"], df["run_id"])]
    order = list(dict.fromkeys(df["model_run"]))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for col, qt in enumerate(("open", "closed")):
        for row, (metric, ylabel) in enumerate(
            (
                ("share_significant", "share of relations significant (BH)"),
                ("mean_effect_size", "mean effect size (Cohen's d)"),
            )
        ):
            ax = axes[row, col]
            for i, (name, label, marker) in enumerate(FIG5_ANALYSES):
                d = df[(df["analysis"] == name) & (df["query_type"] == qt)]
                _fig5_series(ax, d, order, metric, dict(marker=marker, color=f"C{i}", label=label))
            ax.set_title(f"{qt} queries")
            ax.set_ylabel(ylabel)
            if metric == "share_significant":
                ax.set_ylim(-0.05, 1.05)
            ax.set_xticks(range(len(order)), order, rotation=30, ha="right", fontsize=8)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(title)
    _finish(fig)
    return Figure("fig5_summary", title, df.drop(columns="model_run"), fig)


def _boxes_per_form(df, groups: tuple[str, str], colors: list[str], xlabel: str):
    """One panel per query form with a box of χ per group (``grp``): figures 8 and 10."""
    forms = sorted(df["query_form"].unique())
    fig, axes = plt.subplots(
        1, len(forms), figsize=(max(7.0, 4.5 * len(forms)), 4), sharey=True, squeeze=False
    )
    for ax, qf in zip(axes[0], forms):
        d = df[df["query_form"] == qf]
        _box_by(ax, [(k, d.loc[d["grp"] == k, "value"].to_numpy(float)) for k in groups], colors)
        ax.set_title(f"query form {qf}")
        ax.set_xlabel(xlabel)
    axes[0][0].set_ylabel("susceptibility χ (nats)")
    return fig


def fig8_real_fake(store, run_ids) -> Figure:
    title = "Fig. 8: susceptibility of real vs fake entities (strongest relation)"
    best = store.query(sql("fig8_strongest_relation.sql"), [list(run_ids)])
    if not best:
        return _empty("fig8_real_fake", title, "no real-vs-fake tests stored")
    rid, rel, qt = best[0]
    df = query_file(store, "familiarity.sql", [rid])
    df = df[(df["relation"] == rel) & (df["query_type"] == qt)]
    fig = _boxes_per_form(df, ("real", "fake"), ["#6baed6", "#fd8d3c"], "entity")
    fig.suptitle(f"{title}\n{rel}, {qt} queries — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig8_real_fake", title, df, fig)


def fig9_frequency(store, run_ids) -> Figure:
    title = "Fig. 9: susceptibility vs training-data frequency / KG degree"
    row = store.query(sql("fig9_covariate_run.sql"), [list(run_ids)])
    if not row:
        return _empty("fig9_frequency", title, "no covariate correlations stored (give --covariate)")
    rid, analysis, note = row[0]
    if note and "." in note and not note.startswith("fact."):
        df = covariate_values(store, note, [rid])
    else:
        df = query_file(store, "susceptibility_by_fact.sql", [rid])
        df["covariate"] = df["predicate_degree"].astype(float)
    df = df[df["run_id"] == rid]
    rho = dict(store.query(sql("fig9_rho.sql"), [rid, analysis]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for qt in ("open", "closed"):
        d = df[df["query_type"] == qt]
        r = rho.get(qt)
        ax.scatter(
            1 + d["covariate"].astype(float),
            d["susceptibility"],
            s=10,
            alpha=0.5,
            color=QT_COLORS[qt],
            label=f"{qt} queries" + (f" (Spearman ρ = {r:+.2f})" if r is not None else ""),
        )
    ax.set_xscale("log")
    ax.set_xlabel(f"1 + {note} (log scale)")
    ax.set_ylabel("susceptibility χ (nats), mean over query forms")
    ax.legend(fontsize=8)
    ax.set_title(f"{title} — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig9_frequency", title, df, fig)


def fig10_friend_enemy(store, run_ids) -> Figure:
    title = "Fig. 10: susceptibility of friend vs enemy pairs"
    df, rid = _first_run_rows(store, "friend_enemy.sql", run_ids)
    if rid is None:
        return _empty("fig10_friend_enemy", title, "no friend-enemy runs")
    fig = _boxes_per_form(df, ("friend", "enemy"), ["#74c476", "#de2d26"], "relationship of the entity pair")
    fig.suptitle(f"{title} — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig10_friend_enemy", title, df, fig)


GENDER_LABELS = [
    ("feminine_stereotype", "F"),
    ("masculine_stereotype", "M"),
    ("feminine_swapped", "M* (feminine stereotype,\nswapped to men)"),
    ("masculine_swapped", "F* (masculine stereotype,\nswapped to women)"),
]


def fig11_gender(store, run_ids) -> Figure:
    title = "Fig. 11: susceptibility of feminine vs masculine names per context collection"
    df, rid = _first_run_rows(store, "gender.sql", run_ids)
    if rid is None:
        return _empty("fig11_gender", title, "no gender runs")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    present = [(ct, lab) for ct, lab in GENDER_LABELS if ct in set(df["context_type"])]
    for off, cls, color in ((-0.18, "feminine", "#e7298a"), (0.18, "masculine", "#1b9e77")):
        data = [
            df[(df["context_type"] == ct) & (df["grp"] == cls)]
            .groupby("entity")["value"]
            .mean()
            .to_numpy(float)
            for ct, _ in present
        ]
        bp = ax.boxplot(
            data,
            positions=[i + off for i in range(len(present))],
            widths=0.32,
            patch_artist=True,
            showfliers=False,
        )
        for b in bp["boxes"]:
            b.set_facecolor(color)
            b.set_alpha(0.6)
        ax.plot([], [], "s", color=color, label=f"{cls} names")
    ax.set_xticks(range(len(present)), [lab for _, lab in present], fontsize=8)
    ax.set_xlabel("context collection")
    n_coll = int(df["n_collections"].max())
    note = ""
    if n_coll > 1:  # the sample mixes the collections: ψ against their mixture, not χ of one collection
        note = f"ψ against the mixture of {n_coll} collections, not χ of one collection"
        ax.set_ylabel(
            f"mean ψ per name (nats) against the\nmixture of {n_coll} collections (mean over queries)"
        )
    else:
        ax.set_ylabel("susceptibility χ per name (nats)\n(mean over queries)")
    ax.legend(fontsize=8)
    ax.set_title(f"{title} — {_model(store, rid)} (run {rid})", fontsize=10)
    _finish(fig)
    return Figure("fig11_gender", title, df, fig, note)


KIND_COLORS = {"real": "#3182bd", "fake": "#e6550d"}


def fig_layers_real_fake(store, run_ids) -> Figure:
    title = "Susceptibility by layer (logit lens): real vs fake entities"
    df, rid = _first_run_rows(store, "layers_real_fake.sql", run_ids)
    if rid is None:
        return _empty("fig_layers_real_fake", title, "no per-layer scores (score with --per-layer)")
    types = [t for t in ("open", "closed") if t in set(df["query_type"])]
    fig, axes = plt.subplots(1, len(types), figsize=(4.8 * len(types) + 1, 4), sharey=True, squeeze=False)
    for ax, qt in zip(axes[0], types):
        for kind, color in KIND_COLORS.items():
            d = df[(df["query_type"] == qt) & (df["grp"] == kind)].sort_values("layer")
            if d.empty:
                continue
            ax.plot(d["layer"], d["mean"], marker=".", color=color, label=f"{kind} entities (mean)")
            ax.fill_between(d["layer"], d["q25"], d["q75"], color=color, alpha=0.18, linewidth=0)
        ax.set_title(f"{qt} queries")
        ax.set_xlabel(f"layer (0 = embeddings, {int(df['n_layers'].max()) - 1} = output)")
        ax.legend(fontsize=8, title="band: quartiles", title_fontsize=8)
    axes[0][0].set_ylabel("susceptibility χ (nats), logit lens")
    fig.suptitle(f"{title} — {_model(store, rid)} (run {rid})")
    _finish(fig)
    return Figure("fig_layers_real_fake", title, df, fig)


FIGURES = [
    fig2_answer_groups,
    fig3_mr_bins,
    fig4_reliability,
    fig5_summary,
    fig8_real_fake,
    fig9_frequency,
    fig10_friend_enemy,
    fig11_gender,
    fig_layers_real_fake,
]


def build_figures(store, run_ids=None) -> list[Figure]:
    ids = _runs_with_results(store, run_ids)
    if not ids:
        from ..errors import UserError

        raise UserError("no runs to plot; score and `ctxprior analyze` first")
    return [f(store, ids) for f in FIGURES]


def write_figures(store, out_dir, run_ids=None, overwrite: bool = False) -> list[tuple[str, str | None, str]]:
    """Write <name>.png and <name>.csv per figure into out_dir; returns (name, png or None, note).
    No file written is the warehouse, nor an existing file unless ``overwrite``."""
    from ..outputs import check_output_dir, check_output_files, replacing

    out = check_output_dir(out_dir, store.path)
    figs = build_figures(store, run_ids)
    names = [out / f"{f.name}{ext}" for f in figs if f.fig is not None for ext in (".png", ".csv")]
    try:
        check_output_files(names, store.path, overwrite=overwrite)
    except Exception:
        for f in figs:
            if f.fig is not None:
                plt.close(f.fig)
        raise
    out.mkdir(parents=True, exist_ok=True)
    written: list[tuple[str, str | None, str]] = []
    for f in figs:
        if f.fig is None:
            written.append((f.name, None, f"skipped: {f.note}"))
            continue
        png = out / f"{f.name}.png"
        with replacing(png) as tmp:
            f.fig.savefig(tmp, dpi=110, format="png")  # tmp: /proc/self/fd/N, no suffix
        plt.close(f.fig)
        with replacing(out / f"{f.name}.csv") as tmp:
            f.data.to_csv(tmp, index=False)
        written.append((f.name, os.fspath(png), f.title + (f" ({f.note})" if f.note else "")))
    return written
