"""DynamicQA with the real SmolLM2: score-dynamic on one fact per partition, analyses, and the
first-token KL / CP comparison on the same facts."""

from __future__ import annotations

import click
import pytest
from dynamicqa_helpers import dq_src, subset  # noqa: F401 (dq_src: a fixture, the fixture files or the real ones)

from ctxprior.sqlfiles import read_sql
from ctxprior.storage import open_store


@pytest.mark.slow
def test_score_dynamic_smollm_cli(dq_src, tmp_path, run_cli, db_path):
    d = subset(dq_src, tmp_path / "dq", 2)
    assert run_cli("ingest", "dynamicqa", d).exit_code == 0
    res = run_cli(
        "score-dynamic", "--limit", "1", "--samples", "2", "--max-new-tokens", "4", "--threshold", "0.89"
    )
    assert res.exit_code == 0, res.output
    rid = int(res.output.strip().splitlines()[-1])
    with open_store(db_path, read_only=True) as store:
        run = store.query(
            "SELECT kind, status, model, model_revision, config_json FROM run WHERE run_id = ?", [rid]
        )[0]
        assert run[:3] == ("dynamic", "done", "smollm2-135m") and run[3].startswith("sha256:")
        assert '"chat_template_applied": true' in run[4] and '"threshold": 0.89' in run[4]
        rows = store.df(
            "SELECT * FROM v_dynamicqa_score WHERE run_id = ? ORDER BY partition, condition", [rid]
        )
        assert len(rows) == 9 and set(rows.partition) == {"static", "temporal", "disputable"}
        ctx = rows[rows.condition != "none"]
        assert (ctx.cp >= 0).all() and rows.semantic_entropy.ge(0).all()
        assert (
            store.scalar("SELECT count(*) FROM dynamicqa_generation WHERE run_id = ? AND text = ''", [rid])
            < 27
        )
    res = run_cli("analyze-dynamic", "--run", rid)
    assert res.exit_code == 0 and "disputable" in res.output

    from ctxprior.cli import cli

    assert "score" in cli.list_commands(
        click.Context(cli)
    )  # the persuasion scorer, compared with CP on the same facts
    with open_store(db_path, read_only=True) as store:
        sid = store.scalar("SELECT sample_id FROM run WHERE run_id = ?", [rid])
    res = run_cli(  # the scores only: no outcome labels (their generation is most of a score's time)
        "score",
        "--sample",
        sid,
        "--estimator",
        "first-token",
        "--query-types",
        "open",
        "--outcome-rule",
        "none",
    )
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        cmp = store.df(read_sql("ctxprior.dynamicqa", "sql/compare_scores.sql"), [sid, rid])
    assert len(cmp) == 6
    assert cmp.first_token_kl.notna().all() and cmp.cp.notna().all()
    assert (cmp.first_token_kl >= -1e-9).all()
