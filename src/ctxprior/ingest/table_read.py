"""Read a table for ``ctxprior ingest table``: a CSV, TSV, JSONL, JSON or Parquet file (local, a
Hugging Face dataset folder, ``hf://datasets/...`` or a URL), as records that know their row.

A folder (e.g. a Hub dataset downloaded with ``hf download --repo-type dataset``) is searched for
data files (``*.parquet``, ``*.jsonl``, ``*.json``, ``*.csv``, ``*.tsv``; hidden folders left out);
``file`` (a glob relative to the folder, e.g. ``data/dev-*``) picks among them. Several files of
one kind are read in name order. Provenance: a file's origin and sha256 as ``ingest.sources``
records them; a folder's sha256 is the sha256 of its files' ``<relative path> <sha256>`` lines.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import UserError
from .sources import resolve_file

KINDS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "tsv"}


@dataclass(frozen=True)
class Record:
    """One row of the input: the file it came from (as errors name it), its 1-based row, its values."""

    where: str
    row: int
    data: dict


@dataclass(frozen=True)
class Table:
    records: list[Record]
    origin: str
    sha256: str


def read_table(spec: str, sha256: str | None = None, file: str | None = None) -> Table:
    """Every record of ``spec`` (a file, a folder, ``hf://datasets/...`` or a URL); nothing is written."""
    local = Path(str(spec)).expanduser()
    if local.is_dir():
        files = data_files(local, file)
        recs = [
            r for p in files for r in read_file(p, str(p.relative_to(local)) if len(files) > 1 else str(p))
        ]
        lines = "".join(f"{p.relative_to(local).as_posix()} {sha256_file(p)}\n" for p in files)
        digest = sha256_file(files[0]) if len(files) == 1 else hashlib.sha256(lines.encode()).hexdigest()
        origin = str(files[0].resolve()) if len(files) == 1 else str(local.resolve())
        return Table(recs, origin, digest)
    if file is not None:
        raise UserError(f"--file {file}: only applies to a folder; {spec} is not one")
    src = resolve_file(str(spec), sha256)
    if src.sha256 is None:
        raise UserError(f"{spec}: no such file or folder")
    return Table(read_file(src.path, str(spec)), src.origin, src.sha256)


def data_files(folder: Path, pattern: str | None) -> list[Path]:
    """The data files of ``folder`` (matching ``pattern`` when given), all of one kind."""
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in KINDS
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if pattern:
        files = [p for p in files if fnmatch(p.relative_to(folder).as_posix(), pattern)]
    if not files:
        what = f"matching --file {pattern}" if pattern else "(*.parquet, *.jsonl, *.json, *.csv, *.tsv)"
        raise UserError(f"{folder}: no data files {what}; pass the file itself or --file GLOB")
    kinds = sorted({KINDS[p.suffix.lower()] for p in files})
    if len(kinds) > 1:
        names = ", ".join(p.relative_to(folder).as_posix() for p in files[:6])
        raise UserError(f"{folder}: holds {' and '.join(kinds)} files ({names}); pick with --file GLOB")
    return files


def read_file(path: Path, label: str) -> list[Record]:
    """The records of one file, by its kind (its extension; a .json file may hold JSON lines)."""
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise UserError(
            f"{label}: unknown file kind {path.suffix or '(none)'}; expected .csv, .tsv, .jsonl, .json or .parquet"
        )
    if kind == "parquet":
        return _read_parquet(path, label)
    raw = path.read_bytes()
    if not raw.strip():
        raise UserError(f"{label}: file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"{label}: not UTF-8 text (byte at offset {e.start})") from None
    return _read_json(text, label) if kind == "json" else _read_csv(text, label, kind)


def _read_parquet(path: Path, label: str) -> list[Record]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as e:
        raise UserError(f"{label}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
    return [Record(label, i + 1, r) for i, r in enumerate(rows)]


def _read_csv(text: str, label: str, kind: str) -> list[Record]:
    reader = csv.DictReader(text.splitlines(keepends=True), delimiter="\t" if kind == "tsv" else ",")
    out = []
    try:
        for i, r in enumerate(reader):
            if None in r:
                raise UserError(f"{label}: row {i + 1}: more values than the header has columns")
            out.append(Record(label, i + 1, r))
    except csv.Error as e:
        raise UserError(f"{label}: malformed {kind.upper()} ({e})") from None
    return out


def _read_json(text: str, label: str) -> list[Record]:
    """A JSON array of objects, or one JSON object per line (JSON lines)."""
    if text.lstrip().startswith("["):
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as e:
            raise UserError(f"{label}: malformed JSON ({e.msg} at line {e.lineno})") from None
        rows = list(enumerate(data, 1))
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise UserError(f"{label}: line {n}: not a JSON object ({e.msg})") from None
    for n, r in rows:
        if not isinstance(r, dict):
            raise UserError(f"{label}: row {n}: expected a JSON object, got {type(r).__name__}")
    return [Record(label, n, r) for n, r in rows]
