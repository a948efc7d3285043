"""The data sources ``ctxprior ingest`` knows, each declared in one place: beside its loader.

A source is one :class:`IngestSource` passed to :func:`ingest_source` at the top level of the
module that holds its loader (``ingest/yago_qec.py``, ``ingest/demo.py``,
``dynamicqa/ingest.py``)::

    SOURCE = ingest_source(IngestSource(
        name="my-source", help="Load ... (the command's help).",
        params=(Param("path", metavar="PATH"), Param("name", "--name", "Dataset name.", default="mine")),
        load=_load, lines=_lines))

- ``params``: the arguments and options, as plain data (no click here): a :class:`Param` without
  ``option`` is a positional argument; the loader's keywords are the params' names.
- ``prepare(**params) -> dict`` (optional): what needs no warehouse (fetch, parse, validate),
  run before the warehouse is opened; its dict is the loader's keywords. Without it the loader
  gets the params.
- ``load(store, **keywords) -> result``: writes the dataset (one transaction) through the
  low-level store and returns what was loaded.
- ``lines(result) -> list[str]``: what ``ctxprior ingest <name>`` prints.

``sources(builtin)`` finds them (``ctxprior.plugins``): every module of ``ingest/``, the modules
``builtin`` names (the API passes each library package's ``ingest.py``: this layer does not import
the packages above it), and the entry points ``ctxprior.ingest_sources`` of other packages (an
``IngestSource``, or a module that declares some). The API (``ctxprior.api.ingest_sources()``,
``wh.datasets.ingest``) reads it; ``commands/ingest.py`` makes one subcommand per source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import plugins
from ..options import Option, check_options
from ..plugins import Registry


def Param(
    name: str,
    option: str | None = None,
    help: str | None = None,
    default: Any = None,
    metavar: str | None = None,
    multiple: bool = False,
    choices: tuple[str, ...] = (),
    directory: bool = False,
    required: bool = True,
    pattern: tuple[str, str] | None = None,
) -> Option:
    """One argument (``option`` None) or option (``option="--relation"``) of a source, as the
    :class:`~ctxprior.options.Option` every command declares; ``name`` is the loader's keyword.
    ``multiple``: repeatable (a tuple); ``choices``: the allowed values; ``directory``: an argument
    naming a folder (an existing file is refused); ``required``: an argument's (options are optional);
    ``pattern``: the (regex, rule) a text value must match (``options.DATASET_NAME``)."""
    return Option(
        name,
        option,
        help or "",
        default=default,
        metavar=metavar,
        multiple=multiple,
        choices=choices,
        argument=option is None,
        required=required and option is None,
        directory=directory,
        pattern=pattern,
    )


@dataclass(frozen=True)
class IngestSource:
    """A data source: its command's name and help, its params, and its loader (module docstring)."""

    name: str
    help: str
    params: tuple[Option, ...]
    load: Callable[..., Any]
    lines: Callable[[Any], list[str]]
    prepare: Callable[..., dict] | None = None

    def bind(self, args: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
        """The params by name: ``args`` in the order declared, then ``params``, then defaults
        (``()`` for a repeatable one)."""
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise TypeError(f"ingest {self.name!r} takes {len(names)} parameters ({', '.join(names)})")
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise TypeError(
                f"ingest {self.name!r} has no parameter {unknown[0]!r}; it takes {', '.join(names)}"
            )
        bound = dict(zip(names, args))
        twice = sorted(set(bound) & set(params))
        if twice:
            raise TypeError(f"ingest {self.name!r}: {twice[0]!r} given twice")
        bound.update(params)
        for p in self.params:
            if p.name not in bound:
                if p.argument and p.required:
                    raise TypeError(f"ingest {self.name!r}: missing {p.name!r}")
                bound[p.name] = () if p.multiple and p.default is None else p.default
        check_options(self.params, bound)  # the declared checks (type, choices, pattern), as the CLI's
        return bound


SOURCES: Registry[IngestSource] = Registry(
    "ingest_sources",
    "ingest source",
    builtin=lambda: plugins.modules(__package__),
    found=lambda obj: [(obj.name, obj)] if isinstance(obj, IngestSource) else [],  # an entry point's source
    order=lambda source: source.name,
)


def ingest_source(source: IngestSource) -> IngestSource:
    """Register ``source`` (a name already taken is a mistake in the code, not the user's)."""
    return SOURCES.add(source.name, source)


def sources(builtin: Sequence[str] = ()) -> dict[str, IngestSource]:
    """Every source by name, sorted: found on first use (module docstring)."""
    return SOURCES.all(builtin)
