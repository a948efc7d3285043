"""How ctxprior finds what its four registries hold: one mechanism for estimators, analyses, data
sources and model families.

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
from collections.abc import Iterable
from typing import Any

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
