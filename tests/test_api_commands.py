"""The API methods the commands call, used from Python as a notebook would, and the table in
docs/api.md that pairs each command with its method."""

from __future__ import annotations

import re

import click
import pandas as pd
import pytest
from conftest import ROOT

import ctxprior
from ctxprior import api
from ctxprior.cli import cli
from ctxprior.errors import UserError
from ctxprior.schema import SCHEMA_VERSION


def _leaf_commands(group: click.Group, prefix: str = "ctxprior") -> list[str]:
    out = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # a group may make its commands when asked (ingest)
        cmd = group.get_command(ctx, name)
        leaf = not isinstance(cmd, click.Group)
        out += [f"{prefix} {name}"] if leaf else _leaf_commands(cmd, f"{prefix} {name}")
        if isinstance(cmd, click.Group) and cmd.invoke_without_command:
            out.append(f"{prefix} {name}")
    return out


def test_the_reference_pairs_every_command_with_an_api_method():
    text = (ROOT / "docs" / "api.md").read_text()
    table = dict(re.findall(r"^\| `(ctxprior [a-z -]+)` \| (.+) \|$", text, re.M))
    missing = [c for c in _leaf_commands(cli) if c not in table]
    assert not missing, f"commands without a row in docs/api.md: {missing}"
    for command, cell in table.items():
        for anchor in re.findall(r"\(#ctxprior\.api\.([A-Za-z_.]+)\)", cell):
            obj = api
            for part in anchor.split("."):
                obj = getattr(obj, part, None)
            assert obj is not None, f"{command}: docs/api.md links to a missing ctxprior.api.{anchor}"


@pytest.fixture
def demo(tmp_path):
    wh = ctxprior.open(tmp_path / "w.duckdb", write=True)
    wh.datasets.ingest_demo(["demo"])
    return wh


def test_query_fakes_and_covariates_return_python_values(demo):
    rows = demo.query("SELECT getvariable('n') AS n; SELECT getvariable('n') + 1 AS m", {"n": "41"})
    assert rows.columns == ["m"] and rows.rows == [(42,)]
    assert rows.format("csv").splitlines() == ["m", "42"]
    assert isinstance(rows.to_pandas(), pd.DataFrame)
    fakes = demo.fakes.list("demo")
    assert "relation" in fakes.columns and len(fakes.rows) == 9
    assert demo.covariates.list().empty  # no catalog table yet: an empty frame, as the command says
    with pytest.raises(UserError, match="--only nope: use "):
        demo.analyses.run(only="relevance,nope")


def test_export_import_and_pull_round_trip(demo, tmp_path):
    manifest = demo.parquet.export(tmp_path / "out", tables="dataset,relation")
    assert [e["name"] for e in manifest["tables"]] == ["dataset", "relation"]
    full = demo.parquet.export(tmp_path / "full")
    copy = ctxprior.open(tmp_path / "copy.duckdb", write=True)
    added = copy.parquet.load(tmp_path / "full")
    assert added["fact"] == int(demo.sql("SELECT count(*) AS n FROM fact")["n"][0])
    folder, again = ctxprior.open(tmp_path / "pulled.duckdb", write=True).hub.pull(tmp_path / "full")
    assert str(folder) == str(tmp_path / "full") and again == added
    assert full["tables"]


def test_pull_and_import_check_the_folder_before_creating_the_warehouse(tmp_path):
    wh = ctxprior.open(tmp_path / "new.duckdb", write=True)
    with pytest.raises(UserError):
        wh.hub.pull(tmp_path / "nowhere")
    with pytest.raises(UserError):
        wh.parquet.load(tmp_path)
    assert not (tmp_path / "new.duckdb").exists()


def test_read_only_warehouse_refuses_writes_and_migrate_needs_a_file(demo, tmp_path):
    ro = ctxprior.open(demo.path)
    with pytest.raises(UserError, match="opened read-only"):
        ro.fakes.add(tmp_path / "names.txt", "demo", "capital")
    with pytest.raises(UserError, match="no warehouse at"):
        api.migrate(tmp_path / "missing.duckdb")
    assert api.migrate(demo.path) == [f"{demo.path} is already at schema v{SCHEMA_VERSION}"]


def test_migrate_is_exported_at_the_top():
    assert ctxprior.migrate is api.migrate and "migrate" in dir(ctxprior)


def test_commands_call_the_new_paths_not_the_deprecated_names():
    """No command calls a part as a function (``wh.runs()``): a part's listing is its ``list()``."""
    old = "|".join(["datasets", "samples", "runs", "fakes"])
    call = re.compile(rf"(?:api\([^)]*\)|\bwh)\.({old})\(")
    for f in sorted((ROOT / "src" / "ctxprior" / "commands").glob("*.py")):
        assert not call.findall(f.read_text()), f"{f.name} calls {call.findall(f.read_text())}"
