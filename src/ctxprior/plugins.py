"""How ctxprior finds what its four registries hold: one type (:class:`Registry`) for estimators,
analyses, data sources and model families.

Each registry names its built-in modules (``modules(package)``: every module of a package;
``children(package, name)``: the module ``name`` of each sub-package) and an entry-point group
(``GROUPS``); ``discover(group, builtin)`` imports the built-ins, then loads every installed
distribution's entry points of the group and hands the loaded objects back. A module's import
registers what it declares (``@register_analysis``, ``ingest_source(...)``,
``register_estimator(...)``, ``register_family(...)``); an object (an ``Estimator``, an
``IngestSource``, ...) is the registry's to add. So a separate package adds an estimator with one
line in its ``pyproject.toml``::

    [project.entry-points."ctxprior.estimators"]
    my-estimator = "my_package.scoring:MY_ESTIMATOR"

(``ctxprior.analyses``: a module whose import registers steps and whose folder's ``*.sql`` files
with front matter are analyses; ``ctxprior.ingest_sources``: an ``IngestSource`` or a module that
declares some; ``ctxprior.model_families``: a module that calls ``register_family``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

GROUPS = {
    "estimators": "ctxprior.estimators",
    "analyses": "ctxprior.analyses",
    "ingest_sources": "ctxprior.ingest_sources",
    "model_families": "ctxprior.model_families",
}


def modules(package: str) -> list[str]:
    """The dotted names of ``package``'s modules (not those starting with ``_``), sorted."""
    pkg = importlib.import_module(package)
    return sorted(
        f"{package}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")
    )


def children(package: str, name: str, skip: Iterable[str] = ()) -> list[str]:
    """``<package>.<sub>.<name>`` for each sub-package ``sub`` (not in ``skip``) that has a module
    ``name``, sorted (read from the folders: no sub-package is imported)."""
    pkg = importlib.import_module(package)
    out = []
    for m in pkgutil.iter_modules(pkg.__path__):
        if m.ispkg and m.name not in skip:
            where = os.path.join(m.module_finder.path, m.name)  # type: ignore[union-attr]
            if any(c.name == name for c in pkgutil.iter_modules([where])):
                out.append(f"{package}.{m.name}.{name}")
    return sorted(out)


def entry_points(kind: str) -> list[importlib.metadata.EntryPoint]:
    """The installed entry points of the group of ``kind`` (a key of ``GROUPS``), by name."""
    found = importlib.metadata.entry_points(group=GROUPS[kind])
    return sorted(found, key=lambda ep: (ep.name, ep.value))


def discover(kind: str, builtin: Iterable[str] = ()) -> list[Any]:
    """Import the ``builtin`` modules, then load each entry point of ``kind``'s group; returns the
    loaded objects (modules or objects) of the entry points, in name order. A plug-in that fails
    to load is a ``RuntimeError`` naming it."""
    for name in builtin:
        importlib.import_module(name)
    out = []
    for ep in entry_points(kind):
        try:
            out.append(ep.load())
        except Exception as e:  # a broken plug-in is named, not a bare ImportError from deep inside
            raise RuntimeError(f"ctxprior plug-in {ep.name} = {ep.value} ({ep.group}): {e}") from e
    return out


class Registry(Generic[T]):
    """name -> each declared thing of one kind (an ``Estimator``, an ``Analysis``, an
    ``IngestSource``, a model family's ``(name, class)``), found on first read.

    - ``add(name, item)``: a module declares one (at its import: ``register_estimator``,
      ``@register_analysis``, ``ingest_source``, ``register_family``); a name declared twice with
      another item is a mistake in the code (ValueError).
    - the first read (``all``, ``[name]``, ``get``, ``names``, ``in``) adds what ``declared()``
      returns (built-ins that are no module's import: the analyses' ``.sql`` files), imports the
      ``builtin()`` modules, then loads the entry points of the kind's group (``discover``) and adds
      what ``found(obj)`` makes of each loaded object;
    - ``order``: the sort key of ``all()`` (else the order declared).
    """

    def __init__(
        self,
        kind: str,
        noun: str,
        *,
        builtin: Callable[[], Iterable[str]] = tuple,
        declared: Callable[[], Iterable[tuple[str, T]]] = tuple,
        found: Callable[[Any], Iterable[tuple[str, T]]] = lambda obj: (),
        order: Callable[[T], Any] | None = None,
    ):
        self.kind, self.noun = kind, noun
        self._builtin, self._declared, self._found, self._order = builtin, declared, found, order
        self._items: dict[str, T] = {}
        self._loaded = False
        self._imported: set[str] = set()

    def add(self, name: str, item: T) -> T:
        """Declare ``item`` under ``name`` (the same item again is no change)."""
        old = self._items.get(name, item)
        if old is not item and old != item:
            raise ValueError(f"{self.noun} {name!r} is declared twice")
        self._items[name] = item
        return item

    def all(self, extra: Iterable[str] = ()) -> dict[str, T]:
        """Every item by name, found first (class docstring); ``extra``: more modules whose import
        declares some (the API passes the library packages' modules that this layer cannot import)."""
        self._load(extra)
        if self._order is None:
            return dict(self._items)
        order = self._order
        return dict(sorted(self._items.items(), key=lambda kv: order(kv[1])))

    def _load(self, extra: Iterable[str] = ()) -> None:
        """Find the items once (class docstring), and import any ``extra`` module not yet imported."""
        extra = [m for m in extra if m not in self._imported]
        if self._loaded:
            for name in extra:
                importlib.import_module(name)
            self._imported.update(extra)
            return
        self._loaded = True  # set first: a plug-in that reads the registry while loading sees the rest
        for name, item in self._declared():
            self.add(name, item)
        modules = [*self._builtin(), *extra]
        self._imported.update(modules)
        for obj in discover(self.kind, modules):
            for name, item in self._found(obj):
                self.add(name, item)

    def __getitem__(self, name: str) -> T:
        self._load()
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def get(self, name: str, default: Any = None) -> Any:
        self._load()
        return self._items.get(name, default)

    def names(self) -> tuple[str, ...]:
        return tuple(self.all())

    def copy(self, loaded: bool = True) -> Registry[T]:
        """A registry with the same items (tests change a copy); ``loaded=False``: its first read
        finds the plug-ins again."""
        other: Registry[T] = Registry(
            self.kind,
            self.noun,
            builtin=self._builtin,
            declared=self._declared,
            found=self._found,
            order=self._order,
        )
        other._items = dict(self._items)
        other._loaded = loaded and self._loaded
        other._imported = set(self._imported) if other._loaded else set()
        return other
