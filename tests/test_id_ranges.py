"""Issue 42 item 10 (seen 10): an id option is checked against its column's type before any query.
Run, sample and dataset ids are INTEGER columns, so ``--run 2147483648`` (and 2**63 - 1) is one
line from the ``Option`` declaration (``options.ID_MAX``), never a DuckDB overflow traceback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import sqlalchemy as sa

from ctxprior.options import ID_MAX
from ctxprior.schema import metadata
from ctxprior.storage import open_store

HUGE = ("2147483648", "9223372036854775807", "99999999999999999999999")


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.quick
def test_id_max_is_the_id_columns_type():
    """Every run / sample / dataset id column is a 32-bit INTEGER: ID_MAX is its largest value."""
    import ctxprior.schema  # noqa: F401  (every table module registers on the metadata)

    found = 0
    for table in metadata.tables.values():
        for col in table.columns:
            if col.name in ("run_id", "sample_id", "dataset_id"):
                assert type(col.type) is sa.Integer, (table.name, col.name, col.type)
                found += 1
    assert found >= 3 and ID_MAX == 2**31 - 1


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", "--run"),
        ("figures", "--out", "figs", "--run"),
        ("report", "--run"),
        ("analyze-dynamic", "--run"),
        ("runs", "cancel"),
        ("runs", "resume"),
        ("score", "--model", "m", "--sample"),
        ("covariates", "known", "--run"),
        ("export", "parquet", "out", "--runs"),
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_an_id_out_of_range_is_one_line_before_any_query(run_cli, db_path, tmp_path, args):
    open_store(db_path, read_only=False).close()  # a warehouse to leave unchanged
    before = _sha(db_path)
    for value in HUGE:
        res = run_cli(*[str(tmp_path / a) if a in ("figs", "out") else a for a in args], value)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
        assert value[:20] in lines[0] and "Traceback" not in res.output
    assert _sha(db_path) == before
    assert not (tmp_path / "figs").exists() and not (tmp_path / "out").exists()
