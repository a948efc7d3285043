"""The Python API (`import ctxprior`): what a notebook user calls, on a real warehouse with real
forward passes; its docstring examples run here as doctests."""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil

import pandas as pd
import pytest
from demo_warehouse import build_scored_demo, tiny_model_folder

import ctxprior
from ctxprior.errors import UserError


@pytest.fixture(scope="session")
def scored_demo(tmp_path_factory):
    return build_scored_demo(tmp_path_factory.mktemp("api") / "base")


@pytest.fixture
def demo_db(scored_demo, tmp_path):
    return build_scored_demo(tmp_path)


def test_read_side_returns_dataframes(demo_db):
    wh = ctxprior.open(demo_db)
    assert not wh.writable
    assert set(wh.datasets.list()["dataset"]) == {"demo"}
    assert wh.samples.list().loc[0, "sample_id"] == 1
    runs = wh.runs.list()
    assert runs.loc[0, "status"] == "done" and runs.loc[0, "kind"] == "persuasion"
    chi = wh.sql("SELECT entity, entity_kind, susceptibility FROM v_susceptibility WHERE run_id = ?", [1])
    assert isinstance(chi, pd.DataFrame) and len(chi) == 2 * 4 * 4  # relations x entities x query forms
    assert (chi["susceptibility"] >= 0).all()
    tbl = wh.arrow("SELECT * FROM v_persuasion LIMIT 3")
    assert tbl.num_rows == 3
    assert set(wh.analyses.results([1])["analysis"]) >= {"relevance", "assertive", "negation", "familiarity"}
    assert "warehouse" in wh.info()


def test_read_only_unless_asked(demo_db):
    wh = ctxprior.open(demo_db)
    with pytest.raises(UserError, match="opened read-only"):
        wh.samples.draw("demo", entities=2, contexts=6)
    with pytest.raises(UserError, match="read-only"):
        wh.sql("DELETE FROM run")
    assert wh.runs.list().shape[0] == 1


def test_sql_reads_files_only_when_allowed(demo_db, tmp_path):
    """Issue 19 D1: Warehouse.sql / arrow refuse EXPLAIN ANALYZE of a COPY and read no file but the
    warehouse unless allow_read names it; the warehouse stays byte for byte unchanged."""
    import hashlib

    before = hashlib.sha256(open(demo_db, "rb").read()).hexdigest()
    wh = ctxprior.open(demo_db)
    with pytest.raises(UserError, match="read-only: EXPLAIN of a COPY statement is refused"):
        wh.sql(f"EXPLAIN ANALYZE COPY (SELECT 'x' AS x) TO '{demo_db}' (FORMAT csv)")
    f = tmp_path / "n.csv"
    f.write_text("n\n3\n")
    with pytest.raises(UserError, match="allow_read"):
        wh.sql(f"SELECT * FROM read_csv('{f}')")
    assert wh.sql(f"SELECT n FROM read_csv('{f}')", allow_read=[tmp_path]).n.tolist() == [3]
    assert wh.arrow(f"SELECT n FROM read_csv('{f}')", allow_read=str(f)).num_rows == 1
    assert wh.sql("SET VARIABLE k = 2; SELECT getvariable('k') AS k").k.tolist() == [2]
    assert hashlib.sha256(open(demo_db, "rb").read()).hexdigest() == before


@pytest.mark.quick
def test_missing_warehouse_is_one_clear_error(tmp_path):
    with pytest.raises(UserError, match="no warehouse at"):
        ctxprior.open(tmp_path / "nope.duckdb")
    wh = ctxprior.open(tmp_path / "new.duckdb", write=True)  # created
    assert wh.datasets.list().empty


def test_a_notebook_does_not_hold_the_file(demo_db):
    """Between calls the API holds no connection, so a writer in another process gets in."""
    import subprocess
    import sys

    wh = ctxprior.open(demo_db)
    wh.sql("SELECT 1")
    code = (
        "from ctxprior.storage import open_store\n"
        f"with open_store({str(demo_db)!r}) as w:\n"
        "    with w.transaction(): w.execute(\"INSERT INTO meta VALUES ('probe', 'x')\")\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert wh.sql("SELECT value FROM meta WHERE key = 'probe'").value[0] == "x"


def test_score_analyze_and_covariates_from_python(demo_db):
    wh = ctxprior.open(demo_db, write=True)
    sid = wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=12)
    run = wh.runs.score(sid, model=tiny_model_folder(), query_types=["open"], progress=False, log=None)
    assert run.status == "done" and run.prompts == 2 * 2 * 7 and run.id == 2
    res = wh.analyses.run([run.id], only=["relevance"], permutations=50, log=None)
    assert set(res["analysis"]) == {"relevance"} and set(res["run_id"]) == {2}
    names = wh.sql("SELECT DISTINCT entity FROM v_susceptibility WHERE run_id = 1 ORDER BY 1").entity
    freq = pd.DataFrame({"entity": names, "freq": range(len(names))})
    out = wh.covariates.add(freq, on=["entity"], name="freq")
    assert out["view"] == "cov_freq" and out["n_matched"] == len(names) == 8
    again = wh.covariates.add(freq, on=["entity"], name="freq")  # same content: unchanged
    assert again["unchanged"]
    joined = wh.sql(
        "SELECT s.entity, c.freq FROM v_susceptibility s JOIN cov_freq c USING (dataset, relation, entity) "
        "WHERE s.run_id = 1"
    )
    assert len(joined) == 2 * 4 * 4 and joined["freq"].notna().all()
    assert "freq" in set(wh.covariates.list()["name"])


def test_quick_accepts_a_loaded_transformers_model():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_model_folder()
    q = "Q: What is the capital of {entity}?\nA:"
    ctx = ["The capital of France is Rome.\n", "The capital of Spain is Madrid.\n"]
    by_name = ctxprior.quick(folder, q, ["France", "Zorblaxia"], ctx)
    model, tok = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    loaded = ctxprior.quick(model, q, ["France", "Zorblaxia"], ctx, tokenizer=tok)
    assert list(by_name.columns) == ["entity", "context", "persuasion", "susceptibility"]
    assert len(by_name) == 4
    pd.testing.assert_frame_equal(by_name, loaded, atol=1e-6, check_exact=False)
    chi = by_name.groupby("entity", sort=False)["susceptibility"].first()
    psi = by_name.groupby("entity", sort=False)["persuasion"].mean()
    assert ((chi - psi).abs() < 1e-6).all()  # chi is the mean psi over the contexts (uniform p(c))
    with pytest.raises(UserError, match="tokenizer"):
        ctxprior.quick(model, q, ["France"], ctx)
    with pytest.raises(UserError, match=r"\{entity\}"):
        ctxprior.quick(folder, "no placeholder", ["France"], ctx)


@pytest.mark.slow
def test_docstring_examples_run(demo_db, monkeypatch):
    """Every example in the API's docstrings runs (against the small scored demo warehouse)."""
    import ctxprior.api as api

    monkeypatch.chdir(demo_db.parent)
    os.environ.pop("CTXPRIOR_DB", None)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"ctxprior": ctxprior, "wh": ctxprior.open("demo.duckdb")}
    modules = [api] + [
        importlib.import_module(f"ctxprior.api.{m.name}") for m in pkgutil.iter_modules(api.__path__)
    ]
    tests = [t for m in modules for t in finder.find(m, globs=globs) if t.examples]
    assert len(tests) >= 4
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed (see output above)"
