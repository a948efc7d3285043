"""Tampered import / pull folders (issue 27, seen item 6): schema, column types and keys are checked
before anything is written, each problem is one line naming the table and column, and a failed
import or pull leaves no warehouse behind (``publish/validate.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from parquet_fixtures import build_warehouse

from ctxprior.digest import sha256_file


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    from ctxprior.publish.parquet import export_parquet, select
    from ctxprior.storage import open_store

    d = tmp_path_factory.mktemp("export")
    db = build_warehouse(str(d / "s.duckdb"))
    with open_store(db, read_only=True) as store:
        export_parquet(store, d / "e", select(store))
    return d / "e"


def copy_of(exported: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(exported, tmp_path / "folder"))


def rewrite(folder: Path, table: str, change) -> None:
    """Replace ``table``'s first file with ``change(arrow table)`` and make the manifest agree with
    it (sha256, bytes, rows), as a careful tamperer would."""
    m = json.loads((folder / "manifest.json").read_text())
    entry = next(e for e in m["tables"] if e["name"] == table)
    f = entry["files"][0]
    path = folder / f["path"]
    new = change(pq.read_table(path))
    pq.write_table(new, path)
    entry["rows"] += new.num_rows - f["rows"]
    f.update(rows=new.num_rows, bytes=path.stat().st_size, sha256=sha256_file(path))
    (folder / "manifest.json").write_text(json.dumps(m))


def add_table(folder: Path, name: str) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    path = folder / "data" / name / "0.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"a": [1, 2]}), path)
    m["tables"].append(
        {
            "name": name,
            "kind": "table",
            "rows": 2,
            "columns": [{"name": "a", "type": "INTEGER"}],
            "files": [
                {
                    "path": f"data/{name}/0.parquet",
                    "rows": 2,
                    "bytes": path.stat().st_size,
                    "sha256": sha256_file(path),
                }
            ],
        }
    )
    (folder / "manifest.json").write_text(json.dumps(m))


def refused(res, dst: Path, *words) -> None:
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for w in words:
        assert w in lines[0], res.output
    assert not dst.exists() and not Path(str(dst) + ".wal").exists()  # untouched, and uncreated


@pytest.mark.parametrize("command", ["import", "pull"])
def test_a_type_mismatch_is_one_line_and_nothing_is_created(run_cli, exported, tmp_path, command):
    folder = copy_of(exported, tmp_path)
    rewrite(
        folder,
        "persuasion",
        lambda t: t.set_column(
            t.schema.get_field_index("persuasion"), "persuasion", pa.array(["abc"] * t.num_rows)
        ),
    )
    dst = tmp_path / "d.duckdb"
    args = ("import", "parquet", folder) if command == "import" else ("pull", folder)
    refused(run_cli(*args, db=str(dst)), dst, "table persuasion column persuasion", "values are not DOUBLE")


@pytest.mark.parametrize("command", ["import", "pull"])
def test_duplicate_score_rows_are_refused(run_cli, exported, tmp_path, command):
    folder = copy_of(exported, tmp_path)
    rewrite(folder, "persuasion", lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    dst = tmp_path / "d.duckdb"
    args = ("import", "parquet", folder) if command == "import" else ("pull", folder)
    refused(run_cli(*args, db=str(dst)), dst, "table persuasion has 2 rows with the same key (run_id=")


def test_duplicate_primary_keys_are_refused(run_cli, exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    rewrite(folder, "entity", lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    dst = tmp_path / "d.duckdb"
    refused(
        run_cli("pull", folder, db=str(dst)), dst, "table entity has 2 rows with the same key (entity_id="
    )


def test_pull_creates_no_tables_of_its_own(run_cli, exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    add_table(folder, "evil")
    dst = tmp_path / "d.duckdb"
    refused(run_cli("pull", folder, db=str(dst)), dst, "table evil is not a ctxprior table")


def test_import_refuses_a_table_named_like_a_view(run_cli, exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    add_table(folder, "v_susceptibility")
    dst = tmp_path / "d.duckdb"
    refused(
        run_cli("import", "parquet", folder, db=str(dst)), dst, "v_susceptibility", "names a ctxprior view"
    )


def test_a_missing_column_names_the_file(run_cli, exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    rewrite(folder, "run", lambda t: t.drop_columns(["model"]))
    dst = tmp_path / "d.duckdb"
    refused(run_cli("pull", folder, db=str(dst)), dst, "column model of table run", "is missing")


def test_a_failed_import_after_opening_leaves_no_new_file(run_cli, exported, tmp_path, monkeypatch):
    from ctxprior.errors import UserError
    from ctxprior.publish import parquet

    def fail(*a, **k):
        raise UserError("injected")

    monkeypatch.setattr(parquet, "_load", fail)
    dst = tmp_path / "d.duckdb"
    refused(run_cli("import", "parquet", exported, db=str(dst)), dst, "injected")
