"""Argument types checked at run time: a public function or method of the API checks its arguments
against its annotations before it runs, so a notebook user's wrong type is one clear error naming the
argument (an ``ArgumentTypeError``: both a TypeError and a UserError), not a raw duckdb or pandas
exception; a path argument holding a NUL byte is refused the same way. Applied explicitly: ``@checked`` on a function, ``@checked_methods`` on a class."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def _matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits the annotation ``hint`` (unknown annotations accept anything)."""
    import collections.abc as abc
    import numbers
    import os
    import types
    import typing

    if hint is Any:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"
    if hint in (int, float):
        ok = numbers.Integral if hint is int else numbers.Real
        return isinstance(value, ok) and not isinstance(value, bool)
    if hint is Path:
        return isinstance(value, os.PathLike)
    if origin is abc.Sequence:
        if (
            isinstance(value, (str, bytes, abc.Mapping))
            or not isinstance(value, abc.Sized)
            or not isinstance(value, abc.Iterable)
        ):
            return False
        return not args or all(_matches(v, args[0]) for v in value)
    if origin in (dict, abc.Mapping) or hint in (dict, abc.Mapping):
        if not isinstance(value, abc.Mapping):
            return False
        return len(args) != 2 or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
    if origin is abc.Callable or hint is abc.Callable:
        return callable(value)
    if isinstance(hint, type) and origin is None:
        return isinstance(value, hint)
    return True  # Any, TypeVars and the like


def _names_a_path(hint: Any) -> bool:
    """Whether the annotation ``hint`` takes a path (``Path``, ``str | Path``, ``Sequence[Path]``...)."""
    import typing

    return hint is Path or any(_names_a_path(a) for a in typing.get_args(hint))


def _nul(value: Any) -> bool:
    """Whether ``value`` (a path, or a list of them) holds a NUL byte: no file can be named so."""
    import os

    if isinstance(value, (str, os.PathLike)):
        return "\x00" in str(os.fspath(value))
    return isinstance(value, (list, tuple)) and any(_nul(v) for v in value)


def _plain(value: Any) -> Any:
    """numpy / pandas values as Python ones: a numpy scalar -> int, float, bool; an array, Series
    or Index -> a list (a notebook passes df["run_id"].unique() as runs)."""
    mod = type(value).__module__.split(".")[0]
    if mod == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    if mod in ("numpy", "pandas") and hasattr(value, "tolist"):
        return value.tolist()
    if type(value) in (list, tuple):
        return type(value)(_plain(v) for v in value)
    return value


def _describe(hint: Any) -> str:
    """'an integer or None', 'a list of strings', ... for an annotation."""
    import collections.abc as abc
    import types
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(a) for a in args))
    if origin is abc.Sequence:
        return "a list" + (
            f" of {_describe(args[0]).split(' ', 1)[-1]}s" if args and args[0] is not Any else ""
        )
    names = {
        type(None): "None",
        bool: "a bool",
        int: "an integer",
        float: "a number",
        str: "a string",
        Path: "a path",
        abc.Callable: "a function",
    }
    if origin is abc.Callable:
        return "a function"
    if origin in (dict, abc.Mapping) or hint in (dict, abc.Mapping):
        return "a mapping" + (f" of {_describe(args[0])} to {_describe(args[1])}" if len(args) == 2 else "")
    if hint in names:
        return names[hint]
    module = getattr(hint, "__module__", "").split(".")[0]
    return f"a {module + '.' if module and module != 'ctxprior' else ''}{getattr(hint, '__name__', hint)}"


# modules the API imports for type checkers only (``if TYPE_CHECKING``), so that the command line
# starts without them: an annotation naming one imports it when the function is first called
_TYPE_ONLY_MODULES = {"pd": "pandas", "pa": "pyarrow", "np": "numpy"}


def _parameter_hints(fn: Callable) -> dict[str, Any]:
    """The annotations of ``fn``'s parameters as types (its return value is not checked, so a
    return annotation such as ``pd.DataFrame`` costs no import)."""
    import importlib
    import inspect
    import re
    import types
    import typing

    ann = {k: v for k, v in getattr(fn, "__annotations__", {}).items() if k != "return"}
    globalns = inspect.unwrap(fn).__globals__
    named = {n for v in ann.values() if isinstance(v, str) for n in re.findall(r"\b(\w+)\.", v)}
    localns = {
        n: importlib.import_module(m)
        for n, m in _TYPE_ONLY_MODULES.items()
        if n in named and n not in globalns
    }
    return typing.get_type_hints(
        types.SimpleNamespace(__annotations__=ann), globalns=globalns, localns=localns
    )


def checked(fn: Callable) -> Callable:
    """``fn`` with its arguments checked against its annotations (read on the first call)."""
    import functools
    import inspect

    from ..errors import ArgumentTypeError

    sig, state = inspect.signature(fn), {}
    where = fn.__qualname__.removesuffix(".__init__")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "hints" not in state:
            state["hints"] = _parameter_hints(fn)
        hints = state["hints"]
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentTypeError(f"{where}: {e}") from None
        for name, value in bound.arguments.items():
            p = sig.parameters[name]
            if name not in hints or hints[name] is Any or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            value = bound.arguments[name] = _plain(value)
            if not _matches(value, hints[name]):
                shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
                raise ArgumentTypeError(
                    f"{where}: {name} must be {_describe(hints[name])}, got {type(value).__name__} {shown}"
                )
            if _names_a_path(hints[name]) and _nul(value):
                raise ArgumentTypeError(f"{where}: {name} holds a NUL byte; no path can")
        return fn(*bound.args, **bound.kwargs)

    return wrapper


def declared_keywords(options: Any, **hints: Any) -> Callable:
    """The signature of ``fn(self, ..., *, ..., **options)`` made from the declarations
    ``options`` (``ctxprior.options.Option``): one keyword per declared option that is not already a
    parameter of ``fn``, with the declared default and a type read from the declaration (``hints``
    names those the declaration cannot tell, e.g. a model object besides its name). ``fn`` gets
    every declared option in ``**options`` under its declared name, the defaults filled in; an
    unknown keyword is a TypeError, as for any function. ``inspect.signature``, ``help()`` and
    :func:`checked` read the made signature."""
    import functools
    import inspect

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        made = [
            inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=hint)
            for o in options
            if o.name not in sig.parameters
            for hint in [hints.get(o.name, _declared_type(o))]
        ]
        keyword = [p for p in own if p.kind is p.KEYWORD_ONLY]
        full = sig.replace(parameters=[*(p for p in own if p not in keyword), *made, *keyword])

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = full.bind(*args, **kwargs)
            bound.apply_defaults()
            return fn(*bound.args, **bound.kwargs)

        wrapper.__signature__ = full  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**fn.__annotations__, **{p.name: p.annotation for p in made}}
        return wrapper

    return decorate


def _declared_type(option: Any) -> Any:
    """The API's type of a declared option: its kind, a sequence of them for a list, or None too
    where the declared default is None."""
    from collections.abc import Sequence

    hint: Any = Sequence[option.kind] if option.listed or option.multiple else option.kind
    return hint if option.default is not None else hint | None


def checked_methods(cls: type) -> type:
    """Class decorator: every public method of ``cls`` (and its ``__init__``) checks its arguments."""
    for name, fn in list(vars(cls).items()):
        if callable(fn) and (not name.startswith("_") or name == "__init__") and not isinstance(fn, type):
            setattr(cls, name, checked(fn))
    return cls
