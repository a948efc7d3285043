"""Structured inputs a user hands ctxprior (spec files, import manifests, ``--var`` values): read
with bounds, then checked against a declared schema, each failure one line that names the input
and the field (``spec: question must be a string (got 5)``), before anything is written.

Bounds: a size (:data:`MAX_BYTES`), a nesting depth (:data:`MAX_DEPTH`), integers of at most
:data:`MAX_DIGITS` digits, no duplicated keys, and at most :data:`MAX_VALUES` values with YAML
aliases expanded (so a "billion laughs" file is refused as it is read, not when walked). Schemas are pydantic models (strict: no coercion of ``5`` to
``"5"``); :func:`validated` turns the first validation error into the one line.

Layer 0: imports nothing of ctxprior but ``errors``.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import UserError

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
