"""Where a command may write: the one rule every writer of a user-named path follows.

A path the user names for output (``report --out``, ``figures --out``, ``export parquet DIR``,
``publish --dry-run DIR``, ``wh.datasets.write_demo_corpus(path)``, ...) is checked here before anything
is written:

- it is never the warehouse itself or one of its side files (``.wal``, ``.write-intent``, ``.writer``, ``.lock``), however
  it is spelled (symlinks and hard links resolved), and a folder that is cleared or filled never
  holds the warehouse;
- an existing file is replaced only when the user says so (``--overwrite``, ``overwrite=True``),
  and only when it is a regular file: a link, a FIFO, a device or a ``/proc`` entry is refused;
- a file is written to a temporary file beside it and renamed over it (:func:`replacing`), so it
  is whole or absent, and the write never follows a name the process opened meanwhile;
- a folder ctxprior fills (``export parquet``, ``publish --dry-run``, ``demo --out``) records the
  files it writes there in its ``manifest.json`` (:class:`OutputFolder`); ``--overwrite`` replaces
  those files and nothing else: the user's other files stay, and one in the way is refused.

Each refusal is a one-line :class:`UserError` (exit 2), raised before the command writes.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .errors import UserError, option

OVERWRITE = option("--overwrite", "overwrite=True")
SIDE_FILES = ("", ".wal", ".write-intent", ".writer", ".lock")  # .lock: replacing it would split the flock


def _protected(warehouse: str | os.PathLike) -> list[str]:
    """The warehouse's file and side files, as given and resolved."""
    db = os.fspath(warehouse)
    out = []
    for base in dict.fromkeys([db, os.path.realpath(db)]):
        out += [base + s for s in SIDE_FILES]
    return out


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def is_warehouse_file(path: str | os.PathLike, warehouse: str | os.PathLike) -> bool:
    """Whether ``path`` names the warehouse or one of its side files."""
    p = os.fspath(path)
    return any(_same_file(p, w) for w in _protected(warehouse))


def check_path_text(path: str | os.PathLike) -> None:
    """UserError unless ``path`` can name a file at all: no NUL byte, and no existing part of it
    before the last is a file (``wh.duckdb/x``), so no OSError or ValueError comes later."""
    text = os.fspath(path)
    if "\x00" in str(text):
        raise UserError(f"{text!r}: a path cannot hold a NUL byte")
    for parent in Path(text).parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise UserError(f"{text}: {parent} is a file, not a folder; write to another path")
            break


def check_output_file(
    path: str | os.PathLike, warehouse: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """``path`` as a file this command may write: not the warehouse, not a folder, and not an
    existing file unless ``overwrite``; UserError otherwise."""
    check_path_text(path)
    p = Path(path)
    if is_warehouse_file(p, warehouse):
        raise UserError(f"{path}: is the warehouse ({os.fspath(warehouse)}); write to another path")
    if p.is_dir():
        raise UserError(f"{path}: is a folder; give a file name")
    if (p.exists() or p.is_symlink()) and not overwrite:
        raise UserError(f"{path}: file exists; pass {OVERWRITE} to replace it, or another path")
    _check_plain(p)
    return p


def _check_plain(p: Path) -> None:
    """Refuse an existing ``p`` that is not a regular file (not followed: a link is refused)."""
    try:
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise UserError(f"{p}: cannot be checked ({e.strerror}); write to another path") from None
    if not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise UserError(f"{p}: is {what}; ctxprior replaces only regular files, write to another path")


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary file beside ``path`` to write into; renamed over ``path`` when the block ends
    without error, removed otherwise. The temporary name is created exclusively (never followed) and
    keeps ``path``'s suffix (matplotlib picks the format from it); ``path`` is checked again just
    before the rename, so a link or special file put there meanwhile is refused, not written into."""
    p = Path(path)
    _check_plain(p)
    try:
        tmp = _create_beside(p)
    except OSError as e:
        raise UserError(
            f"{path}: cannot create a file in {p.parent} ({e.strerror}); write to another path"
        ) from None
    try:
        yield Path(tmp)
        _check_plain(p)
        os.replace(tmp, p)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)


def check_output_files(
    paths: Iterable[str | os.PathLike], warehouse: str | os.PathLike, *, overwrite: bool = False
) -> list[Path]:
    """:func:`check_output_file` for each of ``paths``, all before any is written."""
    return [check_output_file(p, warehouse, overwrite=overwrite) for p in paths]


def check_output_dir(path: str | os.PathLike, warehouse: str | os.PathLike) -> Path:
    """``path`` as a folder this command may fill (or clear): not a file, and not holding the
    warehouse or its side files; UserError otherwise."""
    check_path_text(path)
    p = Path(path)
    if is_warehouse_file(p, warehouse):
        raise UserError(f"{path}: is the warehouse ({os.fspath(warehouse)}); write to another folder")
    if p.exists() and not p.is_dir():
        raise UserError(f"{path}: exists and is not a folder; pass a folder path")
    top = os.path.realpath(p)
    for w in _protected(warehouse):
        if os.path.exists(w) and os.path.realpath(w).startswith(top.rstrip(os.sep) + os.sep):
            raise UserError(
                f"{path}: holds the warehouse ({os.fspath(warehouse)}); write to a folder without it"
            )
    return p


def _create_beside(p: Path) -> str:
    """Create a new empty file beside ``p`` (exclusively: never an existing name or a link), with the
    mode a new file gets (the umask applies), or ``p``'s own mode when it replaces a file."""
    for _ in range(100):
        tmp = os.path.join(p.parent, f".{p.stem}.{secrets.token_hex(4)}.tmp{p.suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        with suppress(OSError):
            if p.is_file():
                os.fchmod(fd, stat.S_IMODE(os.lstat(p).st_mode))
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name beside {p}")


# -- folders ctxprior fills ----------------------------------------------------------------------

MANIFEST = "manifest.json"
_MAX_MANIFEST_BYTES = 64 << 20


class OutputFolder:
    """A folder ctxprior fills, and the record of what it wrote there: ``manifest.json``'s
    ``written`` list (paths relative to the folder), rewritten atomically *before* each file is
    written, so a crash leaves every file it made recorded.

    :meth:`prepare` (before any work): a missing or empty folder is used as is; a folder holding
    files needs ``overwrite``; then the files a ctxprior manifest of the same ``fmt`` records are
    removed and nothing else; a file ctxprior would write (``claims``) that it did not record is
    refused, and a ``manifest.json`` that is not ctxprior's is refused (the user's own).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        warehouse: str | os.PathLike,
        *,
        fmt: str,
        claims: Callable[[str], bool],
        overwrite: bool = False,
        what: str = "output",
    ) -> None:
        self.path, self.warehouse, self.fmt, self.claims = Path(path), warehouse, fmt, claims
        self.overwrite, self.what = overwrite, what
        self.written: set[str] = set()

    def prepare(self) -> OutputFolder:
        check_output_dir(self.path, self.warehouse)
        existing = _files_under(self.path) if self.path.is_dir() else []
        if existing:
            recorded = self._recorded()
            if not self.overwrite:
                if recorded is None:
                    raise UserError(
                        f"{self.path}: folder is not empty; pass an empty or new folder, or {OVERWRITE} "
                        "to write beside its files (none of them is replaced)"
                    )
                raise UserError(
                    f"{self.path}: folder holds an earlier ctxprior {self.what}; pass {OVERWRITE} "
                    f"to replace the files its {MANIFEST} records (nothing else), "
                    "or an empty or new folder"
                )
            recorded = recorded or set()
            in_way = [f for f in existing if f not in recorded and f != MANIFEST and self.claims(f)]
            if in_way:
                raise UserError(
                    f"{self.path / in_way[0]}: not written by ctxprior (not in {MANIFEST}) but in the way "
                    "of its output; move it away or choose another folder"
                )
            self._remove(sorted(recorded))
        self.path.mkdir(parents=True, exist_ok=True)
        self._save({"format": self.fmt, "incomplete": True})
        return self

    def _recorded(self) -> set[str] | None:
        """The files a ctxprior manifest in the folder records; None without a manifest."""
        m = self.path / MANIFEST
        if not (m.exists() or m.is_symlink()):
            return None
        bad = (
            f"{m}: not a manifest ctxprior wrote; refusing to replace files next to it, choose another folder"
        )
        try:
            if not stat.S_ISREG(os.lstat(m).st_mode) or os.lstat(m).st_size > _MAX_MANIFEST_BYTES:
                raise UserError(bad)
            data = json.loads(m.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            raise UserError(bad) from None
        paths = recorded_files(data)
        if paths is None:
            raise UserError(bad)
        if data.get("format") != self.fmt:
            raise UserError(
                f"{m}: records a ctxprior output of another kind ({data.get('format')}), "
                f"not a {self.fmt} one; choose another folder"
            )
        return paths

    def _remove(self, recorded: list[str]) -> None:
        """Remove the recorded files (all checked first), then the folders left empty by it."""
        for rel in recorded:
            p = self.path / rel
            if p.is_dir() and not p.is_symlink():
                raise UserError(f"{p}: listed in {MANIFEST} as a file but is a folder; move it away")
        for rel in recorded:
            with suppress(FileNotFoundError):
                os.unlink(self.path / rel)
        for rel in recorded:
            parent = (self.path / rel).parent
            while parent != self.path and self.path in parent.parents:
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent

    def add(self, rel: str) -> Path:
        """Record ``rel`` as written by ctxprior, then return its path (its folders made; none of
        them a link, so nothing is written outside the folder)."""
        target = self.path / rel
        here = self.path
        for part in Path(rel).parts[:-1]:
            here = here / part
            if here.is_symlink() or (here.exists() and not here.is_dir()):
                raise UserError(f"{here}: is not a plain folder; ctxprior writes only into plain folders")
            here.mkdir(exist_ok=True)
        _check_plain(target)
        self.written.add(rel)
        self._save({"format": self.fmt, "incomplete": True})
        return target

    def record_existing(self) -> None:
        """Record every file under the folder that ``claims`` names (written by a step that said
        its names only when done; :meth:`prepare` refused such files that were there before)."""
        found = {f for f in _files_under(self.path) if f != MANIFEST and self.claims(f)}
        if found - self.written:
            self.written |= found
            self._save({"format": self.fmt, "incomplete": True})

    def finish(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Write the final manifest (its ``format``, ``manifest``, the ``written`` list); return it."""
        manifest = {"format": self.fmt, **manifest, "written": sorted(self.written)}
        self._save(manifest, final=True)
        return manifest

    def _save(self, manifest: dict[str, Any], final: bool = False) -> None:
        body = manifest if final else {**manifest, "written": sorted(self.written)}
        with replacing(self.path / MANIFEST) as tmp:
            tmp.write_text(json.dumps(body, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def recorded_files(manifest: Any) -> set[str] | None:
    """The files a ctxprior manifest records as written (relative paths); None when ``manifest`` is
    not a ctxprior one. Manifests from before the ``written`` list: a Parquet export's files, plus
    ``README.md`` for a ``publish`` folder."""
    if not isinstance(manifest, dict) or not str(manifest.get("format", "")).startswith("ctxprior-"):
        return None
    written = manifest.get("written")
    if written is None and isinstance(manifest.get("tables"), list):
        written = [
            f.get("path") for e in manifest["tables"] if isinstance(e, dict) for f in e.get("files") or []
        ]
        written += ["README.md"] if "left_out" in manifest else []
    if not isinstance(written, list):
        return None
    out = set()
    for rel in written:
        if not isinstance(rel, str) or not rel or rel == MANIFEST or "\0" in rel:
            return None
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or rel != Path(rel).as_posix():
            return None
        out.add(rel)
    return out


def _files_under(folder: Path) -> list[str]:
    """Every entry under ``folder`` that is not a folder (links not followed), relative, sorted."""
    out = []
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        out += [(rel / f).as_posix() for f in files]
        out += [(rel / d).as_posix() for d in dirs if os.path.islink(os.path.join(root, d))]
    return sorted(out)


def claim_patterns(*patterns: str) -> Callable[[str], bool]:
    """A ``claims`` predicate from regular expressions matched against the whole relative path."""
    compiled = [re.compile(p) for p in patterns]
    return lambda rel: any(c.fullmatch(rel) for c in compiled)
