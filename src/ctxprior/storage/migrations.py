"""The migration path between schema versions: a step from each version ``OLDEST_MIGRATABLE`` on
(``schema/versions.py``, whose ``check_version`` every open makes).

Adding a table or a view is not a version change: opening a warehouse read-write creates
missing tables and recreates every view. A change to an existing table (a new column, a renamed
one, a new key) bumps ``SCHEMA_VERSION`` (``schema/versions.py``) and registers a step here,
``MIGRATIONS[N] = step``, that takes a warehouse of version N to N+1 inside one transaction. ``ctxprior migrate`` applies every pending step.
A version that only adds stored measures (``measures.py``, declared ``since`` it) needs no step:
the columns are added from their declaration.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..errors import UserError
from ..measures import added_columns
from ..schema.versions import OLDEST_MIGRATABLE, SCHEMA_VERSION, check_version
from . import lock as wlock
from .store import Store, open_store

__all__ = ["MIGRATIONS", "check_version", "migrate", "upgrade_rows"]


def migrate(path: str, wait: float = 0.0) -> list[str]:
    """Upgrade the warehouse at ``path`` to the current version; return what was done. Opens the
    file through ``open_store`` like every command (waits ``wait`` seconds for another holder)."""
    store = open_store(path, wait=wait, migrating=True)
    try:
        found = store.schema_version()
        if found is None:
            raise UserError(f"{path} is not a ctxprior warehouse (no meta table)")
        if found == SCHEMA_VERSION:
            return [f"{path} is already at schema v{found}"]
        if found > SCHEMA_VERSION or any(v not in MIGRATIONS for v in range(found, SCHEMA_VERSION)):
            check_version(path, found, SCHEMA_VERSION)  # says why, before the backup or any step
        store.execute("CHECKPOINT")
        keep = wlock.acquire(path, exclusive=True)  # the flock stays held while DuckDB is closed
        try:
            store.close()
            backup = write_backup(path, found)
            store = open_store(path, wait=wait, migrating=True)
        finally:
            keep.release()
        done = [f"backup written to {backup}"]
        for v in range(found, SCHEMA_VERSION):
            step = MIGRATIONS[v]
            with store.transaction():
                step(store)
                store.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(v + 1)])
            done.append(f"migrated v{v} -> v{v + 1}")
        store.ensure_schema(force=True)
        return done
    finally:
        store.close()


def upgrade_rows(store: Store, found: int) -> None:
    """Bring rows just imported from an export of schema v``found`` (``import parquet``, ``pull``)
    to the current version: the steps ``migrate`` applies, in order (each adds only what is
    missing, and rewrites only the rows an older version wrote, e.g. v2's whole-vocabulary
    confidence gain). Call it inside the import's transaction."""
    missing = [v for v in range(found, SCHEMA_VERSION) if v not in MIGRATIONS]
    if missing:
        raise UserError(f"an export of schema v{found} cannot be upgraded (no step from v{missing[0]})")
    for v in range(found, SCHEMA_VERSION):
        MIGRATIONS[v](store)


def write_backup(path: str, version: int) -> str:
    """Copy the warehouse at ``path`` (closed) to a backup name no file has; return that name.

    Never replaces anything: the first of ``<db>.vN.bak``, ``<db>.vN.1.bak``, ``<db>.vN.2.bak``, ...
    that is free (a link or any file at a name makes it taken; nothing is followed). The free disk
    space is checked first; the copy goes to a temporary name that is then hard-linked to the backup
    name (which fails, rather than replaces, when the name was taken meanwhile), so a full disk
    leaves no truncated backup, only one line."""
    import errno
    import os
    import shutil
    import tempfile
    from contextlib import suppress

    folder = os.path.dirname(os.path.abspath(path))
    size = os.path.getsize(path)
    free = shutil.disk_usage(folder).free
    if free < size + (1 << 20):
        raise UserError(
            f"{path}: the backup before migrating needs {size / 2**20:.1f} MiB and {folder} has "
            f"{free / 2**20:.1f} MiB free; free disk space, then rerun `ctxprior migrate` (nothing was changed)"
        )
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".bak.tmp")
    try:
        os.fchmod(fd, os.stat(path).st_mode & 0o7777)  # the backup is as private as the warehouse
        with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.flush()
            os.fsync(dst.fileno())
        for n in range(10_000):
            backup = f"{path}.v{version}.bak" if n == 0 else f"{path}.v{version}.{n}.bak"
            try:
                os.link(tmp, backup)
                return backup
            except FileExistsError:
                continue
            except OSError as e:  # a file system without hard links: rename onto the name found free
                if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK) or os.path.lexists(backup):
                    raise
                os.rename(tmp, backup)
                return backup
        raise UserError(
            f"{path}: no free backup name ({path}.v{version}.*.bak); remove old backups, then rerun"
        )
    except OSError as e:
        raise UserError(
            f"{path}: cannot write the backup before migrating ({e.strerror}); nothing was changed "
            "(free disk space / fix permissions, then rerun `ctxprior migrate`)"
        ) from None
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)


def _v1_to_v2(store: Store) -> None:
    """v2: ``run_unit_engine.head``, the output-head path the engine took (NULL for older runs)."""
    store.execute("ALTER TABLE run_unit_engine ADD COLUMN IF NOT EXISTS head TEXT")


def _v2_to_v3(store: Store) -> None:
    """v3: ``dataset.separator``; in ``reliance`` CK-PLUG's filtered ``confidence_gain`` beside the
    whole-vocabulary one, ``scaled_difference_memory``, ``outcome_source`` and ``collision``
    (sql/migrate_v2_v3.sql says what each older row gets)."""
    from ..sqlfiles import read_sql

    _add_measures(store, 3)
    store.execute(read_sql("ctxprior.storage", "sql/migrate_v2_v3.sql"))


def _v3_to_v4(store: Store) -> None:
    """v4: in ``reliance``, ``choice`` and ``choice_source`` (the forced choice, now beside the
    generation's ``outcome``; sql/migrate_v3_v4.sql fills them from the older rows' outcome); the
    sources' reliance columns over the vocabulary whatever the estimator, ctxprior's answer-set
    values under ``*_answer_set`` names (sql/migrate_v3_v4_vocab.sql moves an older answer-set
    run's values there); every other measure declared ``since`` 4."""
    from ..sqlfiles import read_sql

    _add_measures(store, 4)
    store.execute(read_sql("ctxprior.storage", "sql/migrate_v3_v4.sql"))
    store.execute(read_sql("ctxprior.storage", "sql/migrate_v3_v4_vocab.sql"))


def _add_measures(store: Store, version: int) -> None:
    """Add the reliance columns of the measures declared ``since`` ``version`` (``measures.py``);
    NULL in the rows already there."""
    for stmt in added_columns(version):
        store.execute(stmt)


# version N -> the step that upgrades a version-N warehouse to N+1
MIGRATIONS: dict[int, Callable[[Store], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}
# a version that only adds measures needs no step of its own: its columns come from their declaration
for _v in range(3, SCHEMA_VERSION):
    MIGRATIONS.setdefault(_v, functools.partial(_add_measures, version=_v + 1))
assert sorted(MIGRATIONS) == list(range(OLDEST_MIGRATABLE, SCHEMA_VERSION)), "a step per version"
