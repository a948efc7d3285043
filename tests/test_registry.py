"""Issue 22 item 4: an analysis is one file (a `.sql` front matter or a `steps/` module) and an
estimator is one `ESTIMATORS` entry; the CLI choices, the dispatch, the summary and the report
read the registries."""

from __future__ import annotations

import shutil
from importlib import resources

import pytest
from analysis_fixtures import analyzed_warehouse  # noqa: F401 (fixture)

from ctxprior.analyses import registry
from ctxprior.analyses.driver import analyze, parse_only
from ctxprior.analyses.summary import summary_lines
from ctxprior.errors import UserError
from ctxprior.storage import open_store

RUN_ORDER = (
    "relevance",
    "assertive",
    "negation",
    "familiarity",
    "known",
    "answer-groups",
    "mr",
    "reliability",
    "frequency",
    "degree",
    "covariate",
    "friend-enemy",
    "gender",
    "dynamicqa",
)

NEW_ANALYSIS = """-- analysis: negation-vs-assertive
-- order: 125
-- help: negation vs assertive contexts (a test's analysis)
-- compare: negation != assertive
-- design: paired
-- unit: mean psi per (entity, query form, context type)
-- summary: negation differs from assertive
-- Any comment below the block is the query's own.
SELECT p.run_id, f.relation_id, r.short_name AS relation, q.query_type,
       p.query_form_id, q.name AS query_form, p.fact_id, f.entity_id, e.name AS entity,
       c.context_type AS grp, avg(p.persuasion) AS value, count(*) AS n_rows,
       count(*) FILTER (WHERE isnan(p.persuasion)) AS n_nan
FROM persuasion p
JOIN fact f ON f.fact_id = p.fact_id
JOIN relation r ON r.relation_id = f.relation_id
JOIN entity e ON e.entity_id = f.entity_id
JOIN query_form q ON q.query_form_id = p.query_form_id
JOIN context c ON c.context_id = p.context_id
WHERE p.run_id IN (SELECT run_id FROM analysis_runs) AND c.context_type IN ('negation', 'assertive')
GROUP BY ALL
"""


def test_every_analysis_is_declared_once_in_run_order():
    orders = [registry.get(n).order for n in registry.names()]
    assert orders == sorted(orders) and len(set(registry.names())) == len(orders)
    assert set(RUN_ORDER) <= set(registry.names())  # the paper's, at least
    assert "covariate" not in registry.default_names() and "known" not in registry.default_names()
    assert registry.default_names() == tuple(n for n, a in registry.analyses().items() if a.default)
    declared = [
        f.name
        for f in resources.files("ctxprior.analyses").iterdir()
        if f.name.endswith(".sql") and "analysis" in registry.front_matter(f.read_text())
    ]
    assert sorted(a.comparison.sql for a in registry.analyses().values() if a.comparison) == sorted(declared)
    for a in registry.analyses().values():
        assert a.help and (a.step is None) == (a.comparison is not None), a.name
        assert a.kind == ("dynamic" if a.name == "dynamicqa" else "persuasion")
        if a.comparison:
            assert a.summary and a.report_title and a.report_text, a.name


def test_front_matter_is_the_leading_key_lines_only():
    meta = registry.front_matter(
        "-- analysis: x\n-- report: one\n-- Note: not a key\n-- unit: after the block\nSELECT 1"
    )
    assert meta == {"analysis": "x", "report": "one"}
    meta = registry.front_matter("-- analysis: x\n-- report: one\n-- report: two\nSELECT 1")
    assert meta["report"] == "one two"
    cmp = registry.get("friend-enemy").comparison
    assert (cmp.label1, cmp.label2, cmp.alternative, cmp.alt_design) == (
        "friend",
        "enemy",
        "greater",
        "entity_mean",
    )
    assert cmp.stratum == "query_form" and cmp.family == ("run_id", "test")


def test_only_choices_and_help_come_from_the_registry(run_cli, db_path):
    assert parse_only(None) == list(registry.default_names())
    names = registry.names()
    with pytest.raises(UserError, match="--only nope: use " + ", ".join(names[:-1]) + " or " + names[-1]):
        parse_only("relevance,nope")
    out = "".join(run_cli("analyze", "--help", db=db_path).output.split())  # click breaks long words
    assert "Choices:" + ",".join(registry.names()) + ".Default:allbutcovariate" in out


@pytest.fixture
def with_new_analysis(tmp_path, monkeypatch):
    """The registry with one more folder holding one new .sql file, and nothing else changed."""
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "negation_vs_assertive.sql").write_text(NEW_ANALYSIS)
    monkeypatch.setattr(registry, "ANALYSES", registry.ANALYSES.copy())
    for name, analysis in registry.declared_in(folder).items():
        registry.ANALYSES.add(name, analysis)


def test_a_new_analysis_is_one_sql_file(with_new_analysis, analyzed_warehouse, tmp_path, run_cli):
    assert registry.names()[-2:] == ("negation-vs-assertive", "dynamicqa")
    assert ",gender,negation-vs-assertive,dynamicqa." in "".join(run_cli("analyze", "--help").output.split())
    assert "negation-vs-assertive" in registry.default_names()
    assert parse_only("negation-vs-assertive") == ["negation-vs-assertive"]
    db = str(tmp_path / "w.duckdb")
    shutil.copy(analyzed_warehouse, db)
    store = open_store(db, threads=1)
    try:
        counts = analyze(store, [1], only=["negation-vs-assertive"], k=50, log=lambda m: None)
        assert counts["negation-vs-assertive"] > 0
        rows = store.df("SELECT * FROM analysis_result WHERE analysis = 'negation-vs-assertive'")
        assert set(rows["test"]) == {"independent", "paired"} and set(rows["alternative"]) == {"two-sided"}
        assert rows["p_adj"].notna().any()
        lines = summary_lines(store, [1])
        assert any(line.startswith("negation differs from assertive: ") for line in lines), lines
        # no report-title / report keys: the report's section is titled by its name, its help the text
        from ctxprior.analyses.report import write_report

        write_report(store, str(tmp_path / "r.html"), [1])
        page = (tmp_path / "r.html").read_text()
        assert "<h2>negation-vs-assertive</h2>" in page
        assert "<p>negation vs assertive contexts (a test&#x27;s analysis)</p>" in page
    finally:
        store.close()


def test_a_new_estimator_is_one_entry(monkeypatch, db_path):
    from scoring_helpers import _demo, tiny

    from ctxprior.scoring import estimators
    from ctxprior.scoring.options import ScoreRequest
    from ctxprior.scoring.runs.score import score_sample

    base = estimators.ESTIMATORS["first-token"]
    monkeypatch.setattr(estimators, "ESTIMATORS", estimators.ESTIMATORS.copy())
    estimators.register_estimator(
        estimators.Estimator(
            "first-token-again", base.run, per_layer=True, vocab_table=True, help="the same again"
        )
    )
    # the CLI's choices and help come from the same entry
    from click.testing import CliRunner

    from ctxprior.cli import cli

    shown = CliRunner().invoke(cli, ["score", "--help"]).output
    assert "first-token-again: the same again." in " ".join(shown.split())
    bad = CliRunner().invoke(cli, ["--db", str(db_path), "score", "--estimator", "nope"])
    *rest, last = estimators.score_estimators()
    assert last == "first-token-again" and "sampled" not in rest  # not a choice of score
    assert bad.exit_code == 2 and f"use auto, {', '.join(rest)} or {last}" in bad.output  # auto: AUTO_HELP
    sid = _demo(db_path, entities=2, contexts=6)
    with open_store(db_path) as store:
        for est in ("first-token", "first-token-again"):
            score_sample(
                store,
                ScoreRequest.of(sample=sid, model="tiny", estimator=est, per_layer="chi", shard_size=2),
                lm=tiny(),
                progress=False,
                log=lambda m: None,
            )
        assert store.query("SELECT run_id, estimator FROM run ORDER BY 1") == [
            (1, "first-token"),
            (2, "first-token-again"),
        ]
        rows = [
            store.query(
                "SELECT query_form_id, fact_id, susceptibility FROM susceptibility_layer "
                "WHERE run_id = ? ORDER BY ALL",
                [r],
            )
            for r in (1, 2)
        ]
        assert rows[0] and rows[0] == rows[1]
        with pytest.raises(
            UserError, match="--per-layer: needs --estimator first-token or first-token-again"
        ):
            score_sample(
                store,
                ScoreRequest.of(
                    sample=sid, model="tiny", estimator="answer-set", per_layer="chi", shard_size=2
                ),
                lm=tiny(),
                progress=False,
                log=lambda m: None,
            )
