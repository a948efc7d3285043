"""One run life cycle for every kind of run (issue 22): a DynamicQA run (`score-dynamic`) is listed by
`ctxprior runs`, resumed by `ctxprior runs resume R` after a kill (ending with the rows of an
uninterrupted run) and stopped by `ctxprior runs cancel R` from another process, like a
persuasion run. The scoring process is the real CLI in a forked child (tests/scale_helpers.py);
the model is a tiny random llama with MiniLM's vocabulary, the facts 3 per partition of the
made-up DynamicQA files."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixtures.make_dynamicqa import make_dynamicqa
from scale_helpers import copy_db, run_cli_child, start_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

DQ_TABLES = {
    "dynamicqa_generation": "fact_id, condition, sample_index, text, raw_text, logprob_sum, n_tokens, "
    "cluster, dist_topk_mass, matches_gold, matches_counter",
    "dynamicqa_token_dist": "fact_id, condition, sample_index, rank, token_id, prob",
    "dynamicqa_score": "* EXCLUDE (run_id)",
    "dynamicqa_fact_done": "fact_id",
}


def _cli(*args):
    from ctxprior.cli import cli

    return CliRunner().invoke(cli, [*map(str, args)], catch_exceptions=False)


def _tiny_folder(dest: Path) -> str:
    from scoring_helpers import tiny_model
    from transformers import AutoTokenizer

    from ctxprior.dynamicqa import semantic as sem

    tok = AutoTokenizer.from_pretrained(sem.resolve_encoder("minilm"))
    tok.eos_token = "[SEP]"
    lm = tiny_model(tok, seed=0, hidden=32)
    lm.model.save_pretrained(str(dest))
    tok.save_pretrained(str(dest))
    return str(dest)


def _rows(db: str, run_id: int = 1) -> dict:
    from ctxprior.storage import open_store

    with open_store(db, read_only=True, wait=30) as store:
        out = {
            t: store.query(f"SELECT {cols} FROM {t} WHERE run_id = ? ORDER BY ALL", [run_id])
            for t, cols in DQ_TABLES.items()
        }
        out["run"] = store.query(
            "SELECT kind, status, units_done, units_total, prompts_done, error FROM run WHERE run_id = ?",
            [run_id],
        )
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A warehouse with 9 DynamicQA facts, the tiny model, and the rows of an uninterrupted run."""
    from dynamicqa_helpers import subset

    d = tmp_path_factory.mktemp("runs_dyn")
    src = subset(make_dynamicqa(d / "full", n=60, seed=0).folder, d / "dq", 3)
    db = str(d / "base.duckdb")
    res = _cli("--db", db, "ingest", "dynamicqa", src)
    assert res.exit_code == 0, res.output
    tiny = _tiny_folder(d / "tiny")
    cmd = [
        "score-dynamic",
        "--limit",
        "3",
        "--samples",
        "3",
        "--max-new-tokens",
        "4",
        "--threshold",
        "0.89",
        "--chat-template",
        "none",
        "--seed",
        "7",
        "--device",
        "cpu",
        "--model",
        tiny,
    ]
    ref = copy_db(db, d / "ref.duckdb")
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)  # as every scoring process of these tests (scale_helpers.cli_child)
    try:
        res = _cli("--db", ref, *cmd)
    finally:
        torch.set_num_threads(n)
    assert res.exit_code == 0, res.output
    assert re.match(
        r"run 1: done, 9/9 facts; mean CP \S+ nats, mean SE with context \S+ nats\n1\n$", res.stdout
    )
    rows = _rows(ref)
    assert len(rows["dynamicqa_fact_done"]) == 9 and rows["run"][0][:4] == ("dynamic", "done", 9, 9)
    return {"db": db, "cmd": cmd, "ref": rows, "dir": d}


def test_killed_dynamic_run_resumes_to_the_rows_of_an_uninterrupted_run(base, tmp_path):
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    # transactions: the schema check at open, the sample, the run row, then one per fact: killed
    # inside the fourth fact's transaction (its rows inserted, never committed)
    code, out = run_cli_child(
        ["--db", db, *base["cmd"]], tmp_path / "kill.log", env={"CTXPRIOR_FAULT": "tx.before_commit@7:kill"}
    )
    assert code == -signal.SIGKILL, out
    got = _rows(db)
    assert got["run"][0][:4] == ("dynamic", "running", 3, 9)
    assert len(got["dynamicqa_fact_done"]) == 3
    assert set(got["dynamicqa_generation"]) < set(base["ref"]["dynamicqa_generation"])
    res = _cli("--db", db, "runs")
    assert re.search(r"\n\s+1\s+dynamic\s+stopped\s+3/9\s", res.stdout), res.stdout
    res = _cli("--db", db, "runs", "resume", "1", "--quiet")
    assert res.exit_code == 0, res.output
    assert re.match(r"run 1: done; 9/9 units, 72 prompts in \S+ s \(\S+ prompts/s\)\n1\n$", res.stdout), (
        res.stdout
    )
    assert _rows(db) == base["ref"]
    res = _cli("--db", db, "runs", "resume", "1", "--executor", "ray")
    assert res.exit_code == 2 and "a dynamic run; it resumes in this process" in res.output


def test_runs_cancel_stops_a_running_dynamic_run_then_resume_finishes_it(base, tmp_path):
    db = copy_db(base["db"], tmp_path / "w.duckdb")
    # the writer waits 0.3 s (file released) before each reopen from the third, so the cancel lands mid-run
    p = start_cli(
        ["--db", db, *base["cmd"]], tmp_path / "run.log", env={"CTXPRIOR_FAULT": "store.connect@3+:sleep=0.3"}
    )
    from ctxprior.storage import open_store

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.is_alive():
        try:
            with open_store(db, read_only=True, wait=5) as store:
                if (store.scalar("SELECT count(*) FROM dynamicqa_fact_done") or 0) >= 1:
                    break
        except Exception:
            pass
        time.sleep(0.05)
    res = _cli("--db", db, "runs", "cancel", "1")
    assert res.exit_code == 0, res.output
    assert res.stdout == "run 1: cancelled\n"
    p.join(60)
    log = (tmp_path / "run.log").read_text()
    assert not p.is_alive() and p.exitcode == 130, log
    assert "interrupted: finished units are saved" in log
    got = _rows(db)
    assert got["run"][0][1] == "cancelled" and 1 <= got["run"][0][2] < 9
    assert _cli("--db", db, "runs", "cancel", "1").stdout == "run 1 is already cancelled\n"
    code, out = run_cli_child(["--db", db, "runs", "resume", "1", "--quiet"], tmp_path / "resume.log")
    assert code == 0, out
    assert _rows(db) == base["ref"]


def test_runs_lists_both_kinds(base, tmp_path):
    from ctxprior.storage.runs import default_runs, start_run

    db = copy_db(base["dir"] / "ref.duckdb", tmp_path / "w.duckdb")
    import ctxprior

    wh = ctxprior.open(db, write=True)
    with wh.connect(write=True) as store:
        start_run(store, "persuasion", model="m", estimator="first-token", config_json="{}", units_total=4)
        store.execute("UPDATE run SET status = 'done' WHERE run_id = 2")
        assert default_runs(store, "persuasion") == [2]
        assert default_runs(store, "dynamic") == [1]
        assert default_runs(store) == [1, 2]
    runs = wh.runs.list()
    assert runs[["run_id", "kind", "status"]].values.tolist() == [
        [1, "dynamic", "done"],
        [2, "persuasion", "done"],
    ]
    res = _cli("--db", db, "runs")
    assert re.search(r"\n\s+1\s+dynamic\s+done\s+9/9\s.*\n\s+2\s+persuasion\s+done\s+0/4\s", res.stdout), (
        res.stdout
    )
    # analyze-dynamic's default runs: the dynamic runs with scores (not the finished persuasion run 2)
    res = _cli("--db", db, "analyze-dynamic")
    assert res.exit_code == 0 and res.stdout.startswith("run 1 (") and "run 2" not in res.stdout, res.output
    # sample-dynamic through the API: the existing identical sample is reused
    res = _cli("--db", db, "sample-dynamic", "--limit", "3")
    assert res.stdout == (
        "sample 1: dataset 'dynamicqa', 9 facts, 18 contexts (original + counter per fact)\n1\n"
    )
