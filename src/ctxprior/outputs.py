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
  those files and nothing else: the user's other files stay, and one in the way is refused;
- a name read from the warehouse (a table, view, run or dataset name) becomes a file name only
  through :func:`file_name` (one path component of letters, digits, ``_ . - + =``; anything else is
  refused), and a path inside such a folder is one of plain parts (:func:`relative_parts`: no
  ``..``, nothing absolute);
- inside such a folder every write and every delete goes through the folder's descriptor
  (:func:`write_inside`, :meth:`OutputFolder._remove`): each sub-folder is opened relative to its
  parent with ``O_NOFOLLOW | O_DIRECTORY``, a file is created exclusively (``O_EXCL|O_NOFOLLOW``)
  and renamed with ``dir_fd``, so a symbolic link inside the folder never redirects a write or a
  delete; ``--overwrite`` deletes only regular files the manifest lists;
- a manifest over :data:`MAX_MANIFEST_BYTES` or listing over :data:`MAX_RECORDED` files is refused
  in one line before it is parsed further.

Each refusal is a one-line :class:`UserError` (exit 2), raised before the command writes.
"""

from __future__ import annotations

import errno
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


_FILLING: list[Path] = []
"""The folders an :class:`OutputFolder` is filling now (:meth:`OutputFolder.filling`), innermost last."""


def _inside_filled(p: Path) -> tuple[Path, str] | None:
    """The innermost folder being filled that holds ``p`` (by its spelling), and ``p`` relative to it."""
    absolute = Path(os.path.abspath(p))
    for folder in reversed(_FILLING):
        try:
            rel = absolute.relative_to(os.path.abspath(folder))
        except ValueError:
            continue
        if rel.parts:
            return folder, rel.as_posix()
    return None


@contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A new file to write into, renamed over ``path`` when the block ends without error, removed
    otherwise: :func:`write_inside` the folder being filled that holds ``path`` (the demo's
    ``--out``), else ``path``'s own folder, so every folder below the one the user named is opened
    without following a link, and the file is written through its descriptor. ``path`` is checked
    again just before the rename, so a link or special file put there meanwhile is refused."""
    p = Path(path)
    _check_plain(p)
    _fault("outputs.replacing")
    folder, rel = _inside_filled(p) or (p.parent, p.name)
    with write_inside(folder, rel) as tmp:
        yield Path(tmp)


def _fault(point: str) -> None:
    if os.environ.get("CTXPRIOR_FAULT"):
        from .faults import hit

        hit(point)


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


# -- names read from the warehouse, and paths inside a folder ctxprior fills ---------------------

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,127}")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def file_name(name: str, what: str = "table") -> str:
    """The one map from a name read from the warehouse (a table, view, run or dataset name) to a
    file name: the name itself when it is one safe path component (letters, digits, ``_ . - + =``,
    not starting with a dot, at most 128 characters); a one-line UserError otherwise. Names are
    never rewritten: a file named unlike its table would need a map back on import."""
    if isinstance(name, str) and _SAFE_NAME.fullmatch(name) and name not in (".", ".."):
        return name
    shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
    raise UserError(
        f"{what} {shown}: its name cannot be a file name (letters, digits and _ . - + = only, at most "
        "128, not starting with a dot); rename it, or leave it out"
    )


def _bad_relative(rel: str) -> bool:
    parts = rel.split("/")
    return (
        not rel
        or "\0" in rel
        or rel.startswith("/")
        or any(p in ("", ".", "..") for p in parts)
        or rel != Path(rel).as_posix()
    )


def relative_parts(rel: str, folder: str | os.PathLike) -> list[str]:
    """``rel`` (a path inside ``folder``, ``/``-separated) as its parts; UserError unless every
    part is a plain name (no ``..``, ``.``, empty part, NUL, nor an absolute path)."""
    if not isinstance(rel, str) or _bad_relative(rel):
        raise UserError(f"{Path(folder)}: {rel!r} is not a path inside the folder; refusing it")
    return rel.split("/")


def _open_top(folder: str | os.PathLike) -> int:
    """A descriptor of the output folder itself (the user named it: a link to it is followed)."""
    try:
        return os.open(folder, _DIR_FLAGS)
    except OSError as e:
        raise UserError(f"{folder}: cannot open the folder ({e.strerror}); write to another folder") from None


def _open_below(top: int, folder: Path, parts: list[str], create: bool) -> int | None:
    """A descriptor of ``folder/parts...`` opened part by part relative to ``top``, never through a
    link (``O_NOFOLLOW``); made where missing when ``create``, else None where missing."""
    fd = os.dup(top)
    here = folder
    for part in parts:
        here = here / part
        if create:
            with suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
        try:
            nfd = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
        except OSError as e:
            os.close(fd)
            if e.errno == errno.ENOENT and not create:
                return None
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UserError(
                    f"{here}: is not a plain folder (a symbolic link or a file); ctxprior writes and "
                    "deletes only inside plain folders, move it away"
                ) from None
            raise UserError(f"{here}: cannot open the folder ({e.strerror})") from None
        os.close(fd)
        fd = nfd
    return fd


def _entry_mode(dir_fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _check_entry(dir_fd: int, name: str, shown: Path) -> None:
    mode = _entry_mode(dir_fd, name)
    if mode is not None and not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise UserError(f"{shown}: is {what}; ctxprior replaces only regular files, move it away")


def fd_path(fd: int, fallback: str | os.PathLike) -> str:
    """A path naming the open file ``fd`` itself (``/proc/self/fd/N``: reopening it reaches that
    file whatever its name names now) for a writer that takes a path (DuckDB's ``COPY``);
    ``fallback`` where there is no ``/proc``."""
    proc = f"/proc/self/fd/{fd}"
    return proc if os.path.exists(proc) else os.fspath(fallback)


@contextmanager
def write_inside(folder: str | os.PathLike, rel: str) -> Iterator[str]:
    """Write ``folder/rel`` through the folder's descriptor: its sub-folders are made and opened
    without following a link, a new file is created exclusively beside the target, the block writes
    it through the path yielded (:func:`fd_path`), and it is renamed over ``rel`` (checked again to
    be absent or a regular file) with ``dir_fd``; removed when the block fails."""
    parts = relative_parts(rel, folder)
    top = _open_top(folder)
    try:
        pfd = _open_below(top, Path(folder), parts[:-1], create=True)
    finally:
        os.close(top)
    assert pfd is not None
    name, shown = parts[-1], Path(folder, *parts)
    try:
        _check_entry(pfd, name, shown)
        tmp, fd = _create_tmp(pfd, name, shown)
        try:
            mode = _entry_mode(pfd, name)
            if mode is not None:
                os.fchmod(fd, stat.S_IMODE(mode))  # a replaced file keeps its mode
            yield fd_path(fd, Path(folder, *parts[:-1], tmp))
            _check_entry(pfd, name, shown)
            os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
        finally:
            os.close(fd)
            with suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=pfd)
    finally:
        os.close(pfd)


def _create_tmp(dir_fd: int, name: str, shown: Path) -> tuple[str, int]:
    stem, dot, suffix = name.rpartition(".")
    for _ in range(100):
        tmp = f".{stem or suffix}.{secrets.token_hex(4)}.tmp{dot}{suffix if stem else ''}"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd
            )
        except FileExistsError:
            continue
        except OSError as e:
            raise UserError(f"{shown}: cannot create a file beside it ({e.strerror})") from None
        return tmp, fd
    raise UserError(f"{shown}: no free temporary name beside it")


# -- folders ctxprior fills ----------------------------------------------------------------------

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 << 20
"""The largest ``manifest.json`` of an output folder read before ``--overwrite`` (ctxprior's own
stay far below: a few hundred bytes per file written)."""
MAX_RECORDED = 100_000
"""The most files one manifest may record (a 14 M-entry manifest kept ``--overwrite`` busy for minutes)."""


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
            if not stat.S_ISREG(os.lstat(m).st_mode) or os.lstat(m).st_size > MAX_MANIFEST_BYTES:
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
        """Remove the recorded files through the folder's descriptor (all checked first: each a
        regular file, reached through plain folders, never a link), then the folders left empty."""
        top = _open_top(self.path)
        try:
            for unlink in (False, True):
                for rel in recorded:
                    self._remove_one(top, relative_parts(rel, self.path), unlink)
            for rel in recorded:
                parts = relative_parts(rel, self.path)[:-1]
                while parts and self._rmdir(top, parts):
                    parts = parts[:-1]
        finally:
            os.close(top)

    def _rmdir(self, top: int, parts: list[str]) -> bool:
        """Remove the folder ``parts`` when empty (through its parent's descriptor); whether it went."""
        pfd = _open_below(top, self.path, parts[:-1], create=False)
        if pfd is None:
            return False
        try:
            os.rmdir(parts[-1], dir_fd=pfd)
            return True
        except OSError:
            return False
        finally:
            os.close(pfd)

    def _remove_one(self, top: int, parts: list[str], unlink: bool) -> None:
        """Check (``unlink`` False) or remove one recorded file: absent is fine, a regular file is
        removed, anything else (a folder, a link, a FIFO) is refused in one line."""
        pfd = _open_below(top, self.path, parts[:-1], create=False)
        if pfd is None:
            return
        try:
            mode = _entry_mode(pfd, parts[-1])
            if mode is None:
                return
            if not stat.S_ISREG(mode):
                what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
                raise UserError(
                    f"{self.path.joinpath(*parts)}: listed in {MANIFEST} as a file but is {what}; move it away"
                )
            if unlink:
                with suppress(FileNotFoundError):
                    os.unlink(parts[-1], dir_fd=pfd)
        finally:
            os.close(pfd)

    def add(self, rel: str) -> Path:
        """Record ``rel`` as written by ctxprior, then return its path (its folders made through the
        folder's descriptor, none of them a link, so nothing is written outside the folder)."""
        parts = relative_parts(rel, self.path)
        top = _open_top(self.path)
        try:
            pfd = _open_below(top, self.path, parts[:-1], create=True)
            assert pfd is not None
            try:
                _check_entry(pfd, parts[-1], self.path.joinpath(*parts))
            finally:
                os.close(pfd)
        finally:
            os.close(top)
        self.written.add(rel)
        self._save({"format": self.fmt, "incomplete": True})
        return self.path.joinpath(*parts)

    def plain_folder(self, rel: str) -> Path:
        """Make ``rel`` a folder inside this one through the folder's descriptor (refused in one line
        when it or a folder above it is a link or a file), for a writer that then takes its path."""
        parts = relative_parts(rel, self.path)
        top = _open_top(self.path)
        try:
            fd = _open_below(top, self.path, parts, create=True)
            if fd is not None:
                os.close(fd)
        finally:
            os.close(top)
        return self.path.joinpath(*parts)

    @contextmanager
    def filling(self) -> Iterator[OutputFolder]:
        """While the block runs, :func:`replacing` a path inside this folder writes it through this
        folder's descriptor (writers that take a path: the demo's figures, report and corpus)."""
        _FILLING.append(self.path)
        try:
            yield self
        finally:
            _FILLING.remove(self.path)

    def writing(self, rel: str) -> Any:
        """:func:`write_inside` this folder (``rel`` recorded first with :meth:`add`)."""
        return write_inside(self.path, rel)

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
        write_manifest_file(self.path, body)


def write_manifest_file(folder: str | os.PathLike, manifest: dict[str, Any]) -> None:
    """Write ``folder/manifest.json`` whole or not at all, through the folder's descriptor."""
    with write_inside(folder, MANIFEST) as tmp:
        Path(tmp).write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")


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
    if not isinstance(written, list) or len(written) > MAX_RECORDED:
        return None
    out = set()
    for rel in written:
        if not isinstance(rel, str) or rel == MANIFEST or _bad_relative(rel):
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
