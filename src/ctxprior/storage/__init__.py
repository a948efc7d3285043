"""The warehouse file: opening it (``store.py``: ``open_store``, ``Store``), the sandbox every
connection runs in (``sandbox.py``), the locks and processes that share one file (``lock.py``,
``procs.py``), the catalog check that a file holds only ctxprior's objects (``trust.py``), one-line
failures (``failures.py``), the run life cycle every kind of run shares (``runs.py``) and the
migrations between schema versions (``migrations.py``). What the file holds is ``ctxprior.schema``'s.

Layer 2, above ``schema``. Import rules: the package table in docs/architecture.md.
"""

from .store import DB_ENV, DEFAULT_DB, Store, default_db_path, open_store

__all__ = ["DB_ENV", "DEFAULT_DB", "Store", "default_db_path", "open_store"]
