"""The warehouse's open / write protocol (issue 27; docs/write-protocol.md): one open function,
no second handle on the file, no user query reaching the file, waits that end, faults that end
in one line (a full disk on a real small tmpfs, not a resource limit)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from scale_helpers import SCORE, copy_db, duplicates, run_cli_child, scored_base, snapshot

from ctxprior.sqlfiles import ident

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxprior"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return scored_base(tmp_path_factory.mktemp("protocol"))


@pytest.fixture
def tmpfs(tmp_path):
    """A 14 MiB tmpfs (the tests run as root, as CI does): a disk that really fills up."""
    d = tmp_path / "disk"
    d.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=14m", "tmpfs", str(d)], capture_output=True)
    assert res.returncode == 0, f"this test mounts a tmpfs (needs root): {res.stderr.decode()}"
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def integrity(store) -> None:
    """Read every row of every table (DuckDB verifies each block's checksum as it reads it)."""
    for t in store.table_names():
        store.arrow(f"SELECT * FROM {ident(t)}")


def _fill(folder: Path, leave: int) -> None:
    """Leave about ``leave`` bytes free on the file system of ``folder``."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - leave))


@pytest.mark.slow
@pytest.mark.parametrize("leave", [1_900_000, 2_300_000])
def test_full_disk_mid_run_ends_in_one_line_not_an_abort(base, tmpfs, tmp_path, leave):
    """A run whose checkpoint meets a full disk while the next unit computes used to print the
    clean error and then abort at interpreter exit (the compute thread still inside torch):
    "terminate called without an active exception", exit 134."""
    db = copy_db(base["db"], tmpfs / "w.duckdb")
    _fill(tmpfs, leave)
    code, out = run_cli_child(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "c.log")
    assert code == 2, out
    err = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert len(err) == 1 and "No space left on device" in err[0] and "intact" in err[0], out
    assert "terminate called" not in out and "Traceback" not in out
    os.unlink(tmpfs / "filler")  # space back: the warehouse opens, checks, and the run finishes exactly
    from ctxprior.schema import open_store

    with open_store(db, read_only=True) as store:
        integrity(store)
    code, out = run_cli_child(["--db", db, *SCORE, "--model", base["tiny"]], tmp_path / "d.log")
    assert code == 0, out
    assert snapshot(db) == base["ref"] and duplicates(db) == 0
