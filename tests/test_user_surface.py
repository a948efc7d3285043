"""Issue 19, a notebook user's and a shell user's first touch: `dir(ctxprior)` lists the API, wrong
argument types are one clear error naming the argument, and bad path values are one line."""

from __future__ import annotations

import hashlib
import pydoc
from pathlib import Path

import numpy as np
import pytest

import ctxprior
from ctxprior.errors import ArgumentTypeError, UserError

API = ["open", "quick", "load_model", "Warehouse", "Run", "Covariates"]


def test_dir_and_help_list_the_api():
    names = dir(ctxprior)
    assert set(API) <= set(names), names
    assert set(API) <= set(ctxprior.__all__)
    text = pydoc.render_doc(ctxprior, renderer=pydoc.plaintext)
    for name in API:
        assert f"{name}(" in text or f"class {name}" in text, name


@pytest.fixture(scope="module")
def demo_wh(tmp_path_factory):
    wh = ctxprior.open(tmp_path_factory.mktemp("api") / "w.duckdb", write=True)
    wh.datasets.ingest_demo()
    return wh


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda wh: ctxprior.open(5), "open: path must be a string or a path or None, got int 5"),
        (lambda wh: ctxprior.open(wh.path, write="yes"), "open: write must be a bool, got str 'yes'"),
        (lambda wh: ctxprior.open(wh.path, wirte=True), "open: got an unexpected keyword argument 'wirte'"),
        (
            lambda wh: ctxprior.quick("smollm2-135m", "Q: {entity}?", "France", ["c"]),
            "quick: entities must be a list of strings, got str 'France'",
        ),
        (
            lambda wh: ctxprior.quick("smollm2-135m", "Q: {entity}?", ["France"], ["c"], batch_size="8"),
            "quick: batch_size must be an integer or None, got str '8'",
        ),
        (lambda wh: ctxprior.load_model(135), "load_model: model must be a string or a path, got int 135"),
        (lambda wh: wh.sql(5), "Warehouse.sql: query must be a string, got int 5"),
        (lambda wh: wh.sql("SELECT 1", 5), "Warehouse.sql: params must be a list or None, got int 5"),
        (lambda wh: wh.samples.draw(5), "Samples.draw: dataset must be a string, got int 5"),
        (
            lambda wh: wh.samples.draw("demo", entities="10"),
            "Samples.draw: entities must be an integer or None, got str",
        ),
        (
            lambda wh: wh.analyses.results(runs=1),
            "Analyses.results: runs must be a list of integers or None, got int 1",
        ),
        (
            lambda wh: wh.runs.most_susceptible("1"),
            "Runs.most_susceptible: run must be an integer, got str '1'",
        ),
        (lambda wh: wh.runs.score(sample="1"), "Runs.score: sample must be an integer or None, got str '1'"),
        (
            lambda wh: wh.analyses.run(runs=[1.5]),
            "Analyses.run: runs must be a list of integers or None, got list",
        ),
        (
            lambda wh: wh.covariates.add(5, on="entity", name="x"),
            "Covariates.add: data must be a pandas.DataFrame or a pyarrow.Table or a string or a path, got int 5",
        ),
    ],
)
def test_wrong_argument_types_name_the_argument(demo_wh, call, message):
    before = _sha(demo_wh.path)
    with pytest.raises(ArgumentTypeError) as e:
        call(demo_wh)
    assert isinstance(e.value, TypeError) and isinstance(e.value, UserError)
    assert message in str(e.value), str(e.value)
    assert _sha(demo_wh.path) == before


def test_numpy_and_pandas_values_are_accepted(demo_wh):
    """What a notebook passes from a DataFrame (numpy integers, arrays) works like plain Python values."""
    sid = demo_wh.samples.draw(
        "demo", relations=np.array(["capital"]), entities=np.int64(2), contexts=np.int64(6)
    )
    assert isinstance(sid, int)
    assert demo_wh.runs.most_susceptible(np.int64(1), n=np.int64(3)).empty
    assert demo_wh.analyses.results(runs=np.array([1])).empty
    assert ctxprior.open(Path(demo_wh.path)).sql("SELECT ?::INT AS x", (np.int64(3),)).x[0] == 3


# -- bad path values: one line, exit 2 ----------------------------------------------------------


def test_a_folder_or_file_of_the_wrong_kind_is_one_line(run_cli, tmp_path, db_path, demo_db):
    before = _sha(db_path)
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    cases = [
        (["fakes", "add", tmp_path, "--dataset", "demo", "--relation", "capital"], "is a directory"),
        (["publish", "me/x", "--dry-run", afile], "is a file"),
        (["covariates", "add", tmp_path, "--name", "x", "--on", "entity"], "is a directory"),
    ]
    for args, message in cases:
        r = run_cli(*args)
        assert r.exit_code == 2, r.output
        assert r.output.startswith("Error: ") and r.output.count("\n") == 1 and message in r.output, r.output
        assert _sha(db_path) == before


def test_results_go_to_stdout_progress_to_stderr(run_cli, tmp_path, demo_db):
    """`ctxprior sample ... > out.txt` keeps the sample's summary; the id stays alone on the last line."""
    r = run_cli("sample", "--dataset", "demo", "--relation", "capital", "--entities", 2, "--contexts", 6)
    assert r.exit_code == 0, r.output
    out = r.stdout.strip().splitlines()
    assert out[-1] == "1" and out[0].startswith("sample 1: dataset 'demo'"), r.stdout
    assert "sample 1:" not in r.stderr
