"""A named read is the file, by identity (issue 42, seen 2 and 5; docs/write-protocol.md, "Named
reads"): ``sql --allow-read FILE`` lets DuckDB read exactly the file FILE names when the command
starts (its real path, ``sandbox.named_reads``), DuckDB's temp directory is a private folder (never
``<db>.tmp``, which a link could point anywhere), a file replaced under a query is not read as the
file named, and the warehouse itself is never read through a computed path. Each probe ends in one
line, exit 2, nothing secret in the output, the warehouse byte for byte unchanged."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from ctxprior.errors import UserError
from ctxprior.storage import open_store
from ctxprior.storage.sandbox import private_temp, read_paths

SECRET = "BEGIN-PRIVATE-KEY-51c0ffee"


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def one_line_refusal(res) -> str:
    """Exit 2, one line, the secret nowhere in it."""
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert SECRET not in res.output
    return lines[0]


@pytest.fixture(scope="module")
def empty_warehouse(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "wh.duckdb"
    open_store(str(path)).close()
    return path


@pytest.fixture
def wh(tmp_path, db_path, monkeypatch, empty_warehouse):
    """An empty warehouse in ``tmp_path`` (the working folder), a file the user names (x.csv), and
    a "home" folder with a key in it."""
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(empty_warehouse, db_path)
    (tmp_path / "x.csv").write_text("n\n3\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    return db_path


@pytest.mark.parametrize(
    "query",
    [
        "SELECT content FROM read_text('wh.duckdb.tmp/.ssh/id_rsa')",
        "SELECT filename FROM read_text('wh.duckdb.tmp/*/*')",
        "SELECT content FROM read_text('home/.ssh/id_rsa')",
        "SELECT content FROM read_text('x.c*')",
    ],
)
def test_allow_read_file_reads_that_file_only(wh, run_cli, tmp_path, query):
    """Seen 2: with ``wh.duckdb.tmp -> home`` (DuckDB's default temp directory, which a restricted
    connection may read) the key was printed; now the temp directory is a private folder."""
    os.symlink(tmp_path / "home", tmp_path / "wh.duckdb.tmp")
    before = digest(wh)
    line = one_line_refusal(run_cli("sql", "--allow-read", "x.csv", query))
    assert "--allow-read" in line
    assert run_cli("sql", "--allow-read", "x.csv", "SELECT n FROM read_csv('x.csv')").exit_code == 0
    assert digest(wh) == before


@pytest.mark.quick
def test_the_temp_directory_is_private(wh, run_cli):
    res = run_cli(
        "sql", "--allow-read", "x.csv", "SELECT current_setting('temp_directory') AS t", "--format", "csv"
    )
    assert res.exit_code == 0, res.output
    temp = res.output.strip().splitlines()[-1]
    assert temp == private_temp() and not temp.endswith(".tmp")
    st = os.stat(temp)
    assert st.st_mode & 0o777 == 0o700 and st.st_uid == os.getuid()
    assert os.stat(os.path.dirname(temp)).st_mode & 0o077 == 0


@pytest.mark.quick
def test_duckdb_is_given_the_real_path_only(tmp_path):
    """A link named with --allow-read allows the file it names now, not the link: retargeting the
    link later gives DuckDB nothing new (DuckDB resolves links on both sides of its check)."""
    real = tmp_path / "x.csv"
    real.write_text("n\n")
    (tmp_path / "link.csv").symlink_to(real)
    files, dirs = read_paths([tmp_path / "link.csv", tmp_path])
    assert files == [str(real)] and dirs == [str(tmp_path) + "/"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_paths([fifo, "/dev/zero"]) == ([], [])


@pytest.mark.quick
def test_a_link_retargeted_after_the_open_is_refused(wh, tmp_path, run_cli):
    os.symlink(tmp_path / "x.csv", tmp_path / "link.csv")
    res = run_cli("sql", "--allow-read", "link.csv", "SELECT n FROM read_csv('link.csv')", "--format", "csv")
    assert res.exit_code == 0 and res.output.split() == ["n", "3"], res.output
    store = open_store(wh, read_only=True, reads=["link.csv"])
    try:
        os.unlink(tmp_path / "link.csv")
        os.symlink(tmp_path / "home" / ".ssh" / "id_rsa", tmp_path / "link.csv")
        with pytest.raises(Exception, match="Permission") as e:
            store.con.execute("SELECT content FROM read_text('link.csv')").fetchall()
        assert SECRET not in str(e.value)
    finally:
        store.close()


@pytest.mark.quick
def test_a_file_replaced_under_the_query_is_not_the_file_named(wh, tmp_path):
    store = open_store(wh, read_only=True, reads=["x.csv"])
    try:
        store.check_reads()
        (tmp_path / "y.csv").write_text("n\n4\n")
        os.replace(tmp_path / "y.csv", tmp_path / "x.csv")  # another file under the name
        with pytest.raises(UserError, match="was replaced while the query ran"):
            store.check_reads()
    finally:
        store.close()


@pytest.mark.quick
@pytest.mark.parametrize(
    "args",
    [
        ["--allow-read", "x.csv", "SELECT octet_length(content) AS n FROM read_blob('wh.' || 'duckdb')"],
        ["--allow-read", ".", "SELECT octet_length(content) AS n FROM read_blob('wh.' || 'duckdb')"],
        [
            "--allow-read",
            "x.csv",
            "--var",
            "p=wh.",
            "SELECT octet_length(content) AS n FROM read_blob(getvariable('p') || 'duckdb')",
        ],
        [
            "--allow-read",
            "x.csv",
            "--var",
            "p=wh.duckdb",
            "SELECT octet_length(content) AS n FROM read_blob(getvariable('p'))",
        ],
    ],
)
def test_the_warehouse_itself_is_never_read(wh, run_cli, args):
    before = digest(wh)
    line = one_line_refusal(run_cli("sql", *args))
    assert "warehouse file itself" in line, line
    assert digest(wh) == before


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """A small warehouse (no demo data: fast) exported as Parquet."""
    from parquet_fixtures import build_warehouse

    import ctxprior

    folder = tmp_path_factory.mktemp("exported")
    db = build_warehouse(str(folder / "src.duckdb"), use_demo=False)
    ctxprior.open(db).parquet.export(folder / "out")
    return folder / "out"


def test_an_import_reads_the_bytes_it_checked(exported, tmp_path, monkeypatch, run_cli):
    """Seen 3: a shard swapped between its sha256 check and DuckDB's read was imported (307 edited
    rows, exit 0). The swap happens at the fault point between the two (``import.verified``): the
    import reads its private copy of the checked bytes, so the edited rows never arrive."""
    import json

    import pyarrow.parquet as pq

    from ctxprior import faults

    out = tmp_path / "out"
    shutil.copytree(exported, out)
    m = json.loads((out / "manifest.json").read_text())
    shard = out / next(e for e in m["tables"] if e["name"] == "run")["files"][0]["path"]
    table = pq.read_table(shard)
    edited = table.set_column(table.schema.get_field_index("status"), "status", [["EDITED"] * table.num_rows])
    swapped = []

    def swap(action, point, n):
        pq.write_table(edited, shard)  # another file's bytes under the checked name
        swapped.append(point)

    monkeypatch.setenv("CTXPRIOR_FAULT", "import.verified:raise")
    monkeypatch.setattr(faults, "_act", swap)
    db = str(tmp_path / "copy.duckdb")
    res = run_cli("import", "parquet", out, db=db)
    assert res.exit_code == 0 and swapped == ["import.verified"], res.output
    store = open_store(db, read_only=True)
    try:
        assert store.scalar("SELECT count(*) FROM run WHERE status = 'EDITED'") == 0
        assert store.scalar("SELECT count(*) FROM run") == table.num_rows
    finally:
        store.close()
    assert not [p for p in Path(private_temp()).glob("import-*")]  # the private copy is gone


def test_a_covariate_file_is_read_from_the_bytes_hashed(tmp_path, monkeypatch, run_cli):
    """Issue 42 round 2, item 2: ``covariates add`` hashed its CSV, then DuckDB read it again by
    name. The swap happens at the fault point between the two (``inputs.copied``): DuckDB reads the
    private copy of the hashed bytes, the recorded sha256 is theirs and the source is the user's
    path; the copy is gone afterwards. ``covariates add`` of a missing file still says so."""
    from covariates_helpers import build_warehouse

    from ctxprior import faults

    db = str(tmp_path / "wh.duckdb")
    build_warehouse(db)
    csv = tmp_path / "pop.csv"
    csv.write_text("entity,answer,pop\nFrance,Paris,1\nApple,Cupertino,2\n")
    hashed = digest(csv)
    swapped = []

    def swap(action, point, n):
        csv.write_text("entity,answer,pop\nFrance,Paris,666\nApple,Cupertino,666\n")
        swapped.append(point)

    monkeypatch.setenv("CTXPRIOR_FAULT", "inputs.copied:raise")
    monkeypatch.setattr(faults, "_act", swap)
    faults.reset()
    res = run_cli("covariates", "add", csv, "--name", "pop", "--on", "entity,answer", db=db)
    assert res.exit_code == 0 and swapped == ["inputs.copied"], res.output
    store = open_store(db, read_only=True)
    try:
        assert sorted(r[0] for r in store.query("SELECT pop FROM cov_pop")) == [1, 2]
        row = store.query("SELECT source_path, source_sha256 FROM covariate WHERE name = 'pop'")[0]
    finally:
        store.close()
    assert row == (str(csv), hashed)
    assert not list(Path(private_temp()).glob("copy-*"))
    line = one_line_refusal(
        run_cli("covariates", "add", tmp_path / "no.csv", "--name", "x", "--on", "entity", db=db)
    )
    assert line == f"Error: {tmp_path / 'no.csv'}: no such file"


def test_kg_degree_reads_the_bytes_hashed(tmp_path, monkeypatch, run_cli):
    """The same for ``covariates kg-degree``: a triple file swapped at ``inputs.copied`` is not read."""
    from covariates_helpers import YAGO, build_warehouse

    from ctxprior import faults

    db = str(tmp_path / "wh.duckdb")
    build_warehouse(db)
    nt = tmp_path / "g.nt"
    nt.write_text(f"<{YAGO}France> <{YAGO}capital> <{YAGO}Paris> .\n")
    hashed = digest(nt)
    swapped = []

    def swap(action, point, n):
        swapped.append(point)
        nt.write_text("".join(f"<{YAGO}France> <{YAGO}capital> <{YAGO}X{i}> .\n" for i in range(9)))

    monkeypatch.setenv("CTXPRIOR_FAULT", "inputs.copied:raise")
    monkeypatch.setattr(faults, "_act", swap)
    faults.reset()
    res = run_cli("covariates", "kg-degree", nt, "--name", "deg", db=db)
    assert res.exit_code == 0 and swapped == ["inputs.copied"], res.output
    with open_store(db, read_only=True) as store:
        assert store.scalar("SELECT max(degree) FROM cov_deg") == 1
        row = store.query("SELECT source_path, source_sha256 FROM covariate WHERE name = 'deg'")[0]
    assert row == (str(nt), hashed)


@pytest.mark.quick
@pytest.mark.parametrize(
    "query, var",
    [
        ("SELECT size FROM read_blob('wh.' || 'duckdb')", None),
        ("SELECT size FROM read_blob(getvariable('p') || 'duckdb')", "p=wh."),
        ("SELECT * FROM glob(getvariable('p') || 'db')", "p=wh.duck"),
        ("SELECT size FROM read_blob(['x.csv', 'wh.' || 'duckdb'])", None),
    ],
)
def test_a_computed_warehouse_path_is_refused_before_the_query_runs(wh, run_cli, query, var):
    """Round 2, item 5: DuckDB 2.0.1's ``allowed_paths`` cannot exclude the database file (a
    connection always reads its own file), so the path of every file function is computed before
    the statement runs and refused when it names the warehouse: the refusal names the function,
    where the check after the query said the lock was lost."""
    before = digest(wh)
    args = ["--allow-read", "x.csv", *(["--var", var] if var else []), query]
    line = one_line_refusal(run_cli("sql", *args))
    assert "may not read the warehouse file itself (" in line and " of " in line, line
    assert digest(wh) == before


@pytest.mark.quick
def test_a_path_that_is_not_a_constant_is_refused_and_a_computed_allowed_one_runs(wh, run_cli):
    q = "SELECT size FROM (SELECT 'wh.' || 'duckdb' AS p) s, LATERAL read_blob(s.p)"
    assert "not a constant" in one_line_refusal(run_cli("sql", "--allow-read", "x.csv", q))
    res = run_cli(
        "sql", "--allow-read", "x.csv", "--format", "csv", "SELECT count(*) AS n FROM read_csv('x.' || 'csv')"
    )
    assert res.exit_code == 0 and res.output.split() == ["n", "1"], res.output
