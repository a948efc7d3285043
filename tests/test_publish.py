"""`ctxprior publish` / `ctxprior pull`: the dry-run folder, the card, `datasets` loading every
config, and the upload path against a local stand-in for the Hub (tests/hub_mock.py)."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner
from hub_mock import HubMock, subprocess_env
from parquet_fixtures import build_warehouse
from warehouse_helpers import assert_same_warehouse

REPO = "ctx-lab/pythia-scores"
TOKEN = "hf_ctxpriorTEST" + secrets.token_hex(12)


def cli(*args, db: str):
    from ctxprior.cli import cli as root

    return CliRunner().invoke(root, ["--db", db, *map(str, args)], catch_exceptions=False)


def front_matter(readme: Path) -> dict:
    m = re.match(r"^---\n(.*?)\n---\n", readme.read_text(encoding="utf-8"), re.S)
    assert m, "README.md has no YAML front matter"
    return yaml.safe_load(m.group(1))


def q(db: str, sql: str):
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def hub_env(tmp_path: Path, mock: HubMock | None = None, token: str | None = TOKEN, **extra) -> dict:
    """A clean environment for a ctxprior subprocess: HF state under tmp_path, only 127.0.0.1."""
    env = subprocess_env()  # no HF_* / TRANSFORMERS_OFFLINE from the shell running the tests
    env.update(
        {
            "HF_HOME": str(tmp_path / "hf_home"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",  # the mock speaks LFS, not xet
            "HF_HUB_VERBOSITY": "debug",  # the most logging huggingface_hub can do: grep it for the token
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if mock is not None:
        env["HF_ENDPOINT"] = mock.url
    else:
        env["HF_HUB_OFFLINE"] = "1"
    if token:
        env["HF_TOKEN"] = token
    env.update(extra)
    return env


def run_ctxprior(args: list, env: dict, db: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from ctxprior.cli import main; main()", "--db", db, *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> str:
    return build_warehouse(str(tmp_path_factory.mktemp("pub") / "src.duckdb"))


@pytest.fixture(scope="module")
def dry(src, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dry") / "repo"
    r = cli(
        "publish",
        REPO,
        "--dry-run",
        out,
        "--license",
        "cc-by-4.0",
        "--citation",
        "@misc{lab2026scores, title={Pythia context-vs-prior scores}, year={2026}}",
        db=src,
    )
    assert r.exit_code == 0, r.output
    return out


_counts: dict[tuple, int] = {}


def expected_rows(db: str, name: str, runs: list[int]) -> int:
    """Rows of a table/view in the warehouse, restricted to ``runs`` when it has a run_id column."""
    key = (db, name, tuple(runs))
    if key not in _counts:
        con = duckdb.connect(db, read_only=True)
        try:
            for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
                cols = [
                    r[0]
                    for r in con.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_name=?", [t]
                    ).fetchall()
                ]
                where = f" WHERE run_id IN ({','.join(map(str, runs))})" if "run_id" in cols else ""
                _counts[(db, t, tuple(runs))] = con.execute(f'SELECT count(*) FROM "{t}"{where}').fetchone()[
                    0
                ]
        finally:
            con.close()
    return _counts[key]


# -- the dry run ----------------------------------------------------------------------------------


def test_dry_run_layout_configs_and_manifest(dry, src):
    m = json.loads((dry / "manifest.json").read_text())
    fm = front_matter(dry / "README.md")
    published = [e for e in m["tables"] if e["files"]]
    listed = {c["config_name"]: c for c in fm["configs"]}
    assert set(listed) == {e["name"] for e in published}
    tables = set(q(src, "SELECT table_name FROM information_schema.tables WHERE table_type='BASE TABLE'"))
    from ctxprior.publish.parquet import heavy_tables

    assert {e["name"] for e in m["tables"] if e["kind"] == "table"} == {t for (t,) in tables} - heavy_tables()
    assert {e["name"] for e in published if e["kind"] == "view"} >= {"v_persuasion", "v_susceptibility"}
    assert m["runs"] == [1]  # default: finished runs only (run 2 failed)
    assert m["left_out"] and "prompt_topk" in m["left_out"]
    files = sorted(p.relative_to(dry).as_posix() for p in dry.rglob("*") if p.is_file())
    assert files == sorted(
        ["README.md", "manifest.json"] + [f["path"] for e in published for f in e["files"]]
    )
    for e in published:
        cfg = listed[e["name"]]
        assert cfg["data_files"] == [{"split": "train", "path": f"data/{e['name']}/*.parquet"}]
        for f in e["files"]:
            assert hashlib.sha256((dry / f["path"]).read_bytes()).hexdigest() == f["sha256"]
        assert e["rows"] == expected_rows(src, e["name"], [1]) > 0
    for e in m["tables"]:
        if not e["files"]:
            assert expected_rows(src, e["name"], [1]) == 0
    assert [c for c in fm["configs"] if c.get("default")] == [listed["v_susceptibility"]]
    assert fm["license"] == "cc-by-4.0"


def test_card_describes_every_column_runs_method_and_usage(dry, src):
    from ctxprior import __version__

    text = (dry / "README.md").read_text(encoding="utf-8")
    m = json.loads((dry / "manifest.json").read_text())
    for e in (e for e in m["tables"] if e["files"]):
        sec = text.split(f"### `{e['name']}`\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        for c in e["columns"]:
            row = re.search(rf"^\| `{re.escape(c['name'])}` \| {re.escape(c['type'])} \| (.*) \|$", sec, re.M)
            assert row, f"{e['name']}.{c['name']} missing from the card"
            assert row.group(1).strip(), f"{e['name']}.{c['name']} has no meaning in the card"
        assert re.search(rf"^\| `{e['name']}` \| {e['kind']} \| {e['rows']:,} \|", text, re.M)
    # meanings come from the schema comments
    assert "KL(p(A|c,q(e)) || p(A|q(e)))".replace("|", "\\|") in text
    # runs and models with revisions, how scores were computed
    model, rev = q(src, "SELECT model, model_revision FROM run WHERE run_id = 1")[0]
    assert f"`{model}` revision `{rev}`" in text
    assert "## How the scores were computed" in text and "mixture over the sampled contexts" in text
    assert "`first-token`" in text
    assert f"ctxprior {__version__}" in text
    # license, citations, loading examples
    assert "`cc-by-4.0`" in text
    assert "@misc{lab2026scores" in text and "@inproceedings{du2024context" in text
    assert f'load_dataset("{REPO}", "v_susceptibility", split="train")' in text
    assert f"'hf://datasets/{REPO}/data/v_susceptibility/*.parquet'" in text
    assert f"pull {REPO}" in text
    assert "`prompt_topk`" in text  # named as left out


def test_every_config_loads_with_datasets_offline(dry, src, tmp_path):
    """datasets.load_dataset(DIR, CONFIG) for every config, offline; row counts match the warehouse."""
    configs = [c["config_name"] for c in front_matter(dry / "README.md")["configs"]]
    code = (
        "import json, sys, datasets\n"
        "out = {}\n"
        "for c in sys.argv[2:]:\n"
        "    ds = datasets.load_dataset(sys.argv[1], c, split='train', cache_dir=sys.argv[1] + '_cache')\n"
        "    out[c] = [ds.num_rows, sorted(ds.column_names)]\n"
        "print(json.dumps(out))\n"
    )
    work = tmp_path / "copy"
    import shutil

    shutil.copytree(dry, work)
    env = hub_env(
        tmp_path,
        None,
        token=None,
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "ds_cache"),
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(work), *configs],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(got) == set(configs)
    m = {e["name"]: e for e in json.loads((dry / "manifest.json").read_text())["tables"]}
    for c, (n, cols) in got.items():
        assert n == expected_rows(src, c, [1]) == m[c]["rows"], c
        assert cols == sorted(x["name"] for x in m[c]["columns"]), c


def test_include_distributions_and_runs(src, tmp_path):
    out = tmp_path / "repo"
    r = cli("publish", REPO, "--dry-run", out, "--include-distributions", "--runs", "1,2", db=src)
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    rows = {e["name"]: e["rows"] for e in m["tables"]}
    assert rows["prompt_topk"] == expected_rows(src, "prompt_topk", [1, 2]) > 0
    assert rows["persuasion"] == expected_rows(src, "persuasion", [1, 2])
    assert m["runs"] == [1, 2] and m["left_out"] == []
    assert "prompt_topk" in {c["config_name"] for c in front_matter(out / "README.md")["configs"]}
    r = cli("publish", REPO, "--dry-run", tmp_path / "r2", "--runs", "7", db=src)
    assert r.exit_code == 2 and "--runs 7: no such run" in r.output


@pytest.mark.parametrize(
    "args, msg",
    [
        (["not-a-repo-id"], "not a Hub dataset id"),
        (["a/b", "--license", "CC BY 4.0"], "not a license identifier"),
    ],
)
def test_publish_bad_input_exit_2(src, tmp_path, args, msg):
    r = cli("publish", *args, "--dry-run", tmp_path / "x", db=src)
    assert r.exit_code == 2 and msg in r.output
    assert not (tmp_path / "x").exists()


def test_pull_local_folder_rebuilds_the_published_tables(dry, src, tmp_path):
    dst = str(tmp_path / "pulled.duckdb")
    r = cli("pull", dry, db=dst)
    assert r.exit_code == 0, r.output
    m = json.loads((dry / "manifest.json").read_text())
    # tables without run_id are whole; score tables hold run 1 only
    whole = [
        e["name"]
        for e in m["tables"]
        if e["kind"] == "table" and e["files"] and "run_id" not in {c["name"] for c in e["columns"]}
    ]
    assert_same_warehouse(src, dst, whole)
    for e in m["tables"]:
        if e["kind"] == "table":
            assert q(dst, f'SELECT count(*) FROM "{e["name"]}"')[0][0] == e["rows"]
    assert q(dst, "SELECT DISTINCT run_id FROM persuasion") == [(1,)]
    r = cli("pull", dry, db=dst)
    assert r.exit_code == 2 and "already has rows" in r.output
    assert cli("pull", dry, "--merge", db=dst).exit_code == 0
    r = cli("pull", tmp_path / "nope" / "x", db=str(tmp_path / "n.duckdb"))
    assert r.exit_code == 2 and not (tmp_path / "n.duckdb").exists()


# -- the upload path, against the local Hub stand-in ------------------------------------------------


@pytest.fixture
def hub():
    mock = HubMock(TOKEN)
    yield mock
    mock.close()


def _assert_no_token(tmp_path: Path, *texts: str) -> None:
    for t in texts:
        assert TOKEN not in t
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert TOKEN.encode() not in p.read_bytes(), f"token written to {p}"


def test_publish_uploads_one_commit_and_skips_unchanged(src, dry, tmp_path, hub):
    from ctxprior import __version__

    db = str(tmp_path / "wh.duckdb")
    Path(db).write_bytes(Path(src).read_bytes())
    env = hub_env(tmp_path, hub, token=None, CTX_TOKEN=TOKEN)
    args = [
        "publish",
        REPO,
        "--token-env",
        "CTX_TOKEN",
        "--license",
        "cc-by-4.0",
        "--citation",
        "@misc{lab2026scores, title={Pythia context-vs-prior scores}, year={2026}}",
    ]
    r1 = run_ctxprior(args, env, db)
    assert r1.returncode == 0, r1.stderr[-3000:]

    # the requests huggingface_hub made, in order
    api = [
        (x.method, x.path) for x in hub.requests if not x.path.startswith(("/__lfs", "/api/agent-harnesses"))
    ]
    assert api == [
        ("POST", "/api/repos/create"),
        ("GET", f"/api/datasets/{REPO}"),
        ("POST", "/api/validate-yaml"),
        ("POST", f"/api/datasets/{REPO}/preupload/main"),
        ("POST", f"/datasets/{REPO}.git/info/lfs/objects/batch"),
        ("POST", f"/api/datasets/{REPO}/commit/main"),
    ]
    create = hub.calls("POST", "/api/repos/create")[0].json()
    assert create["organization"], create["name"] == tuple(REPO.split("/"))
    assert create["type"] == "dataset" and create.get("visibility") != "private"
    assert (
        hub.calls("GET", f"/api/datasets/{REPO}$")[0].query["blobs"] == ["True"]
        or hub.calls("GET", f"/api/datasets/{REPO}$")[0].query["blobs"][0].lower() == "true"
    )
    for x in hub.requests:
        if not x.path.startswith(("/__lfs", "/api/agent-harnesses")):
            assert x.headers.get("authorization") == f"Bearer {TOKEN}", x.path

    local = {p.relative_to(dry).as_posix(): p.read_bytes() for p in dry.rglob("*") if p.is_file()}
    parquet = sorted(p for p in local if p.endswith(".parquet"))
    pre = hub.calls("POST", "/preupload/")[0].json()["files"]
    assert sorted(f["path"] for f in pre) == sorted(local)
    batch = hub.calls("POST", "lfs/objects/batch")[0].json()
    assert sorted(o["oid"] for o in batch["objects"]) == sorted(
        hashlib.sha256(local[p]).hexdigest() for p in parquet
    )
    assert len(hub.calls("PUT", "^/__lfs/")) == len({hashlib.sha256(local[p]).hexdigest() for p in parquet})

    commit = hub.calls("POST", "/commit/main")[0].ndjson()
    header = commit[0]["value"]
    assert f"ctxprior {__version__}" in header["summary"] and "runs 1" in header["summary"]
    ops = {(o["key"], o["value"]["path"]) for o in commit[1:]}
    assert ops == {("lfsFile", p) for p in parquet} | {("file", "README.md"), ("file", "manifest.json")}

    # the Hub now holds exactly the dry-run folder (same bytes), in one commit
    commits = hub.commits(REPO)
    assert len(commits) == 2  # the repo's initial commit + ours
    remote = {p: hub.file_bytes(REPO, p) for p in hub.repos[REPO].files if p != ".gitattributes"}
    assert remote == local

    # re-publishing the unchanged warehouse: no upload, no commit
    n = len(hub.requests)
    env2 = hub_env(tmp_path, hub)  # token from HF_TOKEN this time
    r2 = run_ctxprior(args[:2] + args[4:], env2, db)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert "unchanged" in r2.stdout and "no commit" in r2.stdout
    later = [(x.method, x.path) for x in hub.requests[n:] if x.path != "/api/agent-harnesses"]
    assert later == [("POST", "/api/repos/create"), ("GET", f"/api/datasets/{REPO}")]
    assert len(hub.commits(REPO)) == 2

    # a changed warehouse: one new commit with only the changed files, stale data files deleted
    con = duckdb.connect(db)
    con.execute("UPDATE run SET status = 'done' WHERE run_id = 2")
    con.execute("DELETE FROM generation")  # generation + v_memorization become empty -> deleted
    con.close()
    n = len(hub.requests)
    r3 = run_ctxprior(args[:2] + args[4:] + ["--message", "Add run 2"], env2, db)
    assert r3.returncode == 0, r3.stderr[-3000:]
    assert len(hub.commits(REPO)) == 3
    last = hub.commits(REPO)[-1]
    assert last["summary"] == "Add run 2" and "runs 1, 2" in last["description"]
    kinds = {k for k, _ in last["paths"]}
    paths = {p for _, p in last["paths"]}
    assert ("deletedFile", "data/generation/generation-00000-of-00001.parquet") in last["paths"]
    assert "deletedFile" in kinds and "lfsFile" in kinds
    assert "data/entity/entity-00000-of-00001.parquet" not in paths  # unchanged: not re-sent
    assert not any(p.startswith("data/generation/") for p in hub.repos[REPO].files)

    _assert_no_token(
        tmp_path,
        r1.stdout,
        r1.stderr,
        r2.stdout,
        r2.stderr,
        r3.stdout,
        r3.stderr,
        *(c["summary"] + c["description"] for c in hub.commits(REPO)),
    )
    for p in hub.repos[REPO].files:
        assert TOKEN.encode() not in hub.file_bytes(REPO, p)
    assert TOKEN.encode() not in Path(db).read_bytes()


def test_publish_private_and_token_errors(src, tmp_path, hub):
    db = src
    # no token anywhere: refused before anything is sent
    r = run_ctxprior(["publish", REPO], hub_env(tmp_path, hub, token=None), db)
    assert r.returncode == 2 and "no Hugging Face token" in r.stderr
    r = run_ctxprior(["publish", REPO, "--token-env", "NOPE_TOKEN"], hub_env(tmp_path, hub), db)
    assert r.returncode == 2 and "NOPE_TOKEN is not set" in r.stderr
    assert [x for x in hub.requests if x.path != "/api/agent-harnesses"] == []
    # a token the Hub rejects: one clear line, the token not in it
    bad = "hf_wrongTOKEN" + secrets.token_hex(8)
    r = run_ctxprior(["publish", REPO], hub_env(tmp_path, hub, token=bad), db)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "token was rejected" in r.stderr and bad not in r.stderr + r.stdout
    assert "Traceback" not in r.stderr
    assert REPO not in hub.repos
    _assert_no_token(tmp_path, r.stdout, r.stderr)


def test_private_publish_then_pull_from_the_hub(src, dry, tmp_path, hub):
    r = run_ctxprior(["publish", REPO, "--private"], hub_env(tmp_path, hub), src)
    assert r.returncode == 0, r.stderr[-3000:]
    assert hub.calls("POST", "/api/repos/create")[-1].json().get("visibility") == "private"
    assert hub.repos[REPO].private
    dst = str(tmp_path / "pulled.duckdb")
    r = run_ctxprior(["pull", REPO], hub_env(tmp_path, hub), dst)
    assert r.returncode == 0, r.stderr[-3000:]
    downloaded = {
        re.sub(r"^/datasets/[^/]+/[^/]+/resolve/[^/]+/", "", x.path) for x in hub.calls("GET", "/resolve/")
    }
    m = json.loads((dry / "manifest.json").read_text())
    assert downloaded == {"manifest.json"} | {
        f["path"] for e in m["tables"] if e["kind"] == "table" for f in e["files"]
    }  # views are not downloaded
    ref = str(tmp_path / "ref.duckdb")
    assert cli("pull", dry, db=ref).exit_code == 0
    assert_same_warehouse(ref, dst)
    # the private repo is invisible without the token
    # (a fresh HF_HOME: with files in its cache, huggingface_hub would serve them from there)
    r = run_ctxprior(
        ["pull", REPO], hub_env(tmp_path / "anon", hub, token=None), str(tmp_path / "anon.duckdb")
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert not (tmp_path / "anon.duckdb").exists()
    _assert_no_token(tmp_path, r.stdout, r.stderr)
