"""`ctxprior analyze` on synthetic warehouses with planted effects (tests/analysis_fixtures.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import ANALYZE_K as K
from analysis_fixtures import (  # noqa: F401  # noqa: F401 (fixture)
    add_dynamic,
    add_friend_enemy,
    add_gender,
    analyzed_warehouse,
    clone_run,
    make_yago_like,
)

from ctxprior.analyses import comparisons, registry, selection
from ctxprior.analyses import results as analysis_results
from ctxprior.analyses.driver import analyze
from ctxprior.analyses.selection import query_file
from ctxprior.analyses.summary import summary_lines
from ctxprior.sqlfiles import read_sql
from ctxprior.storage import open_store


@pytest.fixture
def wh(analyzed_warehouse):
    w = open_store(analyzed_warehouse, read_only=True)
    yield w
    w.close()


def results(wh, **where) -> pd.DataFrame:
    df = wh.df("SELECT * FROM analysis_result")
    for k, v in where.items():
        df = df[df[k] == v]
    return df


@pytest.mark.parametrize("name", ["relevance", "assertive", "familiarity", "answer-groups"])
def test_planted_effects_are_found_in_both_designs(wh, name):
    df = results(wh, analysis=name, run_id=1)
    ok = df[df["relation"].isin(["rel0", "rel1"])]
    assert set(ok["test"]) == {"independent", "paired" if name != "familiarity" else "entity_mean"}
    assert len(ok) == 8  # 2 relations x 2 query types x 2 designs
    assert ok["significant"].all(), ok[["relation", "query_type", "test", "p", "p_adj"]]
    assert (ok["effect_size"] > 0).all()
    assert (ok["k"] == K).all() and (ok["seed"] == 0).all()
    ind = ok[ok["test"] == "independent"]
    assert (ind["mean1"] > ind["mean2"]).all()


def test_no_planted_negation_effect_is_rarely_significant(wh):
    df = results(wh, analysis="negation", test="independent")
    ran = df[df["skip_reason"].isna()]
    assert len(ran) == 16 and ran["significant"].sum() <= 2
    assert (ran["alternative"] == "two-sided").all()


def test_units_and_sizes_follow_the_method(wh):
    rel = results(wh, analysis="relevance", run_id=1, relation="rel0", query_type="open")
    ind = rel[rel["test"] == "independent"].iloc[0]
    # 16 facts (8 real + 8 fake) x 2 open query forms, one relevant and one irrelevant mean each
    assert (ind["n1"], ind["n2"]) == (32, 32)
    assert "(entity, query form)" in ind["unit"]
    paired = rel[rel["test"] == "paired"].iloc[0]
    assert ((paired["n1"], paired["n2"]) == (16, 16) and paired["mean2"] is None) or np.isnan(paired["mean2"])


def test_nan_and_constant_relations_are_skipped_with_reasons(wh):
    df = results(wh, run_id=1)
    nan_rows = df[df["relation"] == "rel2"]
    comp = nan_rows[nan_rows["analysis"].isin(["relevance", "assertive", "negation", "familiarity"])]
    assert len(comp) and comp["skip_reason"].str.contains("NaN").all()
    assert comp["p"].isna().all() and comp["t"].isna().all() and comp["significant"].isna().all()
    const = df[(df["relation"] == "rel3") & df["analysis"].isin(["relevance", "familiarity"])]
    assert const["skip_reason"].str.contains("zero variance|equal").all()
    # BH ignores the skipped rows: rel0/rel1 adjusted among themselves only
    r = df[(df["analysis"] == "relevance") & (df["query_type"] == "open") & (df["test"] == "independent")]
    assert r["p_adj"].notna().sum() == 2


def test_seen_fakes_excluded_from_familiarity(wh):
    fam = results(wh, analysis="familiarity", run_id=1, relation="rel0", test="independent")
    assert (fam["n1"] == 14).all() and (fam["n2"] == 16).all()  # fake0_1 dropped (2 query forms)
    assert fam["note"].str.contains("excluded 1 fake").all()


def test_spearman_frequency_degree_and_mr(wh):
    for name in ("frequency", "degree", "mr"):
        df = results(wh, analysis=name, run_id=1, relation="(all)")
        assert set(df["query_type"]) == {"open", "closed"}
        assert (df["test"] == "spearman").all()
        assert (df["effect_size"] < 0).all(), name  # planted: familiar / memorized -> less susceptible
    freq = results(wh, analysis="frequency", run_id=1, relation="(all)")
    assert freq["note"].iloc[0] == "cov_cooccurrence.log_count"


def test_mr_bins_and_reliability_distributions(wh):
    d = wh.df("SELECT * FROM analysis_distribution WHERE analysis = 'mr' AND run_id = 1")
    assert sorted(d["bin"].unique()) == [0, 1, 2, 3, 4]
    for _, g in d.groupby("query_type"):
        assert g["share"].sum() + (
            g["n_nan"].sum() / max(1, g["n"].sum() + g["n_nan"].sum())
        ) == pytest.approx(1.0, abs=0.05)
    rel = wh.df("SELECT * FROM analysis_distribution WHERE analysis = 'reliability' AND run_id = 1")
    assert set(rel["series"]) == {
        "susceptibility across seeds",
        "persuasion across seeds",
        "susceptibility across query forms",
        "persuasion across query forms",
    }
    assert set(rel["run_ids"]) == {"1,3"}  # same model, seeds 11 and 12
    assert (rel["n_nan"] > 0).any() and rel["median"].notna().all()


def test_case_studies(wh):
    fe = results(wh, analysis="friend-enemy", test="independent")
    assert set(fe["query_type"]) == {"open_0", "open_1"}
    assert fe["significant"].all() and (fe["effect_size"] > 0).all()
    g = results(wh, analysis="gender", test="independent").set_index("query_type")
    assert bool(g.loc["feminine_swapped", "significant"])
    assert not g.drop("feminine_swapped")["significant"].any()
    assert "collection" in g["unit"].iloc[0]


def test_summary_lines(wh):
    lines = summary_lines(wh, [1])
    assert 6 <= len(lines) <= 14
    assert lines[0] == "runs: 1 (m-small)"
    assert any(l.startswith("relevant contexts more persuasive: 2/2 closed") for l in lines)
    assert any("Spearman rho(chi, memorization ratio)" in l for l in lines)


def test_sql_files_run_standalone_on_all_or_chosen_runs(wh):
    all_runs = wh.df(read_sql("ctxprior.analyses", "relevance.sql"))
    assert set(all_runs["run_id"]) == {1, 2, 3, 4}  # the case-study runs have no YAGO-like facts
    one = query_file(wh, "relevance.sql", [2])
    assert set(one["run_id"]) == {2}
    wh.con.execute("SET VARIABLE run_ids = [3]")
    assert set(wh.df("SELECT run_id FROM analysis_runs")["run_id"]) == {3}
    wh.con.execute("RESET VARIABLE run_ids")


def test_rerun_replaces_rows_and_is_deterministic(tmp_path):
    w = open_store(str(tmp_path / "w.duckdb"), threads=1)
    make_yago_like(w, n_relations=2, n_entities=5, generations=False)
    analyze(w, only=["relevance"], k=100, seed=3, log=lambda m: None)
    first = w.df("SELECT relation, query_type, test, p FROM analysis_result ORDER BY ALL")
    analyze(w, only=["relevance"], k=100, seed=3, log=lambda m: None)
    again = w.df("SELECT relation, query_type, test, p FROM analysis_result ORDER BY ALL")
    pd.testing.assert_frame_equal(first, again)
    logs = []
    counts = analyze(w, only=["answer-groups", "mr", "dynamicqa"], k=100, log=logs.append)
    assert counts["answer-groups"] == 0 and any("answer-groups: no data" in m for m in logs)
    assert any(m.startswith("mr: no memorization") for m in logs)
    w.close()


def test_cli_analyze_and_user_errors(tmp_path, run_cli):
    db = str(tmp_path / "c.duckdb")
    w = open_store(db)
    make_yago_like(w, n_relations=2, n_entities=5)
    w.close()
    r = run_cli("analyze", "--only", "relevance,familiarity", "--permutations", "100", db=db)
    assert r.exit_code == 0, r.output
    assert "relevant contexts more persuasive" in r.output
    for args, msg in (
        (["--run", "42"], "--run 42: no such run"),
        (["--only", "nope"], "--only nope"),
        (["--covariate", "cov_x.y"], "no table or view named cov_x"),
        (["--covariate", "fact"], "expected VIEW.COLUMN"),
        (["--alpha", "2"], "--alpha"),
    ):
        r = run_cli("analyze", *args, db=db)
        assert r.exit_code == 2, (args, r.output)
        assert msg in r.output


def test_no_runs_is_a_user_error(tmp_path, run_cli):
    r = run_cli("analyze", db=str(tmp_path / "empty.duckdb"))
    assert r.exit_code == 2 and "no finished runs" in r.output


@pytest.mark.parametrize("name", ["relevance", "assertive", "negation"])
def test_context_cells_give_the_same_units_as_the_readable_files(wh, name):
    cells = query_file(wh, "context_cells.sql")
    derived = comparisons.units_from_cells(cells, name)
    direct = query_file(wh, f"{name}.sql")
    cols = ["run_id", "query_form_id", "fact_id", "grp"]
    a = derived.sort_values(cols).reset_index(drop=True)
    b = direct.sort_values(cols).reset_index(drop=True)
    assert len(a) == len(b)
    assert (a[cols].to_numpy() == b[cols].to_numpy()).all()
    np.testing.assert_allclose(
        a["value"].to_numpy(float), b["value"].to_numpy(float), rtol=1e-12, equal_nan=True
    )


def test_tiny_warehouse_runs_every_analysis_without_crashing(tmp_path):
    # 1 relation, 2 + 2 entities, one with constant scores: tiny groups, Spearman with few points
    w = open_store(str(tmp_path / "tiny.duckdb"), threads=1)
    make_yago_like(w, n_relations=2, n_entities=2, constant_relation=1, rng_seed=5)
    analyze(w, k=50, log=lambda m: None)
    df = w.df("SELECT * FROM analysis_result")
    assert len(df) and df["skip_reason"].notna().any()
    ran = df[df["skip_reason"].isna()]
    assert ran["p"].between(0, 1).all()
    skipped = df[df["skip_reason"].notna()]
    assert skipped["p"].isna().all() and skipped["t"].isna().all()
    assert len(summary_lines(w)) >= 2
    # a pooled Spearman row that ran next to one that was skipped (object-typed p column): this
    # crashed _store on a real SmolLM2 run before the numeric columns were coerced
    rows = pd.DataFrame(
        [
            dict(
                run_id=1,
                analysis="mr",
                relation="(all)",
                relation_id=None,
                query_type=qt,
                test="spearman",
                unit="u",
                alternative="two-sided",
                n1=n,
                p=p,
                effect_size=r,
                skip_reason=why,
            )
            for qt, n, p, r, why in (("open", 3, 0.33, -0.87, None), ("closed", 8, None, None, "constant"))
        ]
    )
    analysis_results.save_results(w, [1], ["mr"], [rows], [], 50, 0, 0.05)
    got = w.df(
        "SELECT query_type, p, p_adj, significant FROM analysis_result WHERE analysis = 'mr' ORDER BY 1"
    )
    assert got["p"].isna().tolist() == [True, False] and got.loc[1, "p_adj"] == pytest.approx(0.33)
    w.close()


# -- which runs each analysis gets: --only x run kinds (issue 11, item 1) ------------------------
KINDS = ("none", "persuasion", "dynamic", "both")


@pytest.fixture(scope="module")
def kind_warehouses(tmp_path_factory):
    """One small warehouse per combination of run kinds (copied by each test that changes it)."""
    out = {}
    for kind in KINDS:
        path = str(tmp_path_factory.mktemp("kinds") / f"{kind}.duckdb")
        w = open_store(path)
        if kind in ("persuasion", "both"):
            make_yago_like(w, n_relations=2, n_entities=3, seeds=(11, 12))
            add_gender(w, n_names=3, n_queries=2, n_contexts=2)
            add_friend_enemy(w, n_pairs=6)
        if kind in ("dynamic", "both"):
            add_dynamic(w)
        w.close()
        out[kind] = path
    return out


def _expected(kind: str, only: str | None) -> tuple[int, str | None]:
    """(exit code, text in the output) of `analyze --only <only>` on a warehouse with these runs."""
    wants_dyn = only == "dynamicqa"
    if kind == "none":
        return 2, "no finished runs to analyze"
    if kind == "persuasion" and wants_dyn:
        return 2, "--only dynamicqa: no dynamic runs with scores"
    if kind == "dynamic" and only not in (None, "dynamicqa"):
        return 2, f"--only {only}: no finished persuasion runs (only dynamic runs"
    if kind == "dynamic":
        return 0, "DynamicQA run"
    if kind == "persuasion" and only is None:
        return 0, "skipped dynamicqa: no dynamic runs with scores"
    return 0, None


@pytest.mark.parametrize("only", [None, *registry.names()])
@pytest.mark.parametrize("kind", KINDS)
def test_only_and_run_kinds(kind_warehouses, tmp_path, run_cli, kind, only):
    import shutil

    db = str(tmp_path / "w.duckdb")
    shutil.copy(kind_warehouses[kind], db)
    r = run_cli("analyze", "--permutations", "20", *(["--only", only] if only else []), db=db)
    code, text = _expected(kind, only)
    assert r.exit_code == code, r.output
    if text:
        assert text in r.output
    w = open_store(db, read_only=True)
    stored = w.scalar(
        "SELECT (SELECT count(*) FROM analysis_result) + (SELECT count(*) FROM analysis_distribution) "
        "+ (SELECT count(*) FROM dynamicqa_summary)"
    )
    w.close()
    if code == 2:
        assert r.output.count("\n") == 1 and r.output.startswith("Error: "), r.output  # one line
        assert stored == 0  # nothing written
        return
    assert "Error" not in r.output
    assert r.output.splitlines()[0].startswith("stored ")
    if only in (None, "dynamicqa") and kind in ("dynamic", "both"):
        assert "DynamicQA run" in r.output
    if only == "dynamicqa":
        assert "relevant contexts" not in r.output  # the summary covers what was asked
    if kind == "both" and only is None:
        assert "relevant contexts more persuasive" in r.output and "DynamicQA run" in r.output


def test_run_option_splits_runs_by_kind(kind_warehouses, tmp_path, run_cli):
    import shutil

    db = str(tmp_path / "w.duckdb")
    shutil.copy(kind_warehouses["both"], db)
    w = open_store(db, read_only=True)
    dyn = w.scalar("SELECT run_id FROM run WHERE kind = 'dynamic'")
    w.close()
    r = run_cli("analyze", "--run", dyn, "--permutations", "20", db=db)  # default analyses, a dynamic run
    assert r.exit_code == 0, r.output
    assert f"runs: dynamic {dyn} (m-dyn)" in r.output and "skipped relevance" in r.output
    r = run_cli("analyze", "--run", dyn, "--only", "relevance", db=db)
    assert r.exit_code == 2 and "--only relevance: no persuasion runs among the given --run" in r.output
    r = run_cli("analyze", "--run", 1, "--only", "dynamicqa", db=db)
    assert r.exit_code == 2 and "--only dynamicqa: no dynamic runs among the given --run" in r.output
    r = run_cli(
        "analyze", "--run", 1, "--run", dyn, "--only", "relevance,dynamicqa", "--permutations", "20", db=db
    )
    assert r.exit_code == 0, r.output
    assert f"runs: 1 (m-small); dynamic {dyn} (m-dyn)" in r.output
    assert "relevant contexts more persuasive" in r.output and f"DynamicQA run {dyn}" in r.output


# -- reliability: seed replicates only (issue 11, item 8) ----------------------------------------
def _replicate_base(tmp_path):
    """Runs 1 (seed 11) and 2 (seed 12) of one model: the replicate pair every case starts from."""
    w = open_store(str(tmp_path / "rep.duckdb"), threads=1)
    make_yago_like(w, n_relations=2, n_entities=3, seeds=(11, 12), generations=False)
    return w


def _reliability(w, **kw):
    analyze(w, only=["reliability"], k=10, log=kw.pop("log", lambda m: None), **kw)
    reps = w.df("SELECT group_run_id, run_id, seed, counted, reason FROM analysis_replicate ORDER BY run_id")
    dist = w.df("SELECT * FROM analysis_distribution WHERE analysis = 'reliability'")
    return reps, dist


NOT_REPLICATES = {  # a third run (sample seed 13) that differs from runs 1 and 2 in one more thing
    "dtype": dict(run=dict(dtype="bfloat16")),
    "quantization": dict(run=dict(quantization="8bit")),
    "model revision": dict(run=dict(model_revision="sha256:other-weights")),
    "estimator": dict(run=dict(estimator="answer-set")),
    "estimator options": dict(run=dict(config_json='{"identity": {"score": {"prior_topk": 50}}}')),
    "entities": dict(sample=dict(n_entities=7)),
    "contexts": dict(sample=dict(n_contexts=7)),
    "context types": dict(sample=dict(context_types="base,assertive")),
    "design": dict(sample=dict(design="all")),
    "dataset": dict(sample=dict(dataset_id=99)),
    "answer sampling": dict(sample=dict(params_json='{"answers": "uniform over the pool"}')),
}


@pytest.mark.parametrize("case", NOT_REPLICATES)
def test_reliability_pools_only_seed_replicates(tmp_path, case):
    w = _replicate_base(tmp_path)
    change = NOT_REPLICATES[case]
    third = clone_run(w, 2, sample={"seed": 13, **change.get("sample", {})}, **change.get("run", {}))
    logs = []
    reps, dist = _reliability(w, log=logs.append)
    assert set(dist["run_ids"]) == {"1,2", str(third)}  # before the fix: {"1,2,3"}
    assert reps[["group_run_id", "run_id", "seed", "counted"]].values.tolist() == [
        [1, 1, 11, True],
        [1, 2, 12, True],
        [third, third, 13, True],
    ]
    seeds = dist[dist["run_ids"] == str(third)]
    assert not seeds["series"].str.contains("across seeds").any()  # one seed: no across-seed rows
    assert any("form 2 replicate groups (1,2 | 3)" in m for m in logs) or case == "dataset"


def test_shard_size_and_the_run_seed_do_not_split_replicates(tmp_path):
    w = _replicate_base(tmp_path)
    w.execute(
        """UPDATE run SET config_json = '{"identity": {"score": {"prior_topk": 10, "shard_size": 16}}}'"""
    )
    clone_run(
        w,
        2,
        sample={"seed": 13, "params_json": '{"seed": 13}'},
        seed=5,
        config_json='{"identity": {"score": {"prior_topk": 10, "shard_size": 4}}, "device": "cuda"}',
    )
    w.execute("""UPDATE sample SET params_json = '{"seed": ' || seed || '}'""")
    reps, dist = _reliability(w)
    assert set(dist["run_ids"]) == {"1,2,3"} and reps["counted"].all()


@pytest.mark.parametrize("status", ["done", "running"])
def test_same_seed_runs_are_not_replicates(tmp_path, status):
    w = _replicate_base(tmp_path)
    again = clone_run(w, 2, status=status)  # run 3: the same sample (seed 12) scored again
    logs = []
    analyze(w, run_ids=[1, 2, again], only=["reliability"], k=10, log=logs.append)
    reps = w.df("SELECT group_run_id, run_id, seed, counted, reason FROM analysis_replicate ORDER BY run_id")
    dist = w.df("SELECT * FROM analysis_distribution WHERE analysis = 'reliability'")
    counted = 3 if status == "done" else 2  # the latest finished run counts
    dropped = 2 if counted == 3 else 3
    assert set(dist["run_ids"]) == {f"1,{counted}"}  # before the fix: "1,2,3" with 3 values per item
    row = reps.set_index("run_id").loc[dropped]
    assert not row["counted"] and f"run {counted} counts" in row["reason"] and row["group_run_id"] == 1
    assert any(f"run {dropped} has the same sample seed 12 as run {counted}" in m for m in logs)
    # the across-seed variance is that of the two counted runs (naive reference)
    chi = w.df(f"""SELECT s.run_id, q.query_type, s.query_form_id, s.fact_id, s.susceptibility
                   FROM susceptibility s JOIN query_form q USING (query_form_id) WHERE run_id IN (1, {counted})""")
    var = chi.groupby(["query_type", "query_form_id", "fact_id"])["susceptibility"].var(ddof=1)
    for qt, v in var.groupby(level="query_type"):
        got = dist[(dist["series"] == "susceptibility across seeds") & (dist["query_type"] == qt)].iloc[0]
        assert got["n"] == len(v)
        assert got["median"] == pytest.approx(float(np.median(v)), rel=1e-9)
        assert got["max"] == pytest.approx(float(v.max()), rel=1e-9)


def test_replicate_rows_are_replaced_on_rerun(tmp_path):
    w = _replicate_base(tmp_path)
    _reliability(w)
    reps, _ = _reliability(w)
    assert len(reps) == 2
    analyze(w, only=["relevance"], k=10, log=lambda m: None)  # another analysis leaves them alone
    assert w.scalar("SELECT count(*) FROM analysis_replicate") == 2


# -- gender: ψ against a mixture of collections is labelled (issue 11, item 9) -------------------
@pytest.mark.parametrize("split", [False, True])
def test_gender_says_when_psi_is_against_a_mixture(tmp_path, split):
    w = open_store(str(tmp_path / "g.duckdb"), threads=1)
    runs = add_gender(w, split=split)
    runs = runs if split else [runs]
    analyze(w, only=["gender"], k=50, log=lambda m: None)
    g = w.df("SELECT run_id, query_type, test, unit, note FROM analysis_result WHERE analysis = 'gender'")
    assert set(g["run_id"]) == set(runs) and len(g) == 8  # 4 collections x 2 designs
    line = next(l for l in summary_lines(w) if l.startswith("masculine vs feminine"))
    if split:  # one collection per sample: the values are χ of that collection
        assert g["unit"].str.endswith("(= chi of the collection: the run's sample holds only it)").all()
        assert g["note"].isna().all() and "mixture" not in line
    else:
        assert g["unit"].str.contains("; psi against the mixture of 4 collections").all()
        assert g["note"].str.startswith("psi measured against the mixture of 4 collections").all()
        assert g["note"].str.contains("not the susceptibility chi of a single collection").all()
        assert line.endswith("; mean psi against the mixture of 4 collections, not chi of one collection")
    n_coll = query_file(w, "gender.sql")["n_collections"]
    assert set(n_coll) == ({1} if split else {4})


# -- precision: a note when the compared runs differ in dtype (issue 11, part) -------------------
def test_precision_note_text(tmp_path):
    w = open_store(str(tmp_path / "p.duckdb"))
    make_yago_like(w, n_relations=2, n_entities=3, models=("a", "b", "c"), generations=False)
    note = selection.precision_note
    w.execute("UPDATE run SET dtype = 'float32', quantization = 'none'")
    assert note(w, [1, 2, 3]) is None
    w.execute("UPDATE run SET dtype = 'bfloat16' WHERE run_id = 3")
    assert note(w, [1, 3]) == (
        "note: runs 1 (float32) and 3 (bfloat16) differ in dtype; ψ of irrelevant contexts "
        "is small next to bfloat16 rounding, see docs/scoring.md#precision"
    )
    assert note(w, [1, 2, 3]).startswith("note: runs 1, 2 (float32) and 3 (bfloat16) differ in dtype;")
    w.execute("UPDATE run SET dtype = 'float16', quantization = '8bit' WHERE run_id = 2")
    assert note(w, [1, 2, 3]).startswith(
        "note: runs 1 (float32), 2 (float16, 8bit) and 3 (bfloat16) differ in "
        "dtype and quantization; ψ of irrelevant contexts is small next to 8bit"
    )
    assert note(w, [1]) is None and note(w, []) is None


def test_analyze_prints_the_precision_note(tmp_path, run_cli):
    db = str(tmp_path / "p.duckdb")
    w = open_store(db)
    make_yago_like(w, n_relations=2, n_entities=3, models=("m-small", "m-big"), generations=False)
    w.execute("UPDATE run SET dtype = 'float32'")
    w.close()
    r = run_cli("analyze", "--only", "relevance", "--permutations", "20", db=db)
    assert r.exit_code == 0 and "note:" not in r.output
    w = open_store(db)
    w.execute("UPDATE run SET dtype = 'bfloat16' WHERE run_id = 2")
    w.close()
    r = run_cli("analyze", "--only", "relevance", "--permutations", "20", "--quiet", db=db)
    assert r.exit_code == 0, r.output
    notes = [l for l in r.output.splitlines() if l.startswith("note:")]
    assert notes == [
        "note: runs 1 (float32) and 2 (bfloat16) differ in dtype; ψ of irrelevant contexts is small "
        "next to bfloat16 rounding, see docs/scoring.md#precision"
    ]
    r = run_cli("analyze", "--run", 1, "--only", "relevance", "--permutations", "20", db=db)
    assert "note:" not in r.output  # one run: nothing compared
    w = open_store(db)
    add_dynamic(w, dtype="float32")
    w.close()
    r = run_cli("analyze", "--only", "dynamicqa", db=db)
    assert r.exit_code == 0 and "note:" not in r.output  # the persuasion runs are not compared here


def _stored(path) -> list:
    w = open_store(path, read_only=True)
    try:
        rows = []
        for t in ("analysis_result", "analysis_distribution", "analysis_replicate"):
            cols = [c for c, *_ in w.query(f"DESCRIBE {t}") if c != "created_at"]
            rows.append(w.query(f"SELECT {', '.join(cols)} FROM {t} ORDER BY ALL"))
        return rows
    finally:
        w.close()


def test_reanalysis_is_bit_for_bit_reproducible(analyzed_warehouse, tmp_path):
    """Analyzing the same scores again stores the same bits (DuckDB's parallel sums add partial
    results in thread order; analyze reads on one thread: the store is opened with threads=1, since
    the sandbox locks DuckDB's settings), and a store of more threads is refused, not changed."""
    import shutil

    first = _stored(analyzed_warehouse)
    for i in range(3):
        path = tmp_path / f"again{i}.duckdb"
        shutil.copy(analyzed_warehouse, path)
        w = open_store(str(path), threads=1)
        analyze(w, k=K, log=lambda m: None)
        w.close()
        assert _stored(str(path)) == first
    w = open_store(str(path), threads=2)
    try:
        with pytest.raises(RuntimeError, match="threads=1"), w.one_thread():
            pass
    finally:
        w.close()


def test_analyze_prints_the_dynamicqa_tables_on_stdout(kind_warehouses, tmp_path, run_cli):
    """`ctxprior analyze > results.txt` keeps DynamicQA Tables 1-3 (results on stdout, progress on stderr)."""
    import shutil

    db = str(tmp_path / "w.duckdb")
    shutil.copy(kind_warehouses["dynamic"], db)
    r = run_cli("analyze", "--only", "dynamicqa", db=db)
    assert r.exit_code == 0, r.output
    assert "Tables 1-2: partition" in r.stdout and "static" in r.stdout, r.stdout
    assert "Tables 1-2" not in r.stderr, r.stderr


def test_mr_counts_knowledge_conflicts_only(analyzed_warehouse, tmp_path):
    """App. D: MR is over (query, context) pairs whose context answer disagrees with the original
    answer; a context stating the true answer is left out (n_agreeing), and the ratio over every
    context stays available as memorization_ratio_all."""
    import shutil

    db = tmp_path / "mr.duckdb"
    shutil.copy(analyzed_warehouse, db)
    with open_store(str(db)) as w:
        run, qf, fact, answer = w.query(
            "SELECT g.run_id, g.query_form_id, g.fact_id, f.answer_id FROM generation g JOIN fact f USING (fact_id) "
            "WHERE f.answer_id IS NOT NULL ORDER BY 1, 2, 3 LIMIT 1"
        )[0]
        ctxs = [
            r[0]
            for r in w.query(
                "SELECT context_id FROM generation WHERE run_id = ? AND query_form_id = ? "
                "AND fact_id = ? ORDER BY context_id",
                [run, qf, fact],
            )
        ]
        agree = ctxs[0]
        w.execute("UPDATE context SET answer_id = ? WHERE context_id = ?", [answer, agree])
        w.execute(
            "UPDATE context SET answer_id = (SELECT min(answer_id) FROM answer WHERE answer_id <> ?) "
            "WHERE context_id IN (SELECT unnest(?::BIGINT[]))",
            [answer, ctxs[1:]],
        )
        w.execute(
            "UPDATE generation SET label = CASE WHEN context_id = ? THEN 'ORIGINAL' ELSE 'CONTEXT' END "
            "WHERE run_id = ? AND query_form_id = ? AND fact_id = ?",
            [agree, run, qf, fact],
        )
        m = w.df(
            "SELECT * FROM v_memorization WHERE run_id = ? AND query_form_id = ? AND fact_id = ?",
            [run, qf, fact],
        ).iloc[0]
    assert m["n_agreeing"] == 1 and m["n_original"] == 0 and m["n_context"] == len(ctxs) - 1
    assert m["memorization_ratio"] == 0.0
    assert m["memorization_ratio_all"] == pytest.approx(1 / len(ctxs))
