"""Corpus shards: finding them, checking them, and streaming their documents in bounded batches.

A shard is one file. Formats (by name):
- ``*.jsonl`` / ``*.jsonl.zst`` / ``*.jsonl.gz``: one JSON object per line with a
  string field ``text`` (the Pile's format). A line that is not JSON is skipped and counted
  (``bad_json``); a JSON line without a string ``text`` is skipped and counted (``missing_text``).
- ``*.txt`` / ``*.txt.zst`` / ``*.txt.gz``: plain UTF-8 text; documents are separated by blank lines
  (a window never crosses a blank line). Undecodable bytes become U+FFFD.
Memory: a batch holds about ``batch_chars`` characters of text plus the longest single line.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..inputs import check_input, check_inputs

JSONL_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.gz")
TXT_SUFFIXES = (".txt", ".txt.zst", ".txt.gz")
SUFFIXES = JSONL_SUFFIXES + TXT_SUFFIXES
READ_BYTES = 1 << 22
MAX_EXAMPLES = 5


def shard_format(path: str) -> str | None:
    """'jsonl' | 'txt' | None (not a corpus file)."""
    name = os.path.basename(path).lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(TXT_SUFFIXES):
        return "txt"
    return None


def find_shards(inputs: list[str]) -> list[str]:
    """Expand files and folders (recursively) into a sorted, de-duplicated list of shard paths."""
    if not inputs:
        raise UserError("no CORPUS given; pass .jsonl/.jsonl.zst/.jsonl.gz/.txt files or folders")
    out: list[str] = []
    for inp in inputs:
        p = Path(inp)
        if p.is_dir():
            found = sorted(str(f.resolve()) for f in p.rglob("*") if f.is_file() and shard_format(str(f)))
            if not found:
                raise UserError(
                    f"{inp}: folder has no corpus files ({', '.join(SUFFIXES)}); "
                    "pass a folder of .jsonl(.zst|.gz) or .txt files"
                )
            out.extend(found)
        elif p.is_file():
            if not shard_format(str(p)):
                raise UserError(
                    f"{inp}: not a corpus file (expected one of {', '.join(SUFFIXES)}); "
                    "rename it or convert it to JSON lines with a 'text' field"
                )
            out.append(str(p.resolve()))
        else:
            raise UserError(f"{inp}: no such file or folder")
    check_inputs(out)  # never the warehouse (a link of it): ctxprior/inputs.py
    seen: set[str] = set()
    uniq = []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


class _Tap(io.RawIOBase):
    """Reads the raw (compressed) file, hashing the bytes and counting them for progress."""

    def __init__(self, f):
        self.f = f
        self.sha = hashlib.sha256()
        self.pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.f.readinto(b)
        if n:
            self.sha.update(memoryview(b)[:n])
            self.pos += n
        return n or 0


class _ZstdReader:
    """Decompresses a (multi-frame) zstd stream; unlike zstandard's stream_reader it raises on a
    truncated stream instead of returning the prefix silently."""

    def __init__(self, raw):
        import zstandard

        self.raw = raw
        self.dctx = zstandard.ZstdDecompressor()
        self.dobj = self.dctx.decompressobj()
        self.fed = False  # bytes given to the current frame
        self.done = False

    def read(self, n: int = READ_BYTES) -> bytes:
        while not self.done:
            chunk = self.raw.read(max(n // 4, 1 << 16))
            if not chunk:
                self.done = True
                if self.fed and not self.dobj.eof:
                    raise EOFError("zstd stream is truncated (the last frame has no end)")
                return b""
            out = []
            while chunk:
                self.fed = True
                out.append(self.dobj.decompress(chunk))
                chunk = b""
                if self.dobj.eof:
                    chunk = self.dobj.unused_data
                    self.dobj = self.dctx.decompressobj()
                    self.fed = False
            data = b"".join(out)
            if data:
                return data
        return b""


def _open_decompressed(tap: _Tap, path: str):
    name = path.lower()
    if name.endswith(".zst"):
        return _ZstdReader(tap)
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=tap, mode="rb")
    return tap


def check_shard(path: str) -> None:
    """Fail early (UserError) when a shard cannot be opened or its first block not decompressed."""
    check_input(path)
    try:
        with open(path, "rb") as f:
            r = _open_decompressed(_Tap(f), path)
            r.read(1 << 16)
    except (OSError, EOFError, ValueError, Exception) as e:  # zstandard.ZstdError is an Exception
        kind = "zstd" if path.lower().endswith(".zst") else "gzip" if path.lower().endswith(".gz") else "file"
        raise UserError(
            f"{path}: cannot read it as a {kind} file ({_one_line(e)}); re-download or remove it"
        ) from None


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__


@dataclass
class ShardStats:
    n_lines: int = 0
    n_documents: int = 0
    n_bad_json: int = 0
    n_missing_text: int = 0
    bad_examples: list[str] = field(default_factory=list)
    sha256: str = ""
    bytes_decompressed: int = 0  # JSON lines / text bytes

    def bad(self, kind: str, line_no: int) -> None:
        if kind == "json":
            self.n_bad_json += 1
        else:
            self.n_missing_text += 1
        if len(self.bad_examples) < MAX_EXAMPLES:
            self.bad_examples.append(
                f"line {line_no}: {'not JSON' if kind == 'json' else 'no string text field'}"
            )


def _lines(reader, stats: ShardStats) -> Iterator[bytes]:
    rest = b""
    while True:
        chunk = reader.read(READ_BYTES)
        if not chunk:
            break
        stats.bytes_decompressed += len(chunk)
        parts = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def iter_batches(
    path: str,
    stats: ShardStats,
    text_field: str = "text",
    batch_chars: int = 1 << 22,
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[str]]:
    """Yield lists of document texts of about ``batch_chars`` characters; fills ``stats``."""
    fmt = shard_format(path)
    check_input(path)
    with open(path, "rb") as f:
        tap = _Tap(f)
        lines = _lines(_open_decompressed(tap, path), stats)
        tail: list[str] = []
        texts = _json_texts(lines, stats, text_field) if fmt == "jsonl" else _paragraphs(lines, stats, tail)
        batch, reported = yield from _full_batches(texts, stats, batch_chars, tap, progress)
        batch += tail
        if batch:
            stats.n_documents += len(batch)
            yield batch
        _read_rest(tap, stats, progress, reported)


def _json_texts(lines: Iterator[bytes], stats: ShardStats, text_field: str) -> Iterator[str]:
    """The string ``text_field`` of each JSON line; counts the lines, skips and counts the bad ones."""
    loads = json.loads
    for line in lines:
        stats.n_lines += 1
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except ValueError:  # JSONDecodeError and UnicodeDecodeError
            stats.bad("json", stats.n_lines)
            continue
        text = obj.get(text_field) if isinstance(obj, dict) else None
        if not isinstance(text, str):
            stats.bad("text", stats.n_lines)
            continue
        yield text


def _paragraphs(lines: Iterator[bytes], stats: ShardStats, tail: list[str]) -> Iterator[str]:
    """The blank-line separated paragraphs of plain text; counts the lines. A last paragraph not
    followed by a blank line is put in ``tail`` instead (it joins the last batch without closing one)."""
    para: list[str] = []
    for line in lines:
        stats.n_lines += 1
        s = line.decode("utf-8", errors="replace")
        if s.strip():
            para.append(s)
            continue
        if para:
            text = "\n".join(para)
            para = []
            yield text
    if para:
        tail.append("\n".join(para))


def _full_batches(
    texts: Iterator[str],
    stats: ShardStats,
    batch_chars: int,
    tap: _Tap,
    progress: Callable[[int], None] | None,
) -> Generator[list[str], None, tuple[list[str], int]]:
    """Yield ``texts`` in batches once they reach ``batch_chars`` characters, counting their documents and
    reporting the file bytes read after each; return the unfinished last batch and the bytes reported."""
    batch: list[str] = []
    size = 0
    reported = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= batch_chars:
            stats.n_documents += len(batch)
            yield batch
            batch, size = [], 0
            if progress:
                progress(tap.pos - reported)
                reported = tap.pos
    return batch, reported


def _read_rest(tap: _Tap, stats: ShardStats, progress: Callable[[int], None] | None, reported: int) -> None:
    """Read (and so hash) the rest of the file, report the bytes not yet reported, record its sha256."""
    while tap.read(READ_BYTES):  # hash the whole file, including any trailing bytes
        pass
    if progress:
        progress(tap.pos - reported)
    stats.sha256 = tap.sha.hexdigest()
