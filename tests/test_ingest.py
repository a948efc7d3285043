"""Ingest: yago_qec.json (a realistic fixture; with the real query forms when ../shared is present),
from a local path, the Hub (hf://datasets/...) or a URL, the bundled demo, and bad input."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.make_yago_qec import make_yago_qec
from warehouse_helpers import snapshot

from ctxprior.storage import open_store


@pytest.fixture
def yago_file(tmp_path):
    path = tmp_path / "yago_qec.json"
    make_yago_qec(path, n_relations=6, n_facts=40, seed=0, with_degrees=True)
    return path


@pytest.fixture(params=[pytest.param("bundled"), pytest.param("real", marks=pytest.mark.shared_data)])
def yago_file_any(request, tmp_path):
    """The fixture file with the bundled query forms, or with the authors' real ones (../shared)."""
    measurelm = (
        request.getfixturevalue("shared_dir") / "data" / "measurelm" if request.param == "real" else None
    )
    path = tmp_path / "yago_qec.json"
    make_yago_qec(path, n_relations=6, n_facts=40, seed=0, with_degrees=True, templates=measurelm)
    return path


@pytest.mark.shared_data
def test_context_template_recipe_reproduces_the_real_templates(shared_dir):
    """The bundled templates are built with the recipe that gives every real one from its query forms."""
    from fixtures.make_yago_qec import context_templates, load_templates

    qfs, cts, _ = load_templates(shared_dir / "data" / "measurelm")
    assert len(cts) == 130
    assert all(context_templates(qfs[r]["open"]) == cts[r] for r in cts)


def test_bundled_query_forms_have_the_real_shape():
    """Two open forms (a question ending in '\\nA:' and a sentence prefix), two closed ones, reverse relations."""
    from fixtures.make_yago_qec import QUERY_FORMS, load_templates

    qfs, cts, rels = load_templates()
    assert (
        any(r.startswith("reverse-") for r in rels) and sum(not r.startswith("reverse-") for r in rels) >= 6
    )
    for r, q in QUERY_FORMS.items():
        assert (
            q["open"][0].startswith("Q: ")
            and q["open"][0].endswith("?\nA:")
            and not q["open"][1].endswith("A:")
        )
        assert len(q["closed"]) == 2 and all("{entity}" in t and "{answer}" in t for t in q["closed"])
        assert cts[r]["base"] == q["open"][1] + " {answer}.\n" and cts[r]["negation"] is None


def test_ingest_yago_qec_all_keys_land(run_cli, db_path, yago_file_any):
    yago_file = yago_file_any
    data = json.loads(yago_file.read_text())
    res = run_cli("ingest", "yago-qec", yago_file)
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        rels = store.query("SELECT name FROM relation ORDER BY position")
        assert [r[0] for r in rels] == list(data)
        rel0 = next(iter(data))
        d0 = data[rel0]
        n = len(d0["entities"])
        rows = store.df(
            "SELECT * FROM v_entity WHERE relation_uri = ? ORDER BY entity_kind DESC, position", [rel0]
        )
        real = rows[rows.entity_kind == "real"]
        fake = rows[rows.entity_kind == "fake"]
        assert list(real.entity) == d0["entities"]
        assert list(real.answer) == d0["answers"]
        assert list(real.entity_uri) == d0["entity_uris"]
        assert list(real.answer_uri) == d0["answer_uris"]
        assert list(real.uri_degree) == d0["entity_uri_to_degree"]
        assert list(real.namesake_degree) == d0["entity_namesake_to_degree"]
        assert list(real.namesake_num_uris) == d0["entity_namesake_to_num_uris"]
        assert list(real.predicate_degree) == d0["entity_uri_to_predicate_degree"]
        # a fake entity borrows the answer of the real entity at the same index
        assert list(fake.entity) == d0["gpt_fake_entities"]
        assert list(fake.answer) == d0["answers"]
        assert len(real) == len(fake) == n
        qf = store.query(
            "SELECT query_type, ordinal, template FROM query_form q JOIN relation r USING (relation_id) "
            "WHERE r.name = ? ORDER BY query_type DESC, ordinal",
            [rel0],
        )
        assert [t for _, _, t in qf] == d0["query_forms"]["open"] + d0["query_forms"]["closed"]
        ct = dict(
            store.query(
                "SELECT context_type, template FROM context_template c JOIN relation r USING (relation_id) "
                "WHERE r.name = ?",
                [rel0],
            )
        )
        assert ct == {k: v for k, v in d0["context_templates"].items() if v is not None}
        cls = dict(
            store.query(
                "SELECT class_name, fraction FROM relation_class c JOIN relation r USING (relation_id) "
                "WHERE r.name = ? AND role = 'entity'",
                [rel0],
            )
        )
        assert cls == pytest.approx(d0["entity_types"])
        sha, src = store.query("SELECT source_sha256, source_path FROM dataset")[0]
        assert sha == hashlib.sha256(yago_file.read_bytes()).hexdigest() and src == str(yago_file.resolve())


def test_ingest_only_some_relations_and_name(run_cli, db_path, yago_file):
    data = json.loads(yago_file.read_text())
    first, second = list(data)[:2]
    res = run_cli(
        "ingest", "yago-qec", yago_file, "--name", "subset", "--relation", first, "--relation", second
    )
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT name FROM dataset") == "subset"
        assert [r[0] for r in store.query("SELECT name FROM relation ORDER BY position")] == [first, second]


@pytest.mark.quick
def test_ids_are_stable(tmp_path, yago_file):
    from ctxprior.ingest.yago_qec import load_yago_qec, write_yago_qec

    snaps = []
    for i in range(2):
        db = str(tmp_path / f"w{i}.duckdb")
        with open_store(db) as store:
            write_yago_qec(store, load_yago_qec(yago_file))
        s = snapshot(db)
        s.pop("meta")
        s["dataset"] = [r.split("datetime")[0] for r in s["dataset"]]  # created_at differs
        s["covariate"] = [
            r.split("datetime")[0] for r in s.get("covariate", [])
        ]  # added_at/updated_at differ
        snaps.append(s)
    assert snaps[0] == snaps[1]


def test_demo_ingest_has_paper_case_studies(run_cli, db_path):
    res = run_cli("ingest", "demo")
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        names = [r[0] for r in store.query("SELECT name FROM dataset ORDER BY dataset_id")]
        assert names == ["demo", "friend_enemy", "gender"]
        n_rel = store.scalar(
            "SELECT count(*) FROM relation JOIN dataset USING (dataset_id) WHERE dataset.name='demo'"
        )
        assert n_rel >= 6
        # every demo relation: 2 open + 2 closed query forms, base/assertive/negation templates, fakes
        per_rel = store.query("""
            SELECT r.short_name,
                   (SELECT count(*) FROM query_form q WHERE q.relation_id = r.relation_id AND query_type='open'),
                   (SELECT count(*) FROM query_form q WHERE q.relation_id = r.relation_id AND query_type='closed'),
                   (SELECT list(DISTINCT context_type ORDER BY context_type) FROM context_template c
                     WHERE c.relation_id = r.relation_id),
                   (SELECT count(*) FROM fact f WHERE f.relation_id = r.relation_id AND entity_kind='fake')
            FROM relation r JOIN dataset d USING (dataset_id) WHERE d.name = 'demo'""")
        for rel, n_open, n_closed, types, n_fake in per_rel:
            assert (n_open, n_closed) == (2, 2), rel
            assert {"base", "assertive", "negation"} <= set(types), rel
            assert n_fake > 0, rel
        fe = store.df("SELECT * FROM v_entity WHERE dataset = 'friend_enemy'")
        assert len(fe) == 73 and set(fe.label) == {"friend", "enemy"}
        g = store.df("SELECT * FROM v_entity WHERE dataset = 'gender'")
        assert sorted(g.entity_class.value_counts().tolist()) == [20, 20]
    # idempotent: a second run changes nothing
    before = snapshot(db_path)
    res = run_cli("ingest", "demo")
    assert res.exit_code == 0 and "nothing to do" in res.output
    assert snapshot(db_path) == before


def _write(path, content: bytes | str):
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def _mutate(yago_file, fn):
    data = json.loads(yago_file.read_text())
    fn(data)
    yago_file.write_text(json.dumps(data))
    return yago_file


BAD_CASES = {
    "malformed": lambda f: _write(f, '{"http://schema.org/x": {"entities": [1,, 2]}}'),
    "truncated": lambda f: _write(f, f.read_text()[: len(f.read_text()) // 2]),
    "empty": lambda f: _write(f, b""),
    "non_utf8": lambda f: _write(f, b'{"r": "caf\xe9"}'),
    "wrong_type": lambda f: _mutate(f, lambda d: d[next(iter(d))].__setitem__("entities", "not a list")),
    "entity_not_str": lambda f: _mutate(f, lambda d: d[next(iter(d))]["entities"].__setitem__(0, 5)),
    "no_entity_placeholder": lambda f: _mutate(
        f, lambda d: d[next(iter(d))]["query_forms"]["open"].__setitem__(0, "Q: What is it?\nA:")
    ),
    "context_without_entity": lambda f: _mutate(
        f, lambda d: d[next(iter(d))]["context_templates"].__setitem__("base", "It is {answer}.\n")
    ),
    "unequal_lengths": lambda f: _mutate(f, lambda d: d[next(iter(d))]["answers"].pop()),
    "unequal_degrees": lambda f: _mutate(f, lambda d: d[next(iter(d))]["entity_uri_to_degree"].pop()),
    "top_level_list": lambda f: _write(f, "[1, 2, 3]"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_one_line_exit_2_warehouse_unchanged(case, run_cli, db_path, yago_file, tmp_path):
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = snapshot(db_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(yago_file.read_bytes())
    BAD_CASES[case](bad)
    res = run_cli("ingest", "yago-qec", bad)
    assert res.exit_code == 2, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "bad.json" in lines[0], res.output
    assert snapshot(db_path) == before


def test_unknown_relation_and_duplicate_name(run_cli, db_path, yago_file):
    res = run_cli("ingest", "yago-qec", yago_file, "--relation", "no-such-relation")
    assert res.exit_code == 2 and "unknown relation 'no-such-relation'" in res.output
    assert run_cli("ingest", "yago-qec", yago_file).exit_code == 0
    before = snapshot(db_path)
    res = run_cli("ingest", "yago-qec", yago_file)
    assert res.exit_code == 2 and "already exists" in res.output
    assert snapshot(db_path) == before


def test_missing_file(run_cli, tmp_path):
    res = run_cli("ingest", "yago-qec", tmp_path / "nope.json")
    assert res.exit_code == 2 and "no such file" in res.output


def test_real_subprocess_cli(tmp_path, yago_file):
    db = str(tmp_path / "sub.duckdb")
    exe = [sys.executable, "-m", "ctxprior", "--db", db]
    r = subprocess.run(exe + ["ingest", "yago-qec", str(yago_file)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        exe + ["sample", "--dataset", "yago_qec", "--entities", "4", "--contexts", "12"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "1"
    r = subprocess.run(exe + ["sql", "DROP TABLE fact"], capture_output=True, text=True)
    assert r.returncode == 2 and "read-only" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ---- sources: the Hub (hf://datasets/...) and URLs -------------------------------------------------


@pytest.fixture
def hf_env(monkeypatch, tmp_path):
    """A fresh Hugging Face cache under tmp_path; no network: endpoints are local stand-ins."""
    from hub_mock import fresh_hf_home

    return fresh_hf_home(
        monkeypatch, tmp_path
    )  # whatever HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE the shell has


@pytest.fixture
def web(tmp_path, yago_file):
    """yago_qec.json served over http://127.0.0.1 (a local http.server)."""
    from hub_mock import StaticServer

    site = tmp_path / "site"
    site.mkdir()
    (site / "yago_qec.json").write_bytes(yago_file.read_bytes())
    (site / "broken.json").write_text('{"http://schema.org/x": {"entities": [1,, 2]}}')
    server = StaticServer(site)
    yield server
    server.close()


@pytest.fixture
def hub(hf_env, monkeypatch):
    from hub_mock import HubMock

    mock = HubMock(token="unused")
    monkeypatch.setenv("HF_ENDPOINT", mock.url)
    yield mock
    mock.close()


def one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    return lines[0]


def test_ingest_from_url_is_cached_and_recorded(hf_env, web, yago_file, run_cli, db_path):
    url = f"{web.url}/yago_qec.json"
    sha = hashlib.sha256(yago_file.read_bytes()).hexdigest()
    res = run_cli("ingest", "yago-qec", url, "--sha256", sha.upper())
    assert res.exit_code == 0, res.output
    assert f"source: {url} (sha256 {sha})" in res.output
    cached = list((hf_env / "assets" / "ctxprior" / "urls").glob("*/yago_qec.json"))
    assert len(cached) == 1 and cached[0].read_bytes() == yago_file.read_bytes()
    with open_store(db_path, read_only=True) as store:
        assert store.query("SELECT source_path, source_sha256 FROM dataset") == [(url, sha)]
    web.close()  # the second time comes from the cache
    res = run_cli("ingest", "yago-qec", url, "--name", "again")
    assert res.exit_code == 0, res.output
    assert web.requests == ["/yago_qec.json"]


def test_sha256_mismatch_is_refused_before_writing(hf_env, web, yago_file, run_cli, db_path):
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = snapshot(db_path)
    wrong = "0" * 64
    for spec in (f"{web.url}/yago_qec.json", str(yago_file)):
        line = one_line_error(run_cli("ingest", "yago-qec", spec, "--sha256", wrong))
        assert (
            f"{spec}: sha256 is {hashlib.sha256(yago_file.read_bytes()).hexdigest()} but --sha256 expects {wrong}"
            in line
        )
    assert "64 hexadecimal digits" in one_line_error(
        run_cli("ingest", "yago-qec", yago_file, "--sha256", "abc")
    )
    assert snapshot(db_path) == before


def test_url_errors_are_one_line(hf_env, web, run_cli, db_path, monkeypatch):
    from hub_mock import StaticServer

    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = snapshot(db_path)
    assert "HTTP 404" in one_line_error(run_cli("ingest", "yago-qec", f"{web.url}/nope.json"))
    # a downloaded file's problems name the URL, not the cache path
    line = one_line_error(run_cli("ingest", "yago-qec", f"{web.url}/broken.json"))
    assert line.startswith(f"Error: {web.url}/broken.json: malformed JSON")
    refused = f"{StaticServer.refusing()}/yago_qec.json"
    line = one_line_error(run_cli("ingest", "yago-qec", refused))
    assert f"{refused}: cannot download" in line and "pass the local path instead" in line
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    line = one_line_error(run_cli("ingest", "yago-qec", f"{web.url}/yago_qec.json"))
    assert "HF_HUB_OFFLINE is set" in line and "pass the local path instead" in line
    assert snapshot(db_path) == before
    assert not list((hf_env / "assets").rglob("*.part"))


def test_a_truncated_download_is_never_cached(hf_env, web, yago_file, run_cli, db_path, monkeypatch):
    """Issue 19 D3: a transfer cut short (fewer bytes than its Content-Length) is retried, and
    never moved into the cache; when every attempt breaks, one whole line says nothing was cached
    and what to do, and the next run (server fixed) downloads again. A broken file already in the
    cache (an older ctxprior's) is removed by the reader, whose message is not cut mid-sentence."""
    from ctxprior.ingest import sources

    monkeypatch.setattr(sources, "URL_BACKOFF", 0.0, raising=False)  # no waits between attempts
    url = f"{web.url}/yago_qec.json"
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = open(db_path, "rb").read()
    cache = sources.url_cache_path(url)
    web.truncate = 3  # every attempt cut short
    line = one_line_error(run_cli("ingest", "yago-qec", url))
    assert f"{url}: the download broke off" in line and "nothing was cached" in line, line
    assert "pass the local path instead" in line and line.endswith("instead"), line
    assert web.requests == ["/yago_qec.json"] * 3 and not cache.exists()
    assert not list((hf_env / "assets").rglob("*.part")) and open(db_path, "rb").read() == before
    web.truncate = 1  # the first attempt cut short, the second whole
    res = run_cli("ingest", "yago-qec", url)
    assert res.exit_code == 0, res.output
    assert len(web.requests) == 5 and cache.read_bytes() == yago_file.read_bytes()
    # a truncated file left in the cache by an older version: refused, removed, fetched anew
    cache.write_bytes(yago_file.read_bytes()[:500])
    line = one_line_error(run_cli("ingest", "yago-qec", url, "--name", "again"))
    assert re.search(rf"{re.escape(url)}: truncated JSON \(\w[^()]* at line \d+ column \d+\); ", line), line
    assert "the cached download was removed, so the next run downloads it again" in line
    assert not cache.exists() and len(web.requests) == 5
    res = run_cli("ingest", "yago-qec", url, "--name", "again")
    assert res.exit_code == 0, res.output
    assert len(web.requests) == 6 and cache.read_bytes() == yago_file.read_bytes()


def test_ingest_from_the_hub_records_the_commit(hub, tmp_path, yago_file, run_cli, db_path, monkeypatch):
    first = hub.add_dataset("lab/yago", {"data/yago_qec.json": yago_file.read_bytes()})
    other = tmp_path / "other.json"
    make_yago_qec(other, n_relations=2, n_facts=5, seed=9)
    head = hub.add_dataset("lab/yago", {"data/yago_qec.json": other.read_bytes()}, summary="smaller file")
    res = run_cli("ingest", "yago-qec", "hf://datasets/lab/yago/data/yago_qec.json", "--name", "latest")
    assert res.exit_code == 0, res.output
    res = run_cli(
        "ingest",
        "yago-qec",
        f"hf://datasets/lab/yago@{first}/data/yago_qec.json",
        "--name",
        "pinned",
        "--relation",
        "reverse-memberOf",
    )
    assert res.exit_code == 0, res.output
    with open_store(db_path, read_only=True) as store:
        rows = dict(
            (n, (p, s)) for n, p, s in store.query("SELECT name, source_path, source_sha256 FROM dataset")
        )
        assert rows["latest"] == (
            f"hf://datasets/lab/yago@{head}/data/yago_qec.json",
            hashlib.sha256(other.read_bytes()).hexdigest(),
        )
        assert rows["pinned"] == (
            f"hf://datasets/lab/yago@{first}/data/yago_qec.json",
            hashlib.sha256(yago_file.read_bytes()).hexdigest(),
        )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a pinned commit in the cache needs no network
    n = len(hub.requests)
    res = run_cli(
        "ingest", "yago-qec", f"hf://datasets/lab/yago@{first}/data/yago_qec.json", "--name", "offline"
    )
    assert res.exit_code == 0, res.output
    assert len(hub.requests) == n


def test_hub_errors_are_one_line(hub, yago_file, run_cli, db_path, monkeypatch):
    hub.add_dataset("lab/yago", {"yago_qec.json": yago_file.read_bytes()})
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    before = snapshot(db_path)
    cases = {
        "hf://datasets/lab/nope/yago_qec.json": "no dataset repository lab/nope",
        "hf://datasets/lab/yago@v9/yago_qec.json": "has no revision 'v9'",
        "hf://datasets/lab/yago/missing.json": "has no file missing.json at revision main",
        "hf://models/lab/yago/yago_qec.json": "not a Hub file path",
        "hf://datasets/lab/yago": "not a Hub file path",
    }
    for spec, expect in cases.items():
        assert expect in one_line_error(run_cli("ingest", "yago-qec", spec)), spec
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    line = one_line_error(run_cli("ingest", "yago-qec", "hf://datasets/lab/yago/yago_qec.json"))
    assert (
        "HF_HUB_OFFLINE is set" in line and f"{hub.url}/datasets/lab/yago/resolve/main/yago_qec.json" in line
    )
    assert "pass the local path instead" in line
    assert snapshot(db_path) == before


def test_hub_and_url_tests_ignore_the_shells_offline_switches(tmp_path):
    """Issue 19: with HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 in the shell (common on offline
    GPU clusters), the Hub and URL tests still pass: each sets the environment it needs."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    tests = Path(__file__).resolve().parent
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(tests / "test_ingest.py"),
            "-k",
            "test_ingest_from_url_is_cached_and_recorded or test_ingest_from_the_hub_records_the_commit",
            "--basetemp",
            str(tmp_path / "t"),
        ],
        cwd=tests.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0 and "2 passed" in res.stdout, res.stdout[-3000:] + res.stderr[-2000:]
