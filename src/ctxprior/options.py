"""Options, each declared once: an :class:`Option` holds a command's argument or option as plain
data (API keyword, command-line flag, help, default, type, choices, range), and both doors are
made from it: ``commands/options.py`` turns it into click's option or argument, and the Python
API checks its keyword arguments with :func:`check_options`. ``Option.check(value)`` returns the
value or raises the one :class:`~ctxprior.errors.UserError` both doors give,
``"<flag> <value>: <problem>"``, before anything is written.

Each command's options are declared beside the library code they configure (``SCORE_OPTIONS``
in ``scoring/options.py``, ``SAMPLE_OPTIONS`` in ``sampling/draw.py``, a data source's in its
``IngestSource``, ...) and listed by command name in ``ctxprior.api.command_options()``.

Layer 0: imports nothing of ctxprior but ``errors``, and no third-party package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Number, Real
from typing import Any, ClassVar, TypeVar

from .errors import UserError

R = TypeVar("R", bound="Request")

SEED_MAX = 2**63 - 1  # seeds are stored as BIGINT
ID_MAX = 2**31 - 1
"""The largest id an id option takes: run, sample and dataset ids are INTEGER columns (32-bit;
``tests/test_options_ids.py`` checks the schema against it), so a larger one is refused in one line
before any query, never an overflow inside DuckDB."""
DATASET_NAME = (
    r"(?=.*\S)[^\x00-\x1f\x7f]{1,128}",
    "a dataset name is 1 to 128 characters, not all blank, without line breaks or control characters",
)
"""The ``pattern`` of every dataset name option (``ingest SOURCE --name``, ``build-dataset --name``)."""


@dataclass(frozen=True)
class Option:
    """One option: ``name`` (the API keyword), ``flag`` (the CLI option; None: API only), ``help``
    (a string, or a function returning it when shown), ``default`` (the API's; the CLI shows it as
    text), ``kind`` (str, int, float, or bool for an on/off flag), ``choices`` (a tuple, or a
    function returning the names: a registry read when used), ``minimum`` / ``maximum`` (inclusive), ``above`` (a strict lower bound),
    ``listed`` (a comma-separated list on the command line, a sequence of distinct values in the
    API), ``multiple`` (a repeatable option), ``auto`` (the text ``auto`` means None),
    ``bare`` (the value an option given without one takes, e.g. ``--per-layer``), ``argument``
    (a positional argument on the command line; ``flag`` is then None), ``required``,
    ``directory`` (a path that must name a folder, not a file), ``file`` (a path that must name a
    file, not a folder), ``applies`` (``(option, values)``: the option applies only when that
    other option of the same command holds one of ``values``, e.g. ``("design", ("fixed",))``;
    given otherwise it is refused by :func:`check_applicable`), ``pattern`` (``(regex, rule)``: a
    text value must match the regex in full, else the rule is the message, e.g. :data:`DATASET_NAME`).

    Every number option declares a ``maximum`` (tests/test_input_schemas.py walks them all), so
    the command line and the API refuse a huge value before it reaches DuckDB, numpy or memory.
    A text option refuses a number, bytes or a mapping (an int where a model name goes; an object
    such as a loaded model passes, for the options that take one)."""

    name: str
    flag: str | None
    help: str | Callable[[], str]
    default: Any = None
    kind: type = str
    choices: tuple[str, ...] | Callable[[], Sequence[str]] = ()
    minimum: int | float | None = None
    above: int | float | None = None
    maximum: int | float | None = None
    metavar: str | None = None
    listed: bool = False
    multiple: bool = False
    auto: bool = False
    bare: str | None = None
    argument: bool = False
    required: bool = False
    directory: bool = False
    file: bool = False
    applies: tuple[str, tuple[str, ...]] | None = None
    pattern: tuple[str, str] | None = None

    @property
    def label(self) -> str:
        """How messages name the option: its flag, else its API keyword."""
        if self.flag:
            return self.flag
        return self.metavar or self.name.upper() if self.argument else self.name

    def names(self) -> tuple[str, ...]:
        """The allowed values (empty: any)."""
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def help_text(self) -> str:
        return self.help() if callable(self.help) else self.help

    def text(self, value: Any) -> str:
        """``value`` as the command line writes it (the default shown by ``--help`` too)."""
        if value is None and self.auto:
            return "auto"
        if self.listed and not isinstance(value, str):
            return ",".join(map(str, value))
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)

    def parse(self, text: str) -> Any:
        """The command line's text as the API's value (a number that is not one is refused with
        the message ``check`` gives)."""
        if self.auto and text == "auto":
            return None
        if self.listed:
            return tuple(t.strip() for t in text.split(",") if t.strip())
        if self.kind in (int, float):
            try:
                return self.kind(text)
            except ValueError:
                raise UserError(f"{self.label} {text}: {self.expected()}") from None
        return text

    def expected(self) -> str:
        """What a number option takes, in words."""
        what = "an integer" if self.kind is int else "a number"
        return "expected " + what + (" or auto" if self.auto else "")

    def bounds(self, value: Any = None) -> str:
        """The bound ``value`` breaks (without one: the valid range), in words."""
        if self.above is not None:
            text = f"must be above {self.above:g}"
            text += "" if self.maximum is None else f" and at most {self.maximum:g}"
        elif value is not None and self.minimum is not None and value < self.minimum:
            text = f"must be at least {self.minimum}"
        elif value is not None and self.maximum is not None and value > self.maximum:
            text = f"must be at most {self.maximum}"
        elif self.maximum is not None and self.minimum is not None:
            text = f"must be from {self.minimum} to {self.maximum}"
        elif self.maximum is not None:
            text = f"must be at most {self.maximum}"
        else:
            text = f"must be at least {self.minimum}"
        return text + (" or auto" if self.auto else "")

    def check(self, value: Any) -> Any:
        """``value`` if valid, else the UserError ``"<flag> <value>: <problem>"`` (of a list, the
        value at fault where one is)."""
        if value is None or self.kind is bool:
            return value
        several = self.listed or self.multiple
        if several and isinstance(value, str):
            value = (value,) if self.multiple else self.parse(value)
        found = self._problem(tuple(value) if several else (value,))
        if found:
            culprit, problem = found
            shown = (
                self.text(value)
                if culprit is None
                else f"{culprit:g}"
                if isinstance(culprit, float)
                else culprit
            )
            raise UserError(f"{self.label} {shown}: {problem}")
        return value

    def _problem(self, values: tuple) -> tuple[Any, str] | None:
        """(the value at fault, or None for the whole, and what is wrong), or None when valid."""
        names = self.names()
        if self.listed and not values:
            return None, (f"give at least one of {', '.join(names)}" if names else "give at least one value")
        if self.listed and len(set(values)) < len(values):
            return None, "give each value once"
        for v in values:
            if names and v not in names:
                return v, "use " + (
                    ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
                )
            if self.kind is str and isinstance(v, (Number, bytes, Mapping)):  # (a loaded model passes)
                shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
                return shown, f"expected text, got {type(v).__name__}"
            if self.kind is str and "\x00" in str(v):
                return repr(str(v))[:40], "holds a NUL byte (no text or path option can)"
            if self.kind is str and self.pattern and not re.fullmatch(self.pattern[0], str(v)):
                shown = repr(str(v)) if len(repr(str(v))) <= 40 else repr(str(v))[:37] + "..."
                return shown, self.pattern[1]
            if self.kind in (int, float) and not self._is_number(v):
                return v, self.expected()
            if self.kind in (int, float) and not self._in_range(v):
                return v, self.bounds(v)
        return None

    def _is_number(self, v: Any) -> bool:
        return not isinstance(v, bool) and isinstance(v, Integral if self.kind is int else Real)

    def _in_range(self, v: Any) -> bool:
        return (
            (self.minimum is None or v >= self.minimum)
            and (self.maximum is None or v <= self.maximum)
            and (self.above is None or v > self.above)
        )


def check_options(options: Sequence[Option], values: dict[str, Any]) -> None:
    """Check every declared option present in ``values`` (API keyword -> value), in declared order."""
    for opt in options:
        if opt.name in values:
            opt.check(values[opt.name])


def check_applicable(options: Sequence[Option], values: dict[str, Any]) -> None:
    """Refuse an option given where it does not apply (its ``applies``: another option's values),
    e.g. ``--contexts`` with ``--design fixed``: ``"--contexts 600: only with --design paper"``.
    Given means present in ``values`` and neither None nor the declared default."""
    named = by_name(options)
    for opt in options:
        if opt.applies is None or opt.name not in values:
            continue
        value = values[opt.name]
        several = opt.listed or opt.multiple
        if (
            value is None
            or value == opt.default
            or (several and tuple(value) in ((), tuple(opt.default or ())))
        ):
            continue
        other, allowed = opt.applies
        control = named[other]
        chosen = values.get(other, control.default)
        if chosen not in allowed:
            raise UserError(
                f"{opt.label} {opt.text(value)}: only with "
                + " or ".join(f"{control.label} {a}" for a in allowed)
                + f" (not {control.label} {chosen})"
            )


def seed_option(default: int, help: str = "Random seed.", flag: str = "--seed", name: str = "seed") -> Option:
    """A seed: an integer from 0 to :data:`SEED_MAX` (stored as BIGINT)."""
    return Option(name, flag, help, default=default, kind=int, minimum=0, maximum=SEED_MAX)


def by_name(options: Sequence[Option]) -> Mapping[str, Option]:
    """``options`` by API keyword."""
    return {o.name: o for o in options}


@dataclass(frozen=True)
class Request:
    """One command's request: every option of its declarations (:attr:`DECLARED`, a subclass's
    tuple of :class:`Option`) under its declared name, each one not given filled with its declared
    default, read as an attribute (``request.batch_size``) or by name (``request["model"]``). The
    one object that carries a command's options from the API method down to the code that reads
    them, so no function between them restates a keyword or a default. Built unchecked (the API
    method checks with :func:`check_options` first); an undeclared name is a TypeError, as for a
    function's unknown keyword."""

    DECLARED: ClassVar[tuple[Option, ...]] = ()  # each subclass's declarations
    values: Mapping[str, Any]

    @classmethod
    def of(cls: type[R], **given: Any) -> R:
        """The request of the options ``given``, the others at their declared defaults."""
        names = [o.name for o in cls.DECLARED]
        if unknown := sorted(set(given) - set(names)):
            raise TypeError(f"{cls.__name__}: no option {', '.join(unknown)}")
        return cls(values={o.name: given.get(o.name, o.default) for o in cls.DECLARED})

    def replace(self: R, **changes: Any) -> R:
        """This request with ``changes`` (declared names) instead of its values."""
        return type(self).of(**{**self.values, **changes})

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("values", "DECLARED"):
            raise AttributeError(name)
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}") from None
