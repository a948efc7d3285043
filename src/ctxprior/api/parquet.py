"""``wh.parquet``: export the warehouse (or part of it) as Parquet files, and load such a folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .core import Noun, _listed
from .typecheck import checked_methods


@checked_methods
class Parquet(Noun):
    """``wh.parquet``: Parquet folders with a ``manifest.json`` (see [Publishing](publishing.md))."""

    name = "parquet"

    def export(
        self,
        directory: str | Path,
        *,
        tables: str | Sequence[str] | None = None,
        views: str | Sequence[str] | None = None,
        runs: str | Sequence[int | str] | None = None,
        overwrite: bool = False,
    ) -> dict:
        """Write every table (or these ``tables`` / ``views``; ``views=["all"]``: every view) as Parquet
        under ``directory`` with ``manifest.json``; ``runs``: only these runs' rows. Names and ids may
        also come as comma-separated strings (``"1,3"``). Returns the manifest; see
        [Publishing](publishing.md).

        Command: ``ctxprior export parquet``.
        """
        from ..publish.parquet import export_parquet, parse_names, parse_runs, select

        t, v, r = parse_names(_listed(tables)), parse_names(_listed(views)), parse_runs(_listed(runs))
        with self._wh.connect() as store:
            if v == ["all"]:
                v = store.view_names()
            sel = select(store, tables=t if (t or v) else None, views=v, runs=r)
            return export_parquet(store, directory, sel, overwrite=overwrite)

    def load(self, directory: str | Path, *, mode: str = "fail") -> dict[str, int]:
        """Load a folder written by :meth:`export` or :meth:`Hub.publish` (every file's sha256 is
        checked before the warehouse is opened). ``mode``: ``fail`` (the warehouse must have no rows),
        ``merge`` or ``replace``. Returns the rows added per table.

        Command: ``ctxprior import parquet``.
        """
        from ..publish.options import MODE
        from ..publish.parquet import import_parquet, staged_folder, table_files

        MODE.check(mode)
        with staged_folder(directory) as (stage, manifest):  # a private copy of the checked bytes
            reads = table_files(stage, manifest)  # the Parquet files DuckDB reads
            with self._wh._removed_if_failed(), self._wh.connect(write=True, reads=reads) as store:
                return import_parquet(store, stage, mode=mode, verify=False)
