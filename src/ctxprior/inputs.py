"""Every input a user hands ctxprior follows two rules. Layer 0: imports nothing of ctxprior but
``errors``.

**Which paths:** never the warehouse, however it is spelled. Every input path a command reads (a CSV or Parquet file of ``covariates add``, KG files, corpus
files, a ``fakes add`` file, a spec file, ``publish --citation``, ``sql --allow-read``, an import
folder's files, ...) goes through :func:`check_input` before it is opened. It compares the path's
identity (``st_dev``, ``st_ino``, links followed) with the warehouse file and its ``.wal`` and
refuses a match in one line (a :class:`UserError`, exit 2): a symlink or hard link of the warehouse
given as an input would otherwise open a second descriptor of the file, and closing it drops
DuckDB's POSIX lock on it (docs/write-protocol.md).

The warehouses compared with are those this process has open (``storage.store.open_store`` calls
:func:`note_warehouse`, ``Store.close`` :func:`forget_warehouse`), the command's ``--db`` (set by
the CLI at start-up, so inputs read before the warehouse is opened are checked too), and any
``warehouse`` passed explicitly.

**What they hold.** Structured inputs (spec files, import manifests, ``--var`` values) are read
with bounds, then checked against a declared schema, each failure one line that names the input
and the field (``spec: question must be a string (got 5)``), before anything is written.

Bounds: a size (:data:`MAX_BYTES`), a nesting depth (:data:`MAX_DEPTH`), integers of at most
:data:`MAX_DIGITS` digits, no duplicated keys, and at most :data:`MAX_VALUES` values with YAML
aliases expanded (so a "billion laughs" file is refused as it is read, not when walked). Schemas are pydantic models (strict: no coercion of ``5`` to
``"5"``); :func:`validated` turns the first validation error into the one line.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from typing import Any, BinaryIO

from .errors import UserError

_WAREHOUSES: dict[str, int] = {}  # the warehouses this process has open: path -> how many opens
_COMMAND: list[str] = []  # the running command's --db


def note_warehouse(path: str | os.PathLike) -> None:
    """Compare every later input with the warehouse at ``path`` (and its ``.wal``) while it is open."""
    p = os.path.abspath(os.fspath(path))
    _WAREHOUSES[p] = _WAREHOUSES.get(p, 0) + 1


def forget_warehouse(path: str | os.PathLike) -> None:
    """One open of the warehouse at ``path`` ended (the counterpart of :func:`note_warehouse`)."""
    p = os.path.abspath(os.fspath(path))
    n = _WAREHOUSES.get(p, 0) - 1
    if n > 0:
        _WAREHOUSES[p] = n
    else:
        _WAREHOUSES.pop(p, None)


def command_warehouse(path: str | os.PathLike | None) -> None:
    """The CLI's ``--db`` for the command that runs now (replaces the previous command's)."""
    _COMMAND[:] = [os.path.abspath(os.fspath(path))] if path else []


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def warehouse_of(path: str | os.PathLike, warehouse: str | os.PathLike | None = None) -> str | None:
    """The warehouse (or its ``.wal``) that ``path`` is, by device and inode; None when none."""
    try:
        p = os.path.expanduser(os.fspath(path))
    except TypeError:
        return None
    if not p or "\0" in p:
        return None
    ident = _identity(p)
    if ident is None:
        return None
    bases = [*_COMMAND, *_WAREHOUSES]
    if warehouse is not None:
        bases.insert(0, os.fspath(warehouse))
    for base in bases:
        for f in (base, base + ".wal"):
            if _identity(f) == ident:
                return base
    return None


def _label(path: str | os.PathLike, what: str) -> str:
    return f"{what} {os.fspath(path)}" if what else os.fspath(path)


def check_input(path: str | os.PathLike, what: str = "", warehouse: str | os.PathLike | None = None) -> None:
    """Refuse ``path`` in one line when it is the warehouse or its WAL (a symlink, a hard link, the
    same name), or when it is neither a regular file nor a folder (a FIFO would hang the reader, a
    device such as ``/dev/zero`` never ends): call before opening any input. ``what`` names the
    option in the message. :func:`open_input` opens a file by the same rule, without blocking."""
    base = warehouse_of(path, warehouse)
    if base is not None:
        raise UserError(
            f"{_label(path, what)}: is the warehouse {base} (the same file by device and inode); "
            "give another file, or query its tables"
        )
    try:
        mode = os.stat(os.path.expanduser(os.fspath(path))).st_mode
    except (OSError, ValueError, TypeError):
        return  # a missing path: the reader says so in its own words
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise _not_a_file(path, what)


def _not_a_file(path: str | os.PathLike, what: str) -> UserError:
    return UserError(f"{_label(path, what)}: not a regular file (a FIFO, a device or a socket); give a file")


def open_input(
    path: str | os.PathLike, what: str = "", warehouse: str | os.PathLike | None = None
) -> BinaryIO:
    """``path`` opened for reading by the input rule: never the warehouse (:func:`check_input`),
    opened with ``O_NONBLOCK`` (a FIFO cannot hang the open) and kept only when the descriptor is
    a regular file (a FIFO, a device, a folder: one line); returned in blocking mode, binary."""
    check_input(path, what, warehouse)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(os.path.expanduser(os.fspath(path)), flags)
    except (OSError, ValueError) as e:
        shown = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UserError(f"{_label(path, what)}: cannot be read ({shown})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_a_file(path, what)
        if warehouse_of(f"/proc/self/fd/{fd}", warehouse) is not None:  # swapped since the check
            check_input(f"/proc/self/fd/{fd}", what, warehouse)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def copy_input(
    src: str | os.PathLike, dst: str | os.PathLike, what: str = "", warehouse: str | os.PathLike | None = None
) -> str:
    """Copy ``src`` (opened by the input rule, :func:`open_input`) to ``dst``, a new file
    (``O_EXCL | O_NOFOLLOW``, mode 0600), hashing the bytes as they are copied; their sha256. A
    reader of ``dst`` reads exactly the bytes hashed, whatever happens to ``src`` afterwards."""
    import hashlib

    h = hashlib.sha256()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with open_input(src, what, warehouse) as f, os.fdopen(os.open(dst, flags, 0o600), "wb") as out:
        while chunk := f.read(1 << 22):
            h.update(chunk)
            out.write(chunk)
    return h.hexdigest()


def read_input(
    path: str | os.PathLike,
    what: str = "",
    limit: int | None = None,
    warehouse: str | os.PathLike | None = None,
) -> bytes:
    """The bytes of input file ``path`` (:func:`open_input`), at most ``limit`` (one line past it)."""
    with open_input(path, what, warehouse) as f:
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise UserError(f"{_label(path, what)}: larger than {limit:,} bytes; not a ctxprior input")
    return data


def read_input_text(
    path: str | os.PathLike,
    what: str = "",
    limit: int | None = None,
    warehouse: str | os.PathLike | None = None,
) -> str:
    """Input file ``path`` as UTF-8 text (:func:`read_input`; a byte-order mark dropped)."""
    data = read_input(path, what, limit, warehouse)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"{_label(path, what)}: not UTF-8 text (byte {e.start}); give a text file") from None


def check_inputs(
    paths: Iterable[str | os.PathLike], what: str = "", warehouse: str | os.PathLike | None = None
) -> None:
    for p in paths:
        check_input(p, what, warehouse)


MAX_BYTES = 64 * 2**20  # a spec or a manifest is far smaller; a larger file is not one
MAX_DEPTH = 64  # a spec nests three levels, a manifest four
MAX_DIGITS = 30  # every count, version and id fits in 19 digits (BIGINT)
MAX_VALUES = 10**6  # values in all, aliases expanded


class _Refused(ValueError):
    """What a reader refuses (the message's tail); the caller adds the input's name."""


def bounded(value: Any, what: str) -> Any:
    """``value`` unless its lists and mappings nest deeper than :data:`MAX_DEPTH` or hold more than
    :data:`MAX_VALUES` values in all, each alias counted as often as it is used (so a YAML
    "billion laughs" is refused here, before any reader walks it); walked without recursion."""
    count, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        count += 1
        if count > MAX_VALUES:
            raise UserError(
                f"{what}: holds more than {MAX_VALUES:,} values (YAML aliases expanded); not a ctxprior input"
            )
        if isinstance(v, dict):
            items: Any = [*v.keys(), *v.values()]
        elif isinstance(v, list):
            items = v
        else:
            continue
        if d > MAX_DEPTH:
            raise UserError(f"{what}: nested more than {MAX_DEPTH} levels deep")
        todo.extend((x, d + 1) for x in items)
    return value


def _int(text: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise _Refused(f"an integer of {len(digits)} digits (at most {MAX_DIGITS})")
    return int(text)


def _unique(pairs: list[tuple[Any, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _Refused(f"the key '{k}' appears twice in one object; remove one")
        out[k] = v
    return out


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def loads_json(text: str, what: str, or_text: bool = False) -> Any:
    """``text`` as JSON, bounded (module docstring); UserError ``"<what>: <problem>"``.
    ``or_text``: text that is not JSON at all is returned as it is (``sql --var``'s strings)."""
    if len(text) > MAX_BYTES:
        raise UserError(f"{what}: larger than {MAX_BYTES // 2**20} MiB; not a ctxprior input")
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_int=_int, parse_constant=_constant)
    except _Refused as e:
        raise UserError(f"{what}: {e}") from None
    except RecursionError:
        raise UserError(f"{what}: nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as e:
        if or_text:
            return text
        raise UserError(f"{what}: not JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # e.g. Python's limit on the digits of an int
        raise UserError(f"{what}: not JSON ({str(e).splitlines()[0]})") from None
    return bounded(value, what)


def bounded_yaml_loader():
    """PyYAML's SafeLoader with duplicated keys, deep nesting and long integers refused (what an
    alias expands to is bounded after loading, by ``bounded``) (made on first use: yaml is imported only by the readers that need it)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            self._depth = getattr(self, "_depth", 0) + 1
            if self._depth > MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(k, deep=True) for k, _ in node.value]
            for i, k in enumerate(keys):
                try:
                    repeated = k in keys[:i]
                except TypeError:  # an unhashable key: SafeLoader's own error says so
                    break
                if repeated:
                    raise _Refused(f"the key '{k}' appears twice in one mapping; remove one")
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_int(self, node):
            _int(str(node.value).replace("_", ""))
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


def loads_yaml(text: str, what: str) -> Any:
    """``text`` as YAML (so JSON too), bounded (module docstring); UserError ``"<what>: <problem>"``."""
    import yaml

    if len(text) > MAX_BYTES:
        raise UserError(f"{what}: larger than {MAX_BYTES // 2**20} MiB; not a ctxprior input")
    try:
        value = yaml.load(text, Loader=bounded_yaml_loader())  # a SafeLoader subclass
    except _Refused as e:
        raise UserError(f"{what}: {e}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        raise UserError(f"{what}: not YAML or JSON ({str(e).splitlines()[0]})") from None
    return bounded(value, what)


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "empty",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(loc: tuple) -> str:
    """pydantic's location as a dotted field name (list positions in brackets)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(("function-", "union[", "tagged-union[")) and part not in (
            "str",
            "int",
            "list[str]",
            "dict[str,str]",
        ):
            out += ("." if out else "") + str(part)
    return out or "the whole"


def problem(error: Any) -> str:
    """One pydantic error (``ValidationError.errors()[i]``) as ``"<field> must be ... (got ...)"``."""
    where, kind, value = _field(tuple(error["loc"])), error["type"], error.get("input")
    if tuple(error["loc"])[-1:] == ("[key]",):
        return f"{_field(tuple(error['loc'])[:-2])}: key {_shown(value)} must be a string"
    if kind == "extra_forbidden":
        return f"unknown key '{where.rsplit('.', 1)[-1]}'"
    if kind == "missing":
        return f"{where} is missing"
    if kind in _EXPECTED:
        return f"{where} must be {_EXPECTED[kind]} (got {_shown(value)})"
    message = str(error.get("msg", kind)).removeprefix("Value error, ")
    return f"{where}: {message[:1].lower()}{message[1:]} (got {_shown(value)})"


def validated(model: Any, data: Any, what: str) -> Any:
    """``data`` as the pydantic ``model``, else UserError ``"<what>: <first problem>"``."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        raise UserError(
            f"{what}: {problem(errors[0])}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        ) from None
