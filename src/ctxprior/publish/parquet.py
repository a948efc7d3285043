"""Parquet in/out: the warehouse as a folder of Parquet files plus ``manifest.json``, and back.

Layout (the same for ``ctxprior export parquet DIR``, ``ctxprior publish --dry-run DIR`` and a
published Hub dataset)::

    DIR/manifest.json                               what is in the folder (see below)
    DIR/data/<name>/<name>-00000-of-00001.parquet   one folder per table or view

The manifest records the format, the ctxprior and schema versions, the warehouse's ``meta`` rows,
the runs included, and per table/view: kind, row count, every column with its DuckDB type, and per
file its path, rows, bytes and sha256. ``import_parquet`` checks every sha256 before it writes
anything, then loads every table in one transaction.

Tables are discovered from the warehouse (``store.table_names()``, ``store.view_names()``), so tables
other areas add are exported without a list to maintain. The rows are read on the warehouse's
sandboxed connection, which writes no file, and written with DuckDB's ``COPY ... TO ... (FORMAT
parquet)`` on an in-memory database (``write_parquet``), rows in a fixed order (primary key, else every column), so
the same warehouse always gives byte-identical files: that is what lets ``publish`` skip a commit
when nothing changed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from tqdm import tqdm

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import MAX_BYTES, check_input, copy_input, loads_json, read_input, validated
from ..options import ID_MAX
from ..outputs import MANIFEST, OutputFolder, file_name, write_manifest_file
from ..schema import metadata
from ..sqlfiles import body, ident, literal, path_sql, read_sql
from ..storage.failures import is_io_error
from ..storage.store import QueryTimeout, Store, utcnow, view_error
from ..version import __version__
from .manifest import Manifest
from .options import MODE
from .validate import _safe_type, validate_folder

FORMAT = "ctxprior-parquet"
FORMAT_VERSION = 1
DATA_DIR = "data"
ROWS_PER_FILE = 5_000_000

# Optional heavy tables (per-prompt distributions), left out of `publish` unless
# --include-distributions. Other areas can mark a table heavy with Table(..., info={"heavy": True}).
HEAVY_TABLES = frozenset({"prompt_topk"})


def heavy_tables() -> set[str]:
    return set(HEAVY_TABLES) | {t.name for t in metadata.tables.values() if t.info.get("heavy")}


SQL = "ctxprior.publish"


# -- what to export -------------------------------------------------------------------------------


@dataclass
class Selection:
    """Which tables/views go out, and which runs' rows."""

    tables: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    runs: list[int] | None = None  # None = every row; else only rows of these runs (tables with run_id)


def all_columns(store: Store) -> dict[str, list[dict[str, str]]]:
    """table/view -> [{name, type}] in column order, types as DuckDB spells them (one query)."""
    out: dict[str, list[dict[str, str]]] = {}
    for t, n, ty in store.query(read_sql(SQL, "sql/all_columns.sql")):
        out.setdefault(t, []).append({"name": n, "type": ty})
    return out


def columns_of(store: Store, name: str) -> list[dict[str, str]]:
    """[{name, type}] of a table or view, in column order, types as DuckDB spells them."""
    return all_columns(store).get(name, [])


# Types Parquet cannot hold losslessly: written as text, cast back on import from the manifest type.
AS_TEXT = ("HUGEINT", "UHUGEINT")


def views_reading(store: Store, tables: Iterable[str]) -> set[str]:
    """Views whose SQL mentions one of ``tables`` (directly or through another such view)."""
    sql = {
        r[0]: r[1] or ""
        for r in store.query(
            "SELECT view_name, sql FROM duckdb_views() WHERE schema_name='main' AND NOT internal"
        )
    }
    hit: set[str] = set()
    targets = set(tables)
    changed = True
    while changed:
        changed = False
        for v, text in sql.items():
            if v in hit:
                continue
            if any(re.search(rf"\b{re.escape(t)}\b", text, re.IGNORECASE) for t in targets):
                hit.add(v)
                targets.add(v)
                changed = True
    return hit


def parse_names(values: Iterable[str] | None) -> list[str] | None:
    """Option values like ('a,b', 'c') -> ['a', 'b', 'c']; None/empty -> None."""
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in str(v).split(",") if x.strip())
    return out or None


def parse_runs(values: Iterable[str] | None) -> list[int] | None:
    names = parse_names(values)
    if names is None:
        return None
    out = []
    for n in names:
        if not re.fullmatch(r"\d+", n):
            raise UserError(f"--runs {n}: not a run id; pass run ids as integers, e.g. --runs 1,3")
        if len(n) > 10 or int(n) > ID_MAX:
            raise UserError(f"--runs {n[:40]}: not a run id; run ids are at most {ID_MAX}")
        out.append(int(n))
    return sorted(set(out))


def select(
    store: Store,
    tables: list[str] | None = None,
    views: list[str] | None = None,
    all_views: bool = False,
    runs: list[int] | None = None,
    include_heavy: bool = True,
) -> Selection:
    """Validate names against the warehouse and build a Selection.

    - tables/views given: exactly those (unknown names are a UserError).
    - neither given: every table, plus every view when ``all_views``.
    - include_heavy=False leaves out heavy tables and views reading them (unless named explicitly).
    """
    have_t, have_v = store.table_names(), store.view_names()
    for opt, names, have in (("--tables", tables, have_t), ("--views", views, have_v)):
        for n in names or []:
            if n not in have:
                raise UserError(
                    f"{opt} {n}: no such {opt[2:-1]} in {store.path}; known: {', '.join(have) or '(none)'}"
                )
    if tables is None and views is None:
        sel_t, sel_v = list(have_t), list(have_v) if all_views else []
        if not include_heavy:
            heavy = heavy_tables()
            sel_t = [t for t in sel_t if t not in heavy]
            hv = views_reading(store, [t for t in heavy if t in have_t])
            sel_v = [v for v in sel_v if v not in hv]
    else:
        sel_t, sel_v = list(tables or []), list(views or [])
    if runs is not None:
        known = {r[0] for r in store.query("SELECT run_id FROM run")} if "run" in have_t else set()
        missing = [r for r in runs if r not in known]
        if missing:
            raise UserError(
                f"--runs {','.join(map(str, missing))}: no such run in {store.path}; "
                "list runs with `ctxprior runs` (or query the run table)"
            )
    return Selection(tables=sel_t, views=sel_v, runs=runs)


def _order_by(store: Store, name: str, cols: list[dict[str, str]]) -> str:
    t = metadata.tables.get(name)
    if t is not None and len(t.primary_key.columns) > 0:
        pk = [c.name for c in t.primary_key.columns]
        if all(any(c["name"] == p for c in cols) for p in pk):
            return ", ".join(ident(p) for p in pk)
    return "ALL"


def _source_sql(name: str, cols: list[dict[str, str]], runs: list[int] | None) -> str:
    if any(c["type"] in AS_TEXT for c in cols):
        sel = ", ".join(
            f"CAST({ident(c['name'])} AS VARCHAR) AS {ident(c['name'])}"
            if c["type"] in AS_TEXT
            else ident(c["name"])
            for c in cols
        )
    else:
        sel = "*"
    sql = f"SELECT {sel} FROM {ident(name)}"
    if runs is not None and any(c["name"] == "run_id" for c in cols):
        sql += " WHERE run_id IN (SELECT run_id FROM _export_runs)"  # registered by export_parquet
    return sql


# -- export -------------------------------------------------------------------------------------


def export_parquet(
    store: Store,
    out_dir: str | os.PathLike,
    selection: Selection,
    *,
    skip_empty: bool = False,
    stamp_time: bool = True,
    rows_per_file: int = ROWS_PER_FILE,
    overwrite: bool = False,
    extra: dict[str, Any] | None = None,
    extra_files: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Write the selected tables/views as Parquet under ``out_dir`` and return the manifest.

    ``out_dir`` must be empty or missing; ``overwrite`` replaces the files an earlier export
    recorded in its manifest and nothing else (``outputs.OutputFolder``). ``extra_files``: files the
    caller writes next (``README.md``), recorded too. ``skip_empty`` leaves zero-row tables out of
    the files (the manifest still lists them) since `datasets` cannot load a config without rows.
    ``stamp_time`` adds ``exported_at`` to the manifest (left out when publishing, so unchanged data
    gives an unchanged manifest).
    """
    for name in selection.tables:  # a name from the warehouse becomes a path only as a safe file name
        file_name(name, "table")
    for name in selection.views:
        file_name(name, "view")
    folder = output_folder(out_dir, store, selection, overwrite, extra_files).prepare()
    for rel in extra_files:
        folder.add(rel)
    with store.session():  # one connection: the run list is registered on it, not formatted into SQL
        runs = [] if selection.runs is None else [int(r) for r in selection.runs]
        store.con.register("_export_runs", pa.table({"run_id": pa.array(runs, pa.int64())}))
        try:
            entries, skipped = _export_items(store, folder, selection, skip_empty, rows_per_file)
            manifest = _manifest_head(store, selection, stamp_time, skipped, extra)
        finally:
            store.con.unregister("_export_runs")
    manifest["tables"] = entries
    return folder.finish(manifest)


def output_folder(
    out_dir: str | os.PathLike,
    store: Store,
    selection: Selection,
    overwrite: bool,
    extra_files: tuple[str, ...],
) -> OutputFolder:
    """The export's folder: it claims its manifest, ``extra_files`` and the shards of the selected
    tables and views (``data/<name>/<name>-NNNNN-of-NNNNN.parquet``)."""
    names = set(selection.tables) | set(selection.views)

    def claims(rel: str) -> bool:
        m = re.fullmatch(rf"{DATA_DIR}/([^/]+)/([^/]+)-\d{{5}}-of-\d{{5}}\.parquet", rel)
        return rel in extra_files or bool(m and m.group(1) == m.group(2) and m.group(1) in names)

    return OutputFolder(out_dir, store.path, fmt=FORMAT, claims=claims, overwrite=overwrite, what="export")


def _export_items(
    store: Store, out: OutputFolder, selection: Selection, skip_empty: bool, rows_per_file: int
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Write every selected table, then view: (manifest entries, views skipped as unreadable)."""
    items = [(n, "table") for n in selection.tables] + [(n, "view") for n in selection.views]
    entries: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    columns = all_columns(store)
    for name, kind in tqdm(items, desc="export", unit="table", disable=None):
        cols = columns[name]
        src = _source_sql(name, cols, selection.runs)
        rows = _count_rows(store, name, kind, src, skipped)
        if rows is None:
            continue
        entry: dict[str, Any] = {"name": name, "kind": kind, "rows": rows, "columns": cols, "files": []}
        if not (rows == 0 and skip_empty):
            entry["files"] = _write_item(store, out, name, kind, cols, src, rows, rows_per_file)
        entries.append(entry)
    return entries, skipped


def _write_item(
    store: Store, out: OutputFolder, name: str, kind: str, cols: list, src: str, rows: int, per_file: int
) -> list[dict[str, Any]]:
    """``_write_files``; a view's rows are read bounded (``Store.bounded``) and its errors named by
    the view, never with DuckDB's text (it may quote what the view read)."""
    if kind != "view":
        return _write_files(store, out, name, cols, src, rows, per_file)
    try:
        with store.bounded(f"view {name}"):
            return _write_files(store, out, name, cols, src, rows, per_file)
    except duckdb.Error as e:
        raise UserError(view_error(name, e)) from None


def _count_rows(store: Store, name: str, kind: str, src: str, skipped: list[dict[str, str]]) -> int | None:
    """Rows ``src`` selects. A view that cannot be read gives None, a warning and an entry in ``skipped``
    (a view another area broke must not block exporting everything else); a table re-raises."""
    if kind != "view":
        return int(store.scalar(f"SELECT count(*) FROM ({src})"))
    try:
        with store.bounded(f"view {name}"):  # bounded: a view that never ends is skipped
            return int(store.scalar(f"SELECT count(*) FROM ({src})"))
    except (duckdb.Error, QueryTimeout) as e:
        why = view_error(name, e)  # by its name: DuckDB's text may quote what the view read
        skipped.append({"name": name, "error": why})
        tqdm.write(f"warning: {why}; skipped", file=sys.stderr)
        return None


def _write_files(
    store: Store,
    out: OutputFolder,
    name: str,
    cols: list[dict[str, str]],
    src: str,
    rows: int,
    rows_per_file: int,
) -> list[dict[str, Any]]:
    """Write the ``rows`` of ``src`` in a fixed order as ``DATA_DIR/name/*.parquet`` shards of at most
    ``rows_per_file`` rows; the manifest's file list (path, rows, bytes, sha256)."""
    files: list[dict[str, Any]] = []
    order = _order_by(store, name, cols)
    n_files = max(1, -(-rows // max(1, rows_per_file)))
    for i in range(n_files):
        safe = file_name(name)
        rel = f"{DATA_DIR}/{safe}/{safe}-{i:05d}-of-{n_files:05d}.parquet"
        query = f"{src} ORDER BY {order}"
        if n_files > 1:
            query += f" LIMIT {literal(int(rows_per_file))} OFFSET {literal(int(i * rows_per_file))}"
        out.add(rel)  # recorded before it is written
        with out.writing(rel) as path:  # through the folder's descriptor: no link inside is followed
            write_parquet(store.con.sql(query), path)
            size, sha = os.stat(path).st_size, sha256_file(path)
        part_rows = rows if n_files == 1 else min(rows_per_file, rows - i * rows_per_file)
        files.append({"path": rel, "rows": part_rows, "bytes": size, "sha256": sha})
    return files


def write_parquet(rel: duckdb.DuckDBPyRelation, path: str | os.PathLike) -> None:
    """Write the rows of ``rel`` (a query on the warehouse's sandboxed connection, which writes no
    file) to ``path`` with DuckDB's Parquet writer, on an in-memory database that holds nothing but
    those rows, streamed as Arrow batches. The batches are cut to one fixed size and written on one
    thread: the file's bytes then depend on the rows only, not on how the query's threads happened
    to hand them over (``publish`` skips a commit when the bytes are unchanged)."""
    reader = rel.to_arrow_reader() if hasattr(rel, "to_arrow_reader") else rel.fetch_arrow_reader()
    fixed = pa.RecordBatchReader.from_batches(reader.schema, _fixed_batches(reader, EXPORT_BATCH_ROWS))
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET threads = 1")
        con.register("_rows", fixed)
        con.execute(
            f"COPY (SELECT * FROM _rows) TO {literal(os.fspath(path))} (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false)"
        )
    finally:
        con.close()


EXPORT_BATCH_ROWS = 122_880  # DuckDB's Parquet row group size


def _fixed_batches(reader: pa.RecordBatchReader, size: int) -> Iterator[pa.RecordBatch]:
    """The rows of ``reader`` as batches of exactly ``size`` rows (the last one fewer)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in reader:
        pending.append(batch)
        count += batch.num_rows
        while count >= size:
            table = pa.Table.from_batches(pending, reader.schema)
            yield from table.slice(0, size).combine_chunks().to_batches(max_chunksize=size)
            rest = table.slice(size)
            pending, count = rest.to_batches(), rest.num_rows
    if count:
        yield from (
            pa.Table.from_batches(pending, reader.schema).combine_chunks().to_batches(max_chunksize=size)
        )


def _exported_run_ids(store: Store, selection: Selection) -> list[int] | None:
    """Ids of the runs the export holds (when it holds the run table or filters by run), else None."""
    run_ids = None
    if ("run" in selection.tables or selection.runs is not None) and "run" in store.table_names():
        src = _source_sql("run", columns_of(store, "run"), selection.runs)
        run_ids = [r[0] for r in store.query(f"SELECT run_id FROM ({src}) ORDER BY run_id")]
    return run_ids


def _manifest_head(
    store: Store,
    selection: Selection,
    stamp_time: bool,
    skipped: list[dict[str, str]],
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    """The manifest up to its table list: format, versions, ``meta`` rows, runs, optional time stamp,
    skipped views and ``extra``."""
    meta = {}
    if "meta" in store.table_names():
        meta = {k: v for k, v in store.query("SELECT key, value FROM meta ORDER BY key")}
    run_ids = _exported_run_ids(store, selection)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ctxprior_version": __version__,
        "schema_version": store.schema_version(),
        "meta": meta,
        "runs": run_ids,
        "run_filter": selection.runs,
    }
    if stamp_time:
        manifest["exported_at"] = utcnow().isoformat(timespec="seconds")
    if skipped:
        manifest["skipped_views"] = skipped
    if extra:
        manifest.update(extra)
    return manifest


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Rewrite a folder's manifest (temporary file + rename: whole or absent)."""
    write_manifest_file(out, manifest)


# -- import -------------------------------------------------------------------------------------


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder; pass a folder written by `ctxprior export parquet`")
    if not path.exists():
        raise UserError(
            f"{folder}: no {MANIFEST}; pass a folder written by `ctxprior export parquet` "
            "or `ctxprior publish`"
        )
    check_input(path)  # never the warehouse (a link of it): ctxprior/inputs.py
    try:
        text = read_input(path, limit=MAX_BYTES).decode("utf-8")  # a regular file, never blocks
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: not a readable JSON manifest ({e}); re-export the folder") from None
    try:
        m = loads_json(text, "JSON")  # bounded: depth, size, digits, duplicated keys
    except UserError as e:
        raise UserError(f"{path}: not a readable JSON manifest ({e}); re-export the folder") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("tables"), list):
        raise UserError(f"{path}: not a ctxprior Parquet manifest; re-export the folder")
    validated(Manifest, m, f"{path}")  # every value import and pull use (publish/manifest.py)
    if m["format_version"] > FORMAT_VERSION:
        raise UserError(
            f"{path}: manifest format v{m.get('format_version')} is newer than this "
            f"ctxprior reads (v{FORMAT_VERSION}); upgrade with `pip install -U ctxprior`"
        )
    return m


def table_files(folder: str | os.PathLike, manifest: dict[str, Any]) -> list[Path]:
    """The Parquet files of the manifest's tables: what an import reads (``reads=`` of the
    warehouse's sandboxed connection, docs/write-protocol.md)."""
    return [
        Path(folder) / f["path"]
        for e in manifest["tables"]
        if isinstance(e, dict) and e.get("kind") == "table"
        for f in e.get("files", [])
        if isinstance(f, dict) and isinstance(f.get("path"), str)
    ]


def verify_files(
    folder: str | os.PathLike, manifest: dict[str, Any], kinds: Iterable[str] = ("table", "view")
) -> None:
    """Check every listed file exists with its recorded sha256; raise UserError otherwise."""
    folder = Path(folder)
    kinds = set(kinds)
    files = [f for e in manifest["tables"] if e.get("kind") in kinds for f in e.get("files", [])]
    for f in tqdm(files, desc="verify sha256", unit="file", disable=None):
        p = folder / f["path"]
        if ".." in Path(f["path"]).parts or Path(f["path"]).is_absolute():
            raise UserError(f"{folder / MANIFEST}: file path {f['path']} leaves the folder; refusing it")
        if not p.is_file():
            raise UserError(f"{p}: listed in {MANIFEST} but missing; copy the whole folder again")
        check_input(p)
        got = sha256_file(p)
        if got != f["sha256"]:
            raise UserError(
                f"{p}: sha256 {got[:12]}... does not match the manifest "
                f"({f['sha256'][:12]}...); the file is corrupt or was changed, copy it again"
            )


def _copy_checked(src: Path, dst: Path, sha256: str, shown: Path) -> None:
    """Copy ``src`` to ``dst`` (a new file in a private folder) while hashing the bytes copied:
    the copy is exactly the bytes whose sha256 matched, whatever happens to ``src`` afterwards."""
    got = copy_input(src, dst)
    if got != sha256:
        raise UserError(
            f"{shown}: sha256 {got[:12]}... does not match the manifest "
            f"({sha256[:12]}...); the file is corrupt or was changed, copy it again"
        )


@contextmanager
def staged_folder(folder: str | os.PathLike, strict: bool = False) -> Iterator[tuple[Path, dict[str, Any]]]:
    """An import folder as a private copy, what an import reads (issue 42: a checked file is the
    file read): the manifest read once, every table file copied into a folder of this process's
    own (mode 0700) while its sha256 is computed from the bytes copied, then validated and read
    from there, so a file swapped after its check is never read. Messages name ``folder``."""
    import shutil
    import tempfile

    from ..storage.sandbox import private_temp

    folder = Path(folder)
    m = check_folder(folder, verify=False)
    stage = Path(tempfile.mkdtemp(prefix="import-", dir=private_temp() or None))
    try:
        try:
            for e in m["tables"]:
                for f in e.get("files", []) if e.get("kind") == "table" else []:
                    _check_listed(folder, f["path"])
                    dst = stage / f"{len(os.listdir(stage)):06d}.parquet"
                    _copy_checked(folder / f["path"], dst, f["sha256"], folder / f["path"])
                    f["path"] = dst.name
            (stage / MANIFEST).write_text(json.dumps(m), encoding="utf-8")
            _fault("import.verified")
            validate_folder(stage, m, strict)
            yield stage, m
        except UserError as err:
            raise UserError(str(err).replace(str(stage), str(folder))) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _check_listed(folder: Path, rel: str) -> None:
    p = folder / rel
    if ".." in Path(rel).parts or Path(rel).is_absolute():
        raise UserError(f"{folder / MANIFEST}: file path {rel} leaves the folder; refusing it")
    if not p.is_file():
        raise UserError(f"{p}: listed in {MANIFEST} but missing; copy the whole folder again")


def _fault(point: str) -> None:
    if os.environ.get("CTXPRIOR_FAULT"):
        from ..faults import hit

        hit(point)


def check_folder(folder: str | os.PathLike, verify: bool = True, strict: bool = False) -> dict[str, Any]:
    """Everything about an import folder that can be checked without a warehouse; the manifest.
    With ``verify``: every file's sha256, then its tables, columns, types and keys
    (``validate.validate_folder``; ``strict``: a pull, only ctxprior's own tables)."""
    from ..schema import SCHEMA_VERSION

    folder = Path(folder)
    m = read_manifest(folder)
    if not [e for e in m["tables"] if e.get("kind") == "table"]:
        raise UserError(
            f"{folder}: holds only views, which cannot rebuild a warehouse; "
            "export with `ctxprior export parquet DIR` (tables, the default)"
        )
    found = m.get("schema_version")
    if found is not None and found > SCHEMA_VERSION:
        raise UserError(
            f"{folder}: exported from schema v{found}, newer than this ctxprior "
            f"(v{SCHEMA_VERSION}); upgrade with `pip install -U ctxprior`"
        )
    if verify:
        verify_files(folder, m, kinds=("table",))
        validate_folder(folder, m, strict)
    return m


def _row_count_user_tables(store: Store) -> dict[str, int]:
    return {
        t: int(store.scalar(f"SELECT count(*) FROM {ident(t)}")) for t in store.table_names() if t != "meta"
    }


def import_parquet(
    store: Store, folder: str | os.PathLike, mode: str = "fail", verify: bool = True
) -> dict[str, int]:
    """Load an exported folder into ``store``; return rows added per table.

    mode:
    - ``fail`` (default): the warehouse must have no rows outside ``meta``; the result is a copy of
      the exported warehouse (same rows, same ids, the exported ``meta``).
    - ``replace``: delete every row of every table first, then load (one transaction).
    - ``merge``: add rows not present yet. Rows whose primary key exists must be identical, else
      nothing is written (ids of independently built warehouses collide; re-ingest instead).
    Views in the folder are skipped: the warehouse recreates them from its own SQL.
    ``verify=False`` skips the sha256 check (the caller ran ``check_folder`` already).
    """
    from ..schema import SCHEMA_VERSION

    MODE.check(mode)
    folder = Path(folder)
    m = check_folder(folder, verify=verify)
    tables = [e for e in m["tables"] if e.get("kind") == "table"]
    found = m.get("schema_version")

    counts = _row_count_user_tables(store)
    if mode == "fail" and any(counts.values()):
        full = [f"{t} ({n})" for t, n in counts.items() if n]
        nonempty = ", ".join(full[:4]) + (f" and {len(full) - 4} more tables" if len(full) > 4 else "")
        raise UserError(
            f"warehouse {store.path} already has rows ({nonempty}); import into a new "
            "--db file, or pass --merge (add missing rows) or --replace (drop all rows first)"
        )

    have = set(store.table_names())
    columns = all_columns(store)
    order = {t.name: i for i, t in enumerate(metadata.sorted_tables)}
    tables.sort(key=lambda e: (order.get(e["name"], len(order)), e["name"]))
    for e in tables:  # validate columns before writing anything
        if e["name"] in have and e["name"] != "meta":
            cols = {c["name"] for c in columns[e["name"]]}
            extra = [c["name"] for c in e["columns"] if c["name"] not in cols]
            if extra:
                raise UserError(
                    f"{folder}: table {e['name']} has columns {', '.join(extra)} that this warehouse "
                    f"lacks (exported from schema v{found}, this ctxprior is v{SCHEMA_VERSION}); "
                    "import with the ctxprior version that exported it"
                )

    try:
        return _load(store, folder, tables, mode, have, columns, None if found is None else int(found))
    except duckdb.ConstraintException as e:
        raise UserError(
            f"{folder}: rows conflict with {store.path} ({str(e).splitlines()[0]}); nothing was "
            "imported, import into a new --db file instead"
        ) from None
    except duckdb.Error as e:
        if is_io_error(e):
            raise
        raise UserError(
            f"{folder}: cannot be imported ({str(e).splitlines()[0]}); nothing was imported"
        ) from None


def _load(
    store: Store,
    folder: Path,
    tables: list[dict],
    mode: str,
    have: set[str],
    columns: dict[str, list[dict[str, str]]],
    found: int | None = None,
) -> dict[str, int]:
    """Insert the folder's rows in one transaction; rows of an older schema (``found``) are then
    brought to the current one (``migrations.upgrade_rows``)."""
    from ..schema import SCHEMA_VERSION
    from ..storage.migrations import upgrade_rows

    added: dict[str, int] = {}
    with store.transaction():
        if mode == "replace":
            for t in store.table_names():
                if t != "meta":
                    store.execute(f"DELETE FROM {ident(t)}")
        for e in tables:
            name = e["name"]
            files = [str(folder / f["path"]) for f in e.get("files", [])]
            if name == "meta":
                if mode != "merge" and files:
                    rows = store.query(f"SELECT key, value FROM read_parquet({_files_sql(files)})")
                    store.execute("DELETE FROM meta WHERE key <> 'schema_version'")
                    store.con.executemany(
                        "INSERT INTO meta VALUES (?, ?)", [list(r) for r in rows if r[0] != "schema_version"]
                    )
                continue
            if name not in have:
                coldefs = ", ".join(
                    f"{ident(c['name'])} {_safe_type(c['type'], name, folder)}" for c in e["columns"]
                )
                store.execute(f"CREATE TABLE {ident(name)} ({coldefs})")
                have.add(name)
                columns[name] = all_columns(store)[name]
            if not files:
                added[name] = 0
                continue
            types = {c["name"]: c["type"] for c in columns[name]}  # the table's own types
            added[name] = _insert(store, name, e, files, types, merge=(mode == "merge"), folder=folder)
            if mode != "merge" and added[name] != int(e["rows"]):
                raise UserError(
                    f"{folder}: table {name} loaded {added[name]} rows, the manifest says "
                    f"{e['rows']}; the folder is inconsistent, export it again"
                )
        if found is not None and found < SCHEMA_VERSION:
            upgrade_rows(store, found)
    return added


def _files_sql(files: list[str]) -> str:
    return "[" + ", ".join(path_sql(f) for f in files) + "]"  # exactly these files, no globbing


def _insert(
    store: Store, name: str, entry: dict, files: list[str], types: dict[str, str], merge: bool, folder: Path
) -> int:
    cols = [c["name"] for c in entry["columns"]]
    collist = ", ".join(ident(c) for c in cols)
    casts = ", ".join(f"CAST({ident(c)} AS {types[c]}) AS {ident(c)}" for c in cols)
    src = f"SELECT {casts} FROM read_parquet({_files_sql(files)})"
    before = int(store.scalar(f"SELECT count(*) FROM {ident(name)}"))
    if not merge:
        store.execute(f"INSERT INTO {ident(name)} ({collist}) {src}")
    else:
        t = metadata.tables.get(name)
        pk = [c.name for c in t.primary_key.columns] if t is not None else []
        if pk and all(p in cols for p in pk):
            on = " AND ".join(f"s.{ident(p)} = t.{ident(p)}" for p in pk)
            differ = " OR ".join(f"s.{ident(c)} IS DISTINCT FROM t.{ident(c)}" for c in cols if c not in pk)
            if differ:
                clash = f"SELECT count(*) FROM ({src}) s JOIN {ident(name)} t ON {on} WHERE {differ}"
                n = int(store.scalar(clash))
                if n:
                    raise UserError(
                        f"{folder}: {n} rows of table {name} have the ids of different rows already in "
                        f"{store.path}; the two warehouses were built independently and cannot be merged by "
                        "id, import into a new --db file instead"
                    )
            store.execute(
                body(read_sql(SQL, "sql/import_by_key.sql")).format(
                    table=ident(name), columns=collist, src=src, on=on
                )
            )
        else:
            store.execute(
                body(read_sql(SQL, "sql/import_rows.sql")).format(table=ident(name), columns=collist, src=src)
            )
    return int(store.scalar(f"SELECT count(*) FROM {ident(name)}")) - before
