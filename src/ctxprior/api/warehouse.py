"""The core of the Python API: :func:`open` a :class:`Warehouse`, which reads SQL and hands out one
part per noun (``wh.datasets``, ``wh.runs``, ...); :func:`migrate` upgrades an older file."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..pipeline import DEMO_OPTIONS
from ..storage import failures
from ..storage import store as _store
from .core import Noun, Rows, _stderr
from .typecheck import checked, checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd
    import pyarrow as pa

    from .analyses import Analyses
    from .covariates import Covariates
    from .datasets import Datasets
    from .dynamic import Dynamic
    from .fakes import Fakes
    from .hub import Hub
    from .parquet import Parquet
    from .runs import Runs
    from .samples import Samples


class _Part:
    """``wh.<noun>``: class ``cls`` of the module ``api/<noun>.py``, made for ``wh`` on first use and
    then kept in its ``__dict__`` (so ``ctxprior sql`` imports no noun's module)."""

    def __init__(self, cls: str):
        self.cls = cls

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def noun(self) -> type[Noun]:
        from importlib import import_module

        return getattr(import_module(f".{self.name}", __package__), self.cls)

    def __get__(self, wh: Any, owner: type | None = None) -> Any:
        if wh is None:
            return self.noun()
        part = wh.__dict__[self.name] = self.noun()(wh)
        return part


@checked
def open(path: str | Path | None = None, *, write: bool = False, wait: float = 0.0) -> Warehouse:
    """Open the warehouse at ``path`` (default ``$CTXPRIOR_DB``, else ``ctxprior.duckdb``).

    Read-only unless ``write=True``; with ``write=True`` a missing file is created.
    ``wait``: seconds to keep retrying while another process writes the file.

    >>> wh = ctxprior.open("demo.duckdb")
    >>> wh.writable
    False
    """
    return Warehouse(path, write=write, wait=wait)


@checked_methods
class Warehouse:
    """One ctxprior warehouse file. Create it with :func:`ctxprior.open`.

    The warehouse reads SQL itself (:meth:`sql`, :meth:`arrow`, :meth:`query`, :meth:`info`) and runs
    the demo (:meth:`demo`); the rest is done by the parts it hands out, one per noun:
    ``wh.datasets``, ``wh.samples``, ``wh.fakes``, ``wh.runs``, ``wh.dynamic``, ``wh.covariates``,
    ``wh.analyses``, ``wh.parquet``, ``wh.hub``.

    ``Warehouse(path, check=False)`` opens a read-only warehouse first on its first call rather than
    at once (the command line, so that a command's own input errors come first)."""

    datasets: Datasets = _Part("Datasets")  # type: ignore[assignment]
    samples: Samples = _Part("Samples")  # type: ignore[assignment]
    fakes: Fakes = _Part("Fakes")  # type: ignore[assignment]
    runs: Runs = _Part("Runs")  # type: ignore[assignment]
    dynamic: Dynamic = _Part("Dynamic")  # type: ignore[assignment]
    covariates: Covariates = _Part("Covariates")  # type: ignore[assignment]
    analyses: Analyses = _Part("Analyses")  # type: ignore[assignment]
    parquet: Parquet = _Part("Parquet")  # type: ignore[assignment]
    hub: Hub = _Part("Hub")  # type: ignore[assignment]

    def __init__(
        self, path: str | Path | None = None, *, write: bool = False, wait: float = 0.0, check: bool = True
    ):
        self.path = str(path or _store.default_db_path())
        self.writable = write
        self.wait = _store.check_wait(wait)
        # a read-only warehouse is checked now (missing file, not a warehouse, schema of another
        # version); a writable one on its first call, so a missing file is created only once that
        # call's input is valid, and a scoring run opens it as a brief writer from the start.
        # check=False (the command line): a read-only one too, so a command's own input errors come first
        if not write and check:
            with self.connect():
                pass

    def __repr__(self) -> str:
        return f"ctxprior.Warehouse({self.path!r}, write={self.writable})"

    # -- connections -----------------------------------------------------------------------
    @contextmanager
    def connect(
        self,
        write: bool = False,
        brief: bool = False,
        *,
        reads: Sequence[str | Path] = (),
        threads: int | None = None,
    ) -> Iterator[_store.Store]:
        """The low-level connection object that library functions take (closed on exit).

        ``write=True`` needs a warehouse opened with ``write=True``. ``brief=True`` holds the file
        only while writing (long runs; other processes read between commits). The connection is
        sandboxed (docs/write-protocol.md): it reads no file but the warehouse and ``reads`` (the
        inputs a command reads through DuckDB); ``threads``: DuckDB's thread count, fixed.
        """
        if write and not self.writable:
            raise UserError(f"{self.path} was opened read-only; use ctxprior.open({self.path!r}, write=True)")
        write = write or (self.writable and not Path(self.path).exists())  # created on first use
        store = _store.open_store(
            self.path,
            read_only=not write,
            wait=self.wait,
            brief=brief and write,
            reads=reads,
            threads=threads,
        )
        try:
            yield store
        except failures.IO_ERRORS as e:  # a full disk / lost permission writing any file: one line
            if not failures.is_write_fault(e):
                raise
            raise failures.io_error(self.path, e) from None
        finally:
            store.close()

    @contextmanager
    def _removed_if_failed(self) -> Iterator[None]:
        """A warehouse file the block creates is removed again when the block fails: a failed import
        or pull leaves no empty warehouse behind."""
        import os

        existed = Path(self.path).exists()
        try:
            yield
        except BaseException:
            if not existed:
                for p in (self.path, self.path + ".wal"):
                    if os.path.exists(p):
                        os.unlink(p)
            raise

    def _need_write(self) -> None:
        if not self.writable:
            raise UserError(f"{self.path} was opened read-only; use ctxprior.open({self.path!r}, write=True)")

    def _open_store(self, read_only: bool = False, create: bool = True) -> _store.Store:
        """The low-level store, opened (the caller closes it); for library functions that open
        the warehouse themselves, when they are ready to (``build_dataset``)."""
        if not read_only:
            self._need_write()
        return _store.open_store(self.path, read_only=read_only, create=create, wait=self.wait)

    # -- reading ---------------------------------------------------------------------------
    def sql(
        self,
        query: str,
        params: Sequence[Any] | None = None,
        *,
        allow_read: str | Path | Sequence[str | Path] = (),
    ) -> pd.DataFrame:
        """Run read-only SQL (``?`` parameters) and return a pandas DataFrame.

        The query reads the warehouse, and of other files only those named in ``allow_read``
        (files, or folders and everything below them); see [what sql can reach](warehouse.md#what-sql-can-reach).

        >>> wh.sql("SELECT entity, susceptibility FROM v_susceptibility ORDER BY susceptibility DESC LIMIT 1").shape
        (1, 2)
        """
        from ..sqlshell import allowed, read_only_query

        with self.connect(reads=allowed(allow_read, self.path)) as store:
            return read_only_query(store, query, params, allow_read)

    def arrow(
        self,
        query: str,
        params: Sequence[Any] | None = None,
        *,
        allow_read: str | Path | Sequence[str | Path] = (),
    ) -> pa.Table:
        """Like :meth:`sql`, as a pyarrow Table (``polars.from_arrow(...)`` makes it a polars frame)."""
        from ..sqlshell import allowed, read_only_query

        with self.connect(reads=allowed(allow_read, self.path)) as store:
            return read_only_query(store, query, params, allow_read, arrow=True)

    def query(
        self,
        query: str,
        variables: dict[str, str] | None = None,
        *,
        allow_read: str | Path | Sequence[str | Path] = (),
    ) -> Rows:
        """Run read-only SQL as ``ctxprior sql`` does: every statement of ``query`` in turn (after
        ``SET VARIABLE name = value`` for each of ``variables``, values as JSON text such as ``"[1,2]"``,
        read with ``getvariable('name')``); the columns and rows of the last one.

        >>> wh.query("SELECT 1 AS one").rows
        [(1,)]

        Command: ``ctxprior sql``.
        """
        from ..sqlshell import allowed, run_read_only

        with self.connect(reads=allowed(allow_read, self.path)) as store:
            cols, rows = run_read_only(store, query, variables, allow_read)
        return Rows(cols, rows)

    def info(self) -> str:
        """The overview ``ctxprior info`` prints: datasets, samples, runs, schema version.

        Command: ``ctxprior info``.
        """
        from ..info import warehouse_info

        with self.connect() as store:
            return warehouse_info(store)

    @declared_keywords(DEMO_OPTIONS)
    def demo(
        self, out: str | Path = "demo-output", *, log: Callable[[str], None] | None = _stderr, **options: Any
    ) -> dict:
        """The main job (``ctxprior demo``): ingest the bundled demo datasets, sample, score, count
        co-occurrences, analyze, and write the figures and the report into ``out``, logging each
        step. Returns the sample and run ids and the output paths. ``out`` must be empty or new;
        ``overwrite`` replaces the files an earlier demo recorded in its ``manifest.json`` and
        nothing else. The keywords are the options of ``ctxprior demo``, made from their one
        declaration (``DEMO_OPTIONS`` in ``pipeline.py``).

        Command: ``ctxprior demo``.
        """
        from ..options import check_options
        from ..outputs import OutputFolder, claim_patterns
        from ..pipeline import DEMO_RELATIONS, FIGURES, OUTPUT_CLAIMS, OUTPUT_FILES, OUTPUT_FORMAT, run_demo
        from ..version import __version__

        check_options(DEMO_OPTIONS, {"out": out, **options})  # before the warehouse is opened
        self._need_write()
        claims = claim_patterns(*OUTPUT_CLAIMS)
        folder = OutputFolder(
            out, self.path, fmt=OUTPUT_FORMAT, claims=claims, overwrite=options.pop("overwrite"), what="demo"
        )
        folder.prepare()  # refusals before any work
        for rel in OUTPUT_FILES:
            folder.add(rel)
        folder.plain_folder(FIGURES)
        relations = None if options.pop("all_relations") else DEMO_RELATIONS
        with folder.filling():  # figures, report, corpus: written through the folder's descriptor
            result = run_demo(self, log or (lambda m: None), out=out, relations=relations, **options)
        folder.record_existing()  # the figures, named as they were drawn
        folder.finish({"ctxprior_version": __version__, "runs": result["runs"]})
        return result


@checked
def migrate(path: str | Path | None = None, *, wait: float = 0.0) -> list[str]:
    """Upgrade the warehouse at ``path`` (default as :func:`open`) made by an older ctxprior to this
    version's schema, after a backup; returns what was done, one line each.

    Command: ``ctxprior migrate``.
    """
    import os

    from ..storage.migrations import migrate as _migrate

    path = str(path or _store.default_db_path())
    if not os.path.exists(path):
        raise UserError(f"no warehouse at {path}")
    return _migrate(path, wait=wait)
