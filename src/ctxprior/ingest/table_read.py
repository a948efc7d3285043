"""Read a table for ``ctxprior ingest table``: a CSV, TSV, JSONL, JSON or Parquet file (local, a
Hugging Face dataset folder, ``hf://datasets/...`` or a URL), as records that know their row.

A folder (e.g. a Hub dataset downloaded with ``hf download --repo-type dataset``) is searched for
data files (``*.parquet``, ``*.jsonl``, ``*.json``, ``*.csv``, ``*.tsv``; hidden folders left out);
``file`` (a glob relative to the folder, e.g. ``data/dev-*``) picks among them. Several files of
one kind are read in name order. Provenance: a file's origin and sha256 as ``ingest.sources``
records them; a folder's sha256 is the sha256 of its files' ``<relative path> <sha256>`` lines.

Files are parsed the way the ecosystem parses them, never split by hand: CSV and TSV by pandas'
C parser (``pandas.read_csv``: what the DRUID authors, ``datasets`` and most papers' code read
these files with; it breaks records only at CR / LF / CRLF outside quotes, so U+2028, U+0085, form
feed or NUL inside a cell stay in that cell), with every value a string (no type inference: "1977"
and "007" stay as written; an empty cell, or a cell missing at a row's end, is ""); JSON lines by
the JSON Lines rule (one value per ``\n``-terminated line, CR before it allowed: what
``pandas.read_json(lines=True)`` does) and the standard ``json`` parser; JSON arrays by ``json``;
Parquet by pyarrow. pyarrow.csv was not chosen: it refuses rows with fewer values than the header
(pandas pads them) and cannot say which row it refused; DuckDB's ``read_csv`` renames duplicated
header names and sniffs dialects. A record's ``row`` is its 1-based data row: the header and blank
lines are not counted (pandas' index + 1); a JSON-lines record's row is its line number.

Refused with one line naming the file (and the row, column or key): an empty file, text that is
not UTF-8, a malformed CSV/TSV (an unterminated quote; a row with more values than the header has
columns), a header naming a column twice, a JSON object with a key twice, JSON nested deeper than
Python's parser goes, a value that is not a JSON object.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import check_input, read_input
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
    check_input(path, label if label != str(path) else "")  # never the warehouse: ctxprior/inputs.py
    if kind == "parquet":
        return _read_parquet(path, label)
    raw = read_input(path, label if label != str(path) else "")  # a regular file, never blocks
    if not raw.strip():
        raise UserError(f"{label}: file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"{label}: not UTF-8 text (byte at offset {e.start})") from None
    return _read_json(text, label) if kind == "json" else _read_csv(raw, label, kind)


def _read_parquet(path: Path, label: str) -> list[Record]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        raise UserError(f"{label}: not a readable Parquet file ({str(e).splitlines()[0]})") from None
    _no_duplicate(table.column_names, label, "column")
    return [Record(label, i + 1, r) for i, r in enumerate(table.to_pylist())]


def _no_duplicate(names: list, label: str, what: str) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise UserError(f"{label}: {what} '{n}' appears twice in the header; rename one")
        seen.add(n)


_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_PANDAS_EOF = re.compile(r"EOF inside string starting at row (\d+)")


def _csv_frame(raw: bytes, sep: str, nrows: int | None = None, skip_blank: bool = True):
    import pandas as pd

    return pd.read_csv(
        io.BytesIO(raw),
        sep=sep,
        header=None,
        dtype=str,
        keep_default_na=False,
        na_filter=False,
        skip_blank_lines=skip_blank,
        engine="c",
        encoding="utf-8",
        nrows=nrows,
    )


def _data_row(raw: bytes, sep: str, record: int) -> int:
    """The data row (header and blank lines not counted) of pandas' 1-based ``record`` (which
    counts both), read again up to the record before it."""
    if record <= 1:
        return record
    frame = _csv_frame(raw, sep, nrows=record - 1, skip_blank=False)
    blank = sum(1 for r in frame.values.tolist()[1:] if all(v == "" for v in r))
    return record - 1 - blank


def _read_csv(raw: bytes, label: str, kind: str) -> list[Record]:
    import pandas as pd

    sep = "\t" if kind == "tsv" else ","
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        rows = _csv_frame(raw, sep).values.tolist()
    except pd.errors.ParserError as e:
        msg = str(e).strip()
        if m := _PANDAS_LINE.search(msg):
            row = _data_row(raw, sep, int(m[2]))
            raise UserError(
                f"{label}: row {row}: {m[3]} values, more than the header's {m[1]} columns"
            ) from None
        if m := _PANDAS_EOF.search(msg):
            row = _data_row(raw, sep, int(m[1]) + 1)
            raise UserError(f"{label}: row {row}: a quote is opened and never closed") from None
        raise UserError(f"{label}: malformed {kind.upper()} ({msg.splitlines()[0]})") from None
    except pd.errors.EmptyDataError:
        raise UserError(f"{label}: file is empty") from None
    header, body = [str(h) for h in rows[0]], rows[1:]
    _no_duplicate(header, label, "column")
    return [Record(label, i + 1, dict(zip(header, r))) for i, r in enumerate(body)]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _loads(text: str, where: str) -> Any:
    """``json.loads``, refusing duplicated keys and nesting deeper than the parser goes (one line)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        raise UserError(f"{where}: a JSON object has the key '{e.key}' twice; remove one") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply to read") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's limit on the digits of an int (4300)
        raise UserError(f"{where}: holds an integer too long to read (over 4300 digits)") from None


def _read_json(text: str, label: str) -> list[Record]:
    """A JSON array of objects, or one JSON object per line (JSON lines: lines end at LF only)."""
    if text.lstrip().startswith("["):
        try:
            data: Any = _loads(text, label)
        except json.JSONDecodeError as e:
            raise UserError(f"{label}: malformed JSON ({e.msg} at line {e.lineno})") from None
        rows = list(enumerate(data, 1))
    else:
        rows = []
        for n, line in enumerate(text.split("\n"), 1):
            if line.strip():
                try:
                    rows.append((n, _loads(line, f"{label}: line {n}")))
                except json.JSONDecodeError as e:
                    raise UserError(f"{label}: line {n}: not a JSON object ({e.msg})") from None
    for n, r in rows:
        if not isinstance(r, dict):
            raise UserError(f"{label}: row {n}: expected a JSON object, got {type(r).__name__}")
    return [Record(label, n, r) for n, r in rows]
