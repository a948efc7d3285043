"""Warehouse schema: SQLAlchemy Core tables (one module per area), SQL views, versioning.

Every module in this package that defines tables on ``base.metadata`` is imported here, so a
new area adds tables by adding a module (no central list to edit). Views live in
``schema/views/*.sql`` and are (re)created in file-name order when those files changed.

Layer 1, above only layer 0. Import rules: the package table in docs/architecture.md.
"""

import importlib
import pkgutil

from .base import metadata

for _m in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _m not in {"base", "versions", "migrations"}:
        importlib.import_module(f"{__name__}.{_m}")

from . import migrations  # noqa: E402,F401  (fills versions.MIGRATIONS)
from .store import Store, default_db_path, open_store  # noqa: E402
from .versions import SCHEMA_VERSION  # noqa: E402

__all__ = ["SCHEMA_VERSION", "Store", "default_db_path", "metadata", "open_store"]
