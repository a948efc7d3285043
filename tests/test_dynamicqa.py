"""DynamicQA: ingest (files the tests write in the release's format, the real files when present,
the Hub), samples, semantic metrics, dynamic runs."""

from __future__ import annotations

import csv
import hashlib
import itertools
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from dynamicqa_helpers import SOURCES, dq_dir, dq_src, subset  # noqa: F401 (dq_src: a fixture)
from fixtures.make_dynamicqa import make_dynamicqa
from hub_mock import StaticServer, local_hub
from hypothesis import given, settings
from hypothesis import strategies as st
from warehouse_helpers import snapshot

from ctxprior.dynamicqa import semantic as sem
from ctxprior.dynamicqa.ingest import FILES, HUB_FILES, HUB_REPO, HUB_REVISION
from ctxprior.storage import open_store


def edge_rows(src: Path) -> dict[str, list[int]]:
    """Rows covering the edge cases: embedded newlines, duplicate stray index, blank popularity."""
    pick: dict[str, list[int]] = {}
    for part, name in FILES.items():
        with open(src / name, encoding="utf-8", newline="") as f:
            rdr = csv.DictReader(f)
            data = list(rdr)
        idx = [0, 1]
        nl = [i for i, r in enumerate(data) if "\n" in r["context"]]
        if nl:  # static and temporal only (the disputable contexts are single sentences)
            idx.append(nl[0])
        if part == "disputable":
            seen: dict[str, int] = {}
            for i, r in enumerate(data):
                if r[""] in seen:
                    idx += [seen[r[""]], i]
                    break
                seen[r[""]] = i
        else:
            idx.append(next(i for i, r in enumerate(data) if r["s_pop_new"] == ""))
            idx.append(next(i for i, r in enumerate(data) if r["o_pop_new"] == ""))
        pick[part] = sorted(set(idx))
    return pick


# ---- the fixture's format ------------------------------------------------------------------------


def _pandas_roundtrip_is_identical(path: Path) -> bool:
    """pandas reads the file and writes back the same bytes (what the authors' code produced)."""
    import pandas as pd

    raw = path.read_bytes()
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = df.to_csv(index=False, lineterminator="\n")
    return out.replace("Unnamed: 0", "", 1).encode("utf-8") == raw


@pytest.mark.parametrize("src", SOURCES)
def test_files_are_in_the_release_format(src, tmp_path, request):
    """The fixture's files and the real files have the same header, line ends and quoting."""
    folder = (
        dq_dir(request.getfixturevalue("shared_dir"))
        if src == "real"
        else make_dynamicqa(tmp_path / "dq", n=12).folder
    )
    from fixtures.make_dynamicqa import DP_COLUMNS, ST_COLUMNS

    for part, name in FILES.items():
        path = folder / name
        raw = path.read_bytes()
        assert b"\r" not in raw and raw.endswith(b"\n") and not raw.startswith(b"\xef\xbb\xbf")
        header = next(csv.reader(open(path, encoding="utf-8", newline="")))
        assert header == (DP_COLUMNS if part == "disputable" else ST_COLUMNS)
        assert _pandas_roundtrip_is_identical(path), name


def test_fixture_has_every_edge_case(tmp_path):
    info = make_dynamicqa(tmp_path / "dq", n=8)
    assert set(info.edge) == {
        "newline",
        "multi_mask",
        "quotes",
        "comma",
        "blank_s_pop_new",
        "blank_o_pop_new",
        "replace_is_obj",
        "subject_in_template",
        "shared_id",
        "obj_punct",
        "obj_twice",
        "dup_index",
        "obj_substring",
        "braces",
        "blank_dir_info",
        "subject_not_in_question",
    }
    st_rows = info.rows["static"]
    assert "\n" in st_rows[1]["context"] and st_rows[2]["context"].count("[ENTITY]") == 2
    assert (
        st_rows[3]["s_pop_new"] == ""
        and st_rows[4]["o_pop_new"] == ""
        and st_rows[4]["replace_name"] == st_rows[4]["obj"]
    )
    dp = info.rows["disputable"]
    assert dp[0][""] == dp[3][""] and dp[7]["id"] == st_rows[7]["id"] and dp[6]["dir_info"] == ""
    assert "{" in dp[5]["context"] and dp[2]["context"].count(dp[2]["obj"]) == 2
    assert sum(r["context"].startswith(" ") for r in st_rows) >= 6


# ---- ingest ---------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_ingest_real_files(shared_dir, run_cli, db_path):
    res = run_cli("ingest", "dynamicqa", dq_dir(shared_dir))
    assert res.exit_code == 0, res.output
    assert "5689 facts (static 2500, temporal 2495, disputable 694)" in res.output
    with open_store(db_path, read_only=True) as store:
        counts = dict(store.query("SELECT partition, count(*) FROM v_dynamicqa_fact GROUP BY 1"))
        assert counts == {"static": 2500, "temporal": 2495, "disputable": 694}
        # 108 contexts with embedded newlines (README), kept verbatim
        assert store.scalar("SELECT count(*) FROM dynamicqa_fact WHERE contains(context, chr(10))") == 108
        # blank popularity -> NULL: static 24/1, temporal 14/8
        nulls = {
            r[0]: (r[1], r[2])
            for r in store.query(
                "SELECT partition, count(*) FILTER (WHERE s_pop_new IS NULL), count(*) FILTER (WHERE o_pop_new IS NULL) "
                "FROM dynamicqa_fact WHERE partition <> 'disputable' GROUP BY 1"
            )
        }
        assert nulls == {"static": (24, 1), "temporal": (14, 8)}
        # the stray index is not unique in the disputable file; (partition, id) is the key
        assert (
            store.scalar(
                "SELECT count(DISTINCT source_index) FROM dynamicqa_fact WHERE partition='disputable'"
            )
            == 551
        )
        assert (
            store.scalar("SELECT count(*) FROM (SELECT DISTINCT partition, id FROM v_dynamicqa_fact)") == 5689
        )
        # three disputable ids also occur in the static file
        assert (
            store.scalar(
                "SELECT count(*) FROM (SELECT id FROM v_dynamicqa_fact GROUP BY id HAVING count(*) > 1)"
            )
            >= 3
        )
        # aliases: one row per alias, obj always among them
        assert (
            store.scalar(
                "SELECT count(*) FROM v_dynamicqa_fact v WHERE NOT EXISTS (SELECT 1 FROM dynamicqa_alias a "
                "WHERE a.fact_id = v.fact_id AND a.alias = v.object)"
            )
            == 0
        )
        row = store.query(
            "SELECT subject, relation, object, replace_name, num_edits, s_pop, o_pop, question "
            "FROM v_dynamicqa_fact WHERE partition = 'temporal' AND id = 4222362"
        )[0]
        assert row == (
            "George Rankin",
            "occupation",
            "politician",
            "judge",
            4.0,
            142.0,
            25692.0,
            "What is George Rankin's occupation?",
        )
        # question templates per relation reproduce every question
        bad = store.scalar("""SELECT count(*) FROM v_dynamicqa_fact v JOIN query_form q
                           ON q.relation_id = v.relation_id AND q.name = 'open_0'
                           WHERE replace(q.template, '{entity}', v.subject) <> 'Q: ' || v.question || chr(10) || 'A:'
                             AND v.partition <> 'disputable'""")
        assert bad == 0
        assert (
            store.scalar(
                "SELECT count(DISTINCT relation_id) FROM v_dynamicqa_fact WHERE partition <> 'disputable'"
            )
            == 16
        )
    # ingesting again under the same name is a user error and changes nothing
    res2 = run_cli("ingest", "dynamicqa", dq_dir(shared_dir))
    assert res2.exit_code == 2 and "already exists" in res2.output


def _expected_counts(info) -> dict:
    """What the warehouse must hold for a fixture, computed from the rows as written."""
    st_rows = info.rows["static"] + info.rows["temporal"]
    return {
        "facts": {p: len(info.rows[p]) for p in info.rows},
        "newline": sum("\n" in r["context"] for rows in info.rows.values() for r in rows),
        "nulls": {
            p: (
                sum(r["s_pop_new"] == "" for r in info.rows[p]),
                sum(r["o_pop_new"] == "" for r in info.rows[p]),
            )
            for p in ("static", "temporal")
        },
        "dp_index": len({r[""] for r in info.rows["disputable"]}),
        "relations": len({r["prop_id"] for r in st_rows}),
        "shared_ids": len(
            {r["id"] for r in info.rows["static"]} & {r["id"] for r in info.rows["disputable"]}
        ),
    }


@pytest.mark.quick
def test_ingest_fixture_files(tmp_path, run_cli, db_path):
    """The real-files test's checks, on a fixture whose expected values come from the rows written."""
    info = make_dynamicqa(tmp_path / "dq", n=40, seed=3)
    exp = _expected_counts(info)
    res = run_cli("ingest", "dynamicqa", info.folder)
    assert res.exit_code == 0, res.output
    assert "120 facts (static 40, temporal 40, disputable 40)" in res.output
    assert f"source: {info.folder.resolve()}" in res.output
    with open_store(db_path, read_only=True) as store:
        assert (
            dict(store.query("SELECT partition, count(*) FROM v_dynamicqa_fact GROUP BY 1")) == exp["facts"]
        )
        assert (
            store.scalar("SELECT count(*) FROM dynamicqa_fact WHERE contains(context, chr(10))")
            == exp["newline"]
            == 2
        )
        nulls = {
            r[0]: (r[1], r[2])
            for r in store.query(
                "SELECT partition, count(*) FILTER (WHERE s_pop_new IS NULL), count(*) FILTER (WHERE o_pop_new IS NULL) "
                "FROM dynamicqa_fact WHERE partition <> 'disputable' GROUP BY 1"
            )
        }
        assert nulls == exp["nulls"] == {"static": (1, 1), "temporal": (1, 1)}
        assert (
            store.scalar(
                "SELECT count(DISTINCT source_index) FROM dynamicqa_fact WHERE partition='disputable'"
            )
            == exp["dp_index"]
            == 39
        )
        assert (
            store.scalar("SELECT count(*) FROM (SELECT DISTINCT partition, id FROM v_dynamicqa_fact)") == 120
        )
        assert (
            store.scalar(
                "SELECT count(*) FROM (SELECT id FROM v_dynamicqa_fact GROUP BY id HAVING count(*) > 1)"
            )
            == exp["shared_ids"]
            == 1
        )
        assert (
            store.scalar(
                "SELECT count(*) FROM v_dynamicqa_fact v WHERE NOT EXISTS (SELECT 1 FROM dynamicqa_alias a "
                "WHERE a.fact_id = v.fact_id AND a.alias = v.object)"
            )
            == 0
        )
        r = info.rows["temporal"][9]
        row = store.query(
            "SELECT v.subject, v.relation, v.object, v.replace_name, v.num_edits, v.s_pop, v.o_pop, "
            "v.question, df.relation_qid, df.subject_qid, df.object_qid FROM v_dynamicqa_fact v "
            "JOIN dynamicqa_fact df USING (fact_id) WHERE v.partition = 'temporal' AND v.id = ?",
            [int(r["id"])],
        )[0]
        assert row == (
            r["subj"],
            r["prop"],
            r["obj"],
            r["replace_name"],
            float(r["num_edits"]),
            float(r["s_pop"]),
            float(r["o_pop"]),
            r["question"],
            r["prop_id"],
            r["subj_id"],
            r["obj_id"],
        )
        aliases = [
            a
            for (a,) in store.query(
                "SELECT alias FROM dynamicqa_alias JOIN v_dynamicqa_fact USING (fact_id) "
                "WHERE partition = 'temporal' AND id = ? ORDER BY ordinal",
                [int(r["id"])],
            )
        ]
        assert aliases == __import__("json").loads(r["possible_answers"])
        bad = store.scalar("""SELECT count(*) FROM v_dynamicqa_fact v JOIN query_form q
                           ON q.relation_id = v.relation_id AND q.name = 'open_0'
                           WHERE replace(q.template, '{entity}', v.subject) <> 'Q: ' || v.question || chr(10) || 'A:'
                             AND v.partition <> 'disputable'""")
        assert bad == 0
        assert (
            store.scalar(
                "SELECT count(DISTINCT relation_id) FROM v_dynamicqa_fact WHERE partition <> 'disputable'"
            )
            == exp["relations"]
            == 8
        )
        files = store.scalar("SELECT description FROM dataset")
        for p, name in FILES.items():
            assert f"{name} sha256 {hashlib.sha256(info.files[p].read_bytes()).hexdigest()}" in files
    before = snapshot(db_path)
    res2 = run_cli("ingest", "dynamicqa", info.folder)
    assert res2.exit_code == 2 and "already exists" in res2.output
    assert snapshot(db_path) == before


def _check_edge_case_rows(db_path: str) -> None:
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM dynamicqa_fact WHERE contains(context, chr(10))") == 2
        assert (
            store.scalar("SELECT count(*) FROM dynamicqa_fact WHERE partition='disputable'")
            == store.scalar(
                "SELECT count(DISTINCT source_index) FROM dynamicqa_fact WHERE partition='disputable'"
            )
            + 1
        )
        assert (
            store.scalar(
                "SELECT count(*) FROM dynamicqa_fact WHERE s_pop_new IS NULL AND partition <> 'disputable'"
            )
            >= 2
        )
        assert (
            store.scalar(
                "SELECT count(*) FROM dynamicqa_fact WHERE o_pop_new IS NULL AND partition <> 'disputable'"
            )
            >= 2
        )
        # the masked template renders back to the context with obj (static/temporal)
        for ctx, tpl, obj in store.query(
            "SELECT v.context, df.context_template, v.object FROM v_dynamicqa_fact v "
            "JOIN dynamicqa_fact df USING (fact_id) WHERE v.partition <> 'disputable'"
        ):
            assert tpl.format(answer=obj) == ctx.replace("[ENTITY]", obj).strip()
        # disputable: obj is swapped in the literal text, with the authors' "This article is about" prefix
        for ctx, tpl, obj, subj in store.query(
            "SELECT v.context, df.context_template, v.object, v.subject FROM "
            "v_dynamicqa_fact v JOIN dynamicqa_fact df USING (fact_id) "
            "WHERE v.partition = 'disputable'"
        ):
            assert tpl.format(answer=obj) == f"This article is about {subj}. " + ctx.strip()


@pytest.mark.shared_data
def test_ingest_edge_case_rows(shared_dir, tmp_path, run_cli, db_path):
    d = subset(dq_dir(shared_dir), tmp_path / "dq", edge_rows(dq_dir(shared_dir)))
    res = run_cli("ingest", "dynamicqa", d, "--name", "dq_small")
    assert res.exit_code == 0, res.output
    _check_edge_case_rows(db_path)


def test_ingest_edge_case_rows_fixture(tmp_path, run_cli, db_path):
    """The same selection of rows from the fixture, plus the cases only the fixture names."""
    info = make_dynamicqa(tmp_path / "full", n=12, seed=1)
    d = subset(info.folder, tmp_path / "dq", edge_rows(info.folder))
    res = run_cli("ingest", "dynamicqa", d, "--name", "dq_small")
    assert res.exit_code == 0, res.output
    _check_edge_case_rows(db_path)
    assert run_cli("ingest", "dynamicqa", info.folder).exit_code == 0
    dp = info.rows["disputable"]
    with open_store(db_path, read_only=True) as store:

        def fact(part: str, i: int):
            return store.query(
                "SELECT mask_count, mask_kind, context_template, source_index FROM dynamicqa_fact df "
                "JOIN dataset d USING (dataset_id) WHERE d.name = 'dynamicqa' AND partition = ? "
                "AND source_row = ?",
                [part, i],
            )[0]

        assert fact("static", 2)[:2] == (2, "entity_token")  # two masks
        assert fact("disputable", 2)[:2] == (2, "word_boundary")  # obj twice
        assert fact("disputable", 4)[:2] == (1, "substring")  # obj inside a longer word
        assert fact("disputable", 1)[:2] == (1, "word_boundary")  # obj "kush," with its comma
        tpl = fact("disputable", 5)[2]  # braces in the text
        assert (
            tpl.format(answer=dp[5]["obj"]) == f"This article is about {dp[5]['subj']}. " + dp[5]["context"]
        )
        assert fact("disputable", 0)[3] == fact("disputable", 3)[3]  # the repeated stray index
        assert (
            store.scalar(
                "SELECT dir_info FROM dynamicqa_fact WHERE partition = 'disputable' AND source_row = 6 "
                "AND dataset_id = 2"
            )
            is None
        )
        # "Who was the producer of W?": the subject is also a letter of the template
        assert (
            store.scalar(
                "SELECT q.template FROM query_form q JOIN relation r USING (relation_id) "
                "WHERE r.name = 'P162' AND q.name = 'open_0' AND r.dataset_id = 2"
            )
            == "Q: Who was the producer of {entity}?\nA:"
        )
        # a disputable question that does not name the subject keeps its text as the query form
        assert (
            store.scalar(
                "SELECT q.template FROM query_form q JOIN relation r USING (relation_id) "
                "WHERE r.name = ? AND q.name = 'open_0'",
                [f"disputable:{dp[6]['id']}"],
            )
            == f"Q: {dp[6]['question']}\nA:"
        )


@pytest.mark.parametrize(
    "problem, expect",
    [
        ("missing", "Temporal_final.csv: missing"),
        ("bad_number", "Static_final.csv: data row 2"),
        ("dup_id", "Disputable_final.csv: id"),
        ("no_mask", "no [ENTITY] mask"),
        ("bad_json", "possible_answers"),
        ("bad_header", "not a DynamicQA static file: missing column(s) prop"),
        ("dup_column", "appear more than once"),
        ("blank_qid", "column subj_id is blank"),
        ("short_row", "fields, expected 18"),
    ],
)
def test_bad_input_is_one_line_and_leaves_warehouse_unchanged(
    dq_src, tmp_path, run_cli, db_path, problem, expect
):
    d = subset(dq_src, tmp_path / "dq", 4)

    def edit(name, fn):
        p = d / name
        with open(p, encoding="utf-8", newline="") as f:
            recs = list(csv.reader(f))
        fn(recs)
        with open(p, "w", encoding="utf-8", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(recs)

    if problem == "missing":
        (d / "Temporal_final.csv").unlink()
    elif problem == "bad_number":
        edit("Static_final.csv", lambda r: r[2].__setitem__(12, "many"))
    elif problem == "dup_id":
        edit("Disputable_final.csv", lambda r: r[3].__setitem__(1, r[1][1]))
    elif problem == "no_mask":
        edit("Temporal_final.csv", lambda r: r[1].__setitem__(13, r[1][13].replace("[ENTITY]", "X")))
    elif problem == "bad_json":
        edit("Static_final.csv", lambda r: r[1].__setitem__(11, "['a', 'b']"))
    elif problem == "bad_header":
        edit("Static_final.csv", lambda r: r[0].__setitem__(3, "relation"))
    elif problem == "dup_column":
        edit("Static_final.csv", lambda r: r[0].__setitem__(17, "s_pop_new"))
    elif problem == "blank_qid":
        edit("Static_final.csv", lambda r: r[2].__setitem__(5, ""))
    elif problem == "short_row":
        edit("Static_final.csv", lambda r: r[3].pop())
    with open_store(db_path):
        pass
    before = snapshot(db_path)
    res = run_cli("ingest", "dynamicqa", d)
    assert res.exit_code == 2
    out = res.output.strip()
    assert out.startswith("Error: ") and "\n" not in out and expect in out, out
    assert snapshot(db_path) == before


def test_sample_dynamic_contexts(dq_src, tmp_path, run_cli, db_path):
    d = subset(dq_src, tmp_path / "dq", 3)
    assert run_cli("ingest", "dynamicqa", d).exit_code == 0
    res = run_cli("sample-dynamic", "--limit", "2")
    assert res.exit_code == 0, res.output
    sid = int(res.output.strip().splitlines()[-1])
    assert int(run_cli("sample-dynamic", "--limit", "2").output.strip().splitlines()[-1]) == sid  # reused
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM sample_fact WHERE sample_id = ?", [sid]) == 6
        rows = store.query(
            """SELECT dc.condition, c.text, v.object, v.replace_name, v.context, v.partition,
                                  c.answer_id = v.answer_id, c.answer_id = v.counter_answer_id, c.entity_id = v.entity_id
                           FROM dynamicqa_context dc JOIN context c USING (context_id)
                           JOIN v_dynamicqa_fact v ON v.fact_id = dc.fact_id WHERE dc.sample_id = ?""",
            [sid],
        )
        assert len(rows) == 12
        for cond, text, obj, rep, ctx, part, is_obj, is_rep, same_entity in rows:
            assert same_entity
            fill = obj if cond == "original" else rep
            assert is_obj if cond == "original" else is_rep
            assert text.endswith("\n") and fill in text
            if part != "disputable":
                assert text == ctx.replace("[ENTITY]", fill).strip() + "\n"
        # contexts belong to the fact's relation, so the persuasion scorer pairs them with the fact
        assert (
            store.scalar("""SELECT count(*) FROM dynamicqa_context dc JOIN context c USING (context_id)
                            JOIN fact f ON f.fact_id = dc.fact_id WHERE c.relation_id <> f.relation_id""")
            == 0
        )


# ---- from the Hub ---------------------------------------------------------------------------------


@pytest.fixture
def hub_env(monkeypatch, tmp_path):
    """Point huggingface_hub and ctxprior at a local Hub stand-in, with a fresh cache under tmp_path."""
    yield from local_hub(
        monkeypatch, tmp_path
    )  # whatever HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE the shell has


def _hub_files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in HUB_FILES.values()}


def test_ingest_dynamicqa_from_the_hub_at_the_pinned_revision(
    hub_env, tmp_path, run_cli, db_path, monkeypatch
):
    pinned = make_dynamicqa(tmp_path / "pinned", n=8, seed=0, layout="hub")
    newer = make_dynamicqa(tmp_path / "newer", n=5, seed=1, layout="hub")
    hub_env.add_dataset(HUB_REPO, _hub_files(pinned.folder), oid=HUB_REVISION)
    head = hub_env.add_dataset(HUB_REPO, _hub_files(newer.folder), summary="Upload 2 files")
    res = run_cli("ingest", "dynamicqa")
    assert res.exit_code == 0, res.output
    assert "24 facts (static 8, temporal 8, disputable 8)" in res.output
    assert f"source: hf://datasets/{HUB_REPO}@{HUB_REVISION}" in res.output
    got = {r.path.rsplit("/", 1)[-1] for r in hub_env.calls(pattern=f"/resolve/{HUB_REVISION}/")}
    assert got == set(HUB_FILES.values())
    with open_store(db_path, read_only=True) as store:
        src, desc = store.query("SELECT source_path, description FROM dataset")[0]
        assert src == f"hf://datasets/{HUB_REPO}@{HUB_REVISION}"
        sha = hashlib.sha256(pinned.files["static"].read_bytes()).hexdigest()
        assert f"static.csv sha256 {sha}" in desc
        # no stray index column in the Hub layout: source_index is NULL, the rest as in the files
        assert store.scalar("SELECT count(*) FROM dynamicqa_fact WHERE source_index IS NOT NULL") == 0
        r = pinned.rows["static"][6]
        assert store.query(
            "SELECT subject, object FROM v_dynamicqa_fact WHERE partition = 'static' AND id = ?",
            [int(r["id"])],
        ) == [(r["subj"], r["obj"])]
    # the cached files are used offline; another revision is another download
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert run_cli("ingest", "dynamicqa", "--name", "again").exit_code == 0
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", StaticServer.refusing())  # no network at all: the cache too
    assert run_cli("ingest", "dynamicqa", "--name", "again2").exit_code == 0
    monkeypatch.setenv("HF_ENDPOINT", hub_env.url)
    res = run_cli("ingest", "dynamicqa", "--revision", "main", "--name", "latest")
    assert res.exit_code == 0, res.output
    assert "15 facts (static 5, temporal 5, disputable 5)" in res.output and f"@{head}" in res.output


@pytest.mark.parametrize("how", ["offline", "refused"])
def test_ingest_dynamicqa_offline_is_one_line(how, hub_env, run_cli, db_path, monkeypatch):
    if how == "offline":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.setenv("HF_ENDPOINT", StaticServer.refusing())
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = snapshot(db_path)
    res = run_cli("ingest", "dynamicqa")
    assert res.exit_code == 2, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    line = lines[0]
    ep = os.environ["HF_ENDPOINT"]
    assert (
        f"download static.csv, temporal.csv and disputable.csv from {ep}/datasets/{HUB_REPO}/tree/"
        f"{HUB_REVISION} into one folder DIR"
    ) in line  # what, from where
    assert line.endswith("and run `ctxprior ingest dynamicqa DIR`")  # where it goes
    assert ("HF_HUB_OFFLINE is set" if how == "offline" else "cannot be reached (Connection refused)") in line
    assert snapshot(db_path) == before
    assert not hub_env.requests


def test_ingest_dynamicqa_hub_errors(hub_env, tmp_path, run_cli):
    res = run_cli("ingest", "dynamicqa")
    assert res.exit_code == 2 and f"no dataset repository {HUB_REPO}" in res.output
    hub_env.add_dataset(HUB_REPO, _hub_files(make_dynamicqa(tmp_path / "h", n=3, layout="hub").folder))
    res = run_cli("ingest", "dynamicqa", "--revision", "0" * 40)
    assert res.exit_code == 2 and "has no revision" in res.output
    res = run_cli("ingest", "dynamicqa", tmp_path / "h", "--revision", "main")
    assert res.exit_code == 2 and "--revision main: only applies to the Hub download" in res.output


def test_hub_layout_and_absent_optional_columns(tmp_path, run_cli, db_path):
    """Columns are matched by name; those whose values may be blank may also be missing (-> NULL),
    a masked disputable context is filled at its masks, and labels name relations without prop_id."""
    drop = (
        "s_pop",
        "o_pop",
        "s_pop_new",
        "o_pop_new",
        "replace_quality",
        "dir_info",
        "prop_id",
        "subj_id",
        "obj_id",
        "possible_answers",
    )
    info = make_dynamicqa(tmp_path / "dq", n=8, layout="hub", drop=drop, masked_disputable=True)
    assert sorted(p.name for p in info.folder.iterdir()) == sorted(HUB_FILES.values())
    res = run_cli("ingest", "dynamicqa", info.folder)
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        assert (
            store.scalar(
                "SELECT count(*) FROM dynamicqa_fact WHERE s_pop IS NOT NULL OR o_pop IS NOT NULL "
                "OR subject_qid IS NOT NULL OR relation_qid IS NOT NULL OR dir_info IS NOT NULL "
                "OR source_index IS NOT NULL"
            )
            == 0
        )
        assert store.scalar("SELECT count(*) FROM dynamicqa_alias") == 24  # obj only
        assert set(
            r[0] for r in store.query("SELECT name FROM relation WHERE name NOT LIKE 'disputable:%'")
        ) == {r["prop"] for p in ("static", "temporal") for r in info.rows[p]}
        kinds = store.query(
            "SELECT mask_kind, count(*) FROM dynamicqa_fact WHERE partition = 'disputable' GROUP BY 1"
        )
        assert kinds == [("entity_token", 8)]
        dp = info.rows["disputable"][2]  # obj twice -> two masks
        tpl = store.scalar(
            "SELECT context_template FROM dynamicqa_fact WHERE partition = 'disputable' AND source_row = 2"
        )
        assert tpl.format(answer="X") == f"This article is about {dp['subj']}. " + dp["context"].replace(
            "[ENTITY]", "X"
        )


# ---- semantic metrics -----------------------------------------------------------------------


@pytest.mark.quick
def test_semantic_entropy_zero_when_all_agree():
    lps = [-1.0, -2.5, -0.3, -4.0]
    assert sem.semantic_entropy(lps, [0, 0, 0, 0]) == 0.0
    assert sem.semantic_entropy_mc(lps, [0, 0, 0, 0]) == pytest.approx(
        -math.log(sum(math.exp(x) for x in lps))
    )
    # two equally likely clusters: ln 2
    assert sem.semantic_entropy([-1.0, -1.0], [0, 1]) == pytest.approx(math.log(2))
    assert sem.semantic_entropy_mc([-1.0, -1.0], [0, 1]) == pytest.approx(1.0)


def _logdist(rng, n, v):
    x = torch.tensor(rng.normal(size=(n, v)) * 3, dtype=torch.float64)
    return torch.log_softmax(x, -1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(2, 30), st.integers(0, 10_000))
def test_cp_nonnegative_and_zero_for_identical(na, nb, v, seed):
    rng = np.random.default_rng(seed)
    a, b = _logdist(rng, na, v), _logdist(rng, nb, v)
    la, lb = rng.integers(0, 3, na), rng.integers(0, 3, nb)
    assert sem.coherent_persuasion(a, la, b, lb) >= 0.0
    assert sem.coherent_persuasion(a, np.zeros(na), a, np.zeros(na)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.quick
def test_cp_matches_direct_kl():
    p = torch.tensor([[0.7, 0.2, 0.1]], dtype=torch.float64)
    q = torch.tensor([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], dtype=torch.float64)
    cp = sem.coherent_persuasion(p.log(), [0], q.log(), [0, 1])
    kl = lambda x, y: float((x * (x / y).log()).sum())  # noqa: E731
    assert cp == pytest.approx((kl(p[0], q[0]) + kl(p[0], q[1])) / 2)
    # one no-context cluster holding both samples: its distribution is their mean
    cp1 = sem.coherent_persuasion(p.log(), [0], q.log(), [0, 0])
    assert cp1 == pytest.approx(kl(p[0], q.mean(0)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(0, 10_000))
def test_connected_components_order_invariant(n, seed):
    rng = np.random.default_rng(seed)
    adj = rng.random((n, n)) < 0.25
    adj = adj | adj.T
    base = sem.connected_components(adj)

    def partition(labels, order):
        groups: dict[int, set] = {}
        for pos, lab in enumerate(labels):
            groups.setdefault(int(lab), set()).add(order[pos])
        return {frozenset(g) for g in groups.values()}

    ref = partition(base, list(range(n)))
    perm = rng.permutation(n)
    lab = sem.connected_components(adj[np.ix_(perm, perm)])
    assert partition(lab, perm.tolist()) == ref
    # an equivalence relation: transitive closure of the edges
    for i, j in zip(*np.nonzero(adj)):
        assert base[i] == base[j]


@pytest.fixture(scope="module")
def minilm():
    return sem.EmbeddingEquivalence("minilm", threshold=0.89)


def test_embedding_clusters_independent_of_sample_order(minilm):
    q = "What is George Rankin's occupation?"
    answers = [
        "politician",
        "He was a politician.",
        "judge",
        "George Rankin was a judge",
        "soldier",
        "a politician",
        "Politician.",
        "army officer",
    ]

    def partition(ans):
        lab = minilm.cluster(q, ans)
        groups: dict[int, set] = {}
        for a, l in zip(ans, lab):
            groups.setdefault(int(l), set()).add(a)
        return {frozenset(g) for g in groups.values()}

    ref = partition(answers)
    assert any({"politician", "a politician", "Politician."} <= g for g in ref)
    rng = np.random.default_rng(0)
    for _ in range(10):
        assert partition([answers[i] for i in rng.permutation(len(answers))]) == ref
    assert len(set(minilm.cluster(q, ["judge"] * 5).tolist())) == 1


def _tiny_nli(path: Path) -> str:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(
        {
            w
            for s in ["what is the occupation of george rankin politician judge soldier he was a"]
            for w in s.split()
        }
    )
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = BertTokenizer(str(path / "vocab.txt"))
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
        id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2},
    )
    model = BertForSequenceClassification(cfg).eval()
    with torch.no_grad():  # bias towards entailment for some pairs, so clusters are non-trivial
        model.classifier.bias.copy_(torch.tensor([0.0, 0.0, 0.05]))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_nli_equivalence_local_tiny_model(tmp_path):
    path = _tiny_nli(tmp_path / "nli")
    eq = sem.NLIEquivalence(str(path))
    q = "what is the occupation of george rankin"
    answers = ["politician", "judge", "he was a politician", "soldier", "judge", "he was a judge"]
    m = eq.equivalent(q, answers)
    assert (m == m.T).all() and m.diagonal().all() and m[1, 4]
    lab = eq.cluster(q, answers)
    ref = {frozenset(i for i in range(len(answers)) if lab[i] == k) for k in set(lab.tolist())}
    for perm in itertools.islice(itertools.permutations(range(len(answers))), 0, 720, 97):
        lab2 = eq.cluster(q, [answers[i] for i in perm])
        got = {frozenset(perm[i] for i in range(len(perm)) if lab2[i] == k) for k in set(lab2.tolist())}
        assert got == ref


def test_nli_bad_labels_is_user_error(tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    from ctxprior.errors import UserError

    path = Path(_tiny_nli(tmp_path / "nli"))
    cfg = BertConfig.from_pretrained(path)
    cfg.id2label = {0: "A", 1: "B", 2: "C"}
    cfg.label2id = {"A": 0, "B": 1, "C": 2}
    BertForSequenceClassification(cfg).save_pretrained(path)
    with pytest.raises(UserError, match="entailment"):
        sem.NLIEquivalence(str(path))
    with pytest.raises(UserError):
        sem.NLIEquivalence("/no/such/folder")


@pytest.mark.quick
def test_contains_answer():
    assert sem.contains_answer("He was a Politician.", ["politician"])
    assert not sem.contains_answer("He was a politicians' aide", ["politician"])
    assert sem.contains_answer("The answer: Alzheimer's disease", ["alzheimer's"])


# ---- a dynamic run with a tiny random model -------------------------------------------------


@pytest.fixture(scope="module")
def tiny_lm():
    from scoring_helpers import tiny_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(sem.resolve_encoder("minilm"))
    tok.eos_token = "[SEP]"
    return tiny_model(tok, seed=0, hidden=32)


def _run(db, src, tmp_path, tiny_lm, minilm, **kw):
    from ctxprior.dynamicqa.config import DynamicConfig
    from ctxprior.dynamicqa.ingest import ingest_dynamicqa
    from ctxprior.dynamicqa.run import run_facts

    d = tmp_path / "dq"
    if not d.exists():
        subset(src, d, 3)
    store = open_store(db, threads=1)  # the test analyzes it too (Store.one_thread)
    if not store.scalar("SELECT count(*) FROM dataset"):
        ingest_dynamicqa(store, d)
    cfg = DynamicConfig(limit=1, samples=3, max_new_tokens=4, threshold=0.89, chat_template="none", seed=7)
    return (
        store,
        cfg,
        lambda **k: run_facts(store, cfg, lm=tiny_lm, equivalence=minilm, progress=False, **{**kw, **k}),
    )


def test_dynamic_run_rows_and_resume(dq_src, tmp_path, tiny_lm, minilm):
    wh, cfg, go = _run(str(tmp_path / "a.duckdb"), dq_src, tmp_path, tiny_lm, minilm)
    rid = go(max_facts=1)  # interrupted after 1 of 3 facts
    assert wh.scalar("SELECT status FROM run WHERE run_id = ?", [rid]) == "running"
    assert wh.scalar("SELECT count(*) FROM dynamicqa_fact_done WHERE run_id = ?", [rid]) == 1
    rid2 = go()  # same configuration: continues the unfinished run
    assert rid2 == rid
    run = wh.query(
        "SELECT kind, status, units_done, units_total, estimator, sample_id FROM run WHERE run_id = ?", [rid]
    )[0]
    assert run[:5] == ("dynamic", "done", 3, 3, "sampled") and run[5] is not None
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE run_id = ?", [rid]) == 9
    assert wh.scalar("SELECT count(*) FROM dynamicqa_generation WHERE run_id = ?", [rid]) == 3 * 3 * 4
    assert (
        wh.scalar("SELECT count(*) FROM dynamicqa_generation WHERE sample_index = -1 AND cluster IS NOT NULL")
        == 0
    )
    assert wh.scalar("SELECT min(cp) FROM dynamicqa_score WHERE condition <> 'none'") >= 0
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE condition = 'none' AND cp IS NOT NULL") == 0
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE semantic_entropy < 0") == 0
    # SE is 0 exactly where all samples fall in one cluster
    assert (
        wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE (n_clusters = 1) <> (semantic_entropy = 0)")
        == 0
    )
    # stored top-k of each sample's mean distribution: k <= 50, mass <= 1, ranks ordered
    assert (
        wh.scalar(
            "SELECT max(n) FROM (SELECT count(*) n FROM dynamicqa_token_dist "
            "GROUP BY fact_id, condition, sample_index) t"
        )
        == 50
    )
    assert wh.scalar("SELECT max(dist_topk_mass) FROM dynamicqa_generation") <= 1 + 1e-9
    assert (
        wh.scalar("""SELECT count(*) FROM (SELECT fact_id, condition, sample_index, sum(prob) s
                        FROM dynamicqa_token_dist GROUP BY ALL) t JOIN dynamicqa_generation g
                        USING (fact_id, condition, sample_index) WHERE abs(t.s - g.dist_topk_mass) > 1e-9""")
        == 0
    )
    # a resumed run equals an uninterrupted one (sampling is seeded per fact)
    wh2, _, go2 = _run(str(tmp_path / "b.duckdb"), dq_src, tmp_path, tiny_lm, minilm)
    rid_b = go2()
    q = (
        "SELECT fact_id, condition, sample_index, text, round(logprob_sum, 6), cluster FROM dynamicqa_generation "
        "WHERE run_id = ? ORDER BY ALL"
    )
    assert wh.query(q, [rid]) == wh2.query(q, [rid_b])
    # analyses
    from ctxprior.dynamicqa.analyses import analyze_dynamicqa

    text = analyze_dynamicqa(wh, [rid])
    assert "static" in text and "disputable" in text
    assert wh.scalar("SELECT count(*) FROM dynamicqa_summary WHERE run_id = ?", [rid]) == 3
    assert (
        wh.scalar("SELECT accuracy_without_context FROM dynamicqa_summary WHERE partition = 'disputable'")
        is None
    )
    analyze_dynamicqa(wh, [rid])  # idempotent: replaces its rows
    assert wh.scalar("SELECT count(*) FROM dynamicqa_summary WHERE run_id = ?", [rid]) == 3
    wh.close()
    wh2.close()


def test_score_dynamic_user_errors(dq_src, tmp_path, tiny_lm, minilm):
    from ctxprior.dynamicqa.config import DynamicConfig
    from ctxprior.dynamicqa.run import run_facts
    from ctxprior.errors import UserError

    wh, cfg, go = _run(str(tmp_path / "c.duckdb"), dq_src, tmp_path, tiny_lm, minilm)
    for bad in (
        dict(partitions="static,fuzzy"),
        dict(samples=0),
        dict(temperature=0.0),
        dict(dataset="nope"),
        dict(equivalence="cosine"),
    ):
        with pytest.raises(UserError):
            run_facts(
                wh, DynamicConfig(**{**cfg.__dict__, **bad}), lm=tiny_lm, equivalence=minilm, progress=False
            )
    with pytest.raises(UserError, match="no such run"):
        run_facts(wh, resume=99, lm=tiny_lm, equivalence=minilm, progress=False)
    assert wh.scalar("SELECT count(*) FROM run") == 0
    wh.close()


def test_calibration_on_pairs(dq_src, tmp_path, minilm):
    from ctxprior.dynamicqa.calibrate import calibrate
    from ctxprior.dynamicqa.ingest import ingest_dynamicqa

    d = subset(dq_src, tmp_path / "dq", 60)
    with open_store(str(tmp_path / "cal.duckdb")) as store:
        ingest_dynamicqa(store, d)
        rec = calibrate(store, "dynamicqa", minilm, n_facts=180)
        assert rec["n_pos"] > 20 and rec["n_neg"] > 60
        assert 0.5 < rec["threshold"] < 1.0
        assert rec["balanced_accuracy_fit"] > 0.55
        again = calibrate(store, "dynamicqa", minilm, n_facts=180)
        assert again["calibration_id"] == rec["calibration_id"]  # cached per (dataset, encoder, seed)
