"""The Python API: open a warehouse, run the pipeline's steps, get pandas DataFrames back.

This is the layer researchers import (``import ctxprior``) and the one the ``ctxprior`` command
line calls: every command parses its options, calls one function or method here, and prints.

>>> import ctxprior
>>> wh = ctxprior.open("demo.duckdb")                       # read-only unless write=True
>>> chi = wh.sql("SELECT entity, query_form, susceptibility FROM v_susceptibility")
>>> list(chi.columns)
['entity', 'query_form', 'susceptibility']

A :class:`Warehouse` holds no connection between calls: each call opens the DuckDB file, works
and closes it, so a notebook never keeps a ``ctxprior score`` running in a terminal from writing.
For long read sessions, ``duckdb.connect(path, read_only=True)`` sees every view too
(see [the warehouse](warehouse.md#working-with-duckdb-directly)).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .errors import UserError
from .schema import store as _store
from .schema.runs import sigterm_interrupts as _sigterm_interrupts

__all__ = [
    "Covariates",
    "Rows",
    "Run",
    "Warehouse",
    "analysis_names",
    "estimators",
    "ingest_sources",
    "load_model",
    "migrate",
    "open",
    "quick",
]


def _stderr(msg: str) -> None:
    import sys

    print(msg, file=sys.stderr)


def open(path: str | Path | None = None, *, write: bool = False, wait: float = 0.0) -> Warehouse:
    """Open the warehouse at ``path`` (default ``$CTXPRIOR_DB``, else ``ctxprior.duckdb``).

    Read-only unless ``write=True``; with ``write=True`` a missing file is created.
    ``wait``: seconds to keep retrying while another process writes the file.

    >>> wh = ctxprior.open("demo.duckdb")
    >>> wh.writable
    False
    """
    return Warehouse(path, write=write, wait=wait)


@dataclass
class Run:
    """A finished (or stopped) scoring run, as :meth:`Warehouse.score` returns it."""

    id: int
    status: str
    units_total: int
    units_done: int
    units_failed: int
    prompts: int
    seconds: float
    errors: list[str]

    @classmethod
    def of(cls, summary: Any) -> Run:
        """The run a ``scoring.runs.RunSummary`` describes."""
        s = summary
        return cls(
            s.run_id,
            s.status,
            s.units_total,
            s.units_done,
            s.units_failed,
            s.prompts,
            s.seconds,
            list(s.errors),
        )

    @property
    def prompts_per_second(self) -> float:
        return self.prompts / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Rows:
    """Column names and rows as DuckDB returned them (:meth:`Warehouse.query`, :meth:`Warehouse.fakes`)."""

    columns: list[str]
    rows: list[tuple]

    def format(self, fmt: str = "table", max_rows: int | None = None) -> str:
        """As ``ctxprior sql`` prints them: ``table`` (at most ``max_rows`` rows), ``csv`` or ``json``."""
        from .sqlshell import format_rows

        return format_rows(self.columns, self.rows, fmt, max_rows)

    def to_pandas(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=self.columns)


class Warehouse:
    """One ctxprior warehouse file. Create it with :func:`ctxprior.open`.

    ``Warehouse(path, check=False)`` opens a read-only warehouse first on its first call rather than
    at once (the command line, so that a command's own input errors come first)."""

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
        self.covariates = Covariates(self)

    def __repr__(self) -> str:
        return f"ctxprior.Warehouse({self.path!r}, write={self.writable})"

    # -- connections -----------------------------------------------------------------------
    @contextmanager
    def connect(self, write: bool = False, brief: bool = False) -> Iterator[_store.Store]:
        """The low-level connection object that library functions take (closed on exit).

        ``write=True`` needs a warehouse opened with ``write=True``. ``brief=True`` holds the file
        only while writing (long runs; other processes read between commits).
        """
        if write and not self.writable:
            raise UserError(f"{self.path} was opened read-only; use ctxprior.open({self.path!r}, write=True)")
        write = write or (self.writable and not Path(self.path).exists())  # created on first use
        store = _store.open_store(self.path, read_only=not write, wait=self.wait, brief=brief and write)
        try:
            if not (brief and write):
                from .schema.trust import check_views

                check_views(store)  # a warehouse from elsewhere is data, not code
            yield store
        except _store.IO_ERRORS as e:  # a full disk / lost permission writing any file: one line
            if not _store.is_write_fault(e):
                raise
            raise _store.io_error(self.path, e) from None
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
        from .sqlshell import read_only_query

        with self.connect() as store:
            return read_only_query(store, query, params, allow_read)

    def arrow(
        self,
        query: str,
        params: Sequence[Any] | None = None,
        *,
        allow_read: str | Path | Sequence[str | Path] = (),
    ) -> pa.Table:
        """Like :meth:`sql`, as a pyarrow Table (``polars.from_arrow(...)`` makes it a polars frame)."""
        from .sqlshell import read_only_query

        with self.connect() as store:
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
        from .sqlshell import run_read_only

        with self.connect() as store:
            cols, rows = run_read_only(store, query, variables, allow_read)
        return Rows(cols, rows)

    def info(self) -> str:
        """The overview ``ctxprior info`` prints: datasets, samples, runs, schema version.

        Command: ``ctxprior info``.
        """
        from .info import warehouse_info

        with self.connect() as store:
            return warehouse_info(store)

    def datasets(self) -> pd.DataFrame:
        """One row per dataset: name, source, relations, real / fake facts."""
        from .sqlfiles import read_sql

        with self.connect() as store:
            return store.df(read_sql("ctxprior.ingest", "sql/info.sql"))

    def samples(self) -> pd.DataFrame:
        """One row per sample: id, dataset, design, seed, relations, entities, contexts.

        Command: ``ctxprior sample``.
        """
        from .sqlfiles import read_sql

        return self.sql(read_sql("ctxprior.ingest", "sql/samples.sql"))

    def runs(self) -> pd.DataFrame:
        """One row per run: kind, model, status, units done/total, prompts/s, first error."""
        from .schema.runs import list_runs

        with self.connect() as store:
            return pd.DataFrame(list_runs(store))

    def most_susceptible(self, run: int, n: int = 5, least: bool = False) -> pd.DataFrame:
        """The ``n`` (entity, query form) rows of a run with the highest χ (``least=True``: lowest)."""
        from .sqlfiles import body, read_sql

        top = body(read_sql("ctxprior.queries", "sql/most_susceptible.sql"))
        return self.sql(top.format(direction="ASC" if least else "DESC"), [int(run), int(n)])

    def results(self, runs: Sequence[int] | None = None, analysis: str | None = None) -> pd.DataFrame:
        """Stored analysis rows (table ``analysis_result``), optionally for some runs / one analysis."""
        from .sqlfiles import read_sql

        params = [[int(r) for r in runs] if runs else None, analysis or None]
        return self.sql(read_sql("ctxprior.queries", "sql/stored_results.sql"), params)

    # -- datasets and samples --------------------------------------------------------------
    def build_dataset(
        self,
        triples: Sequence[str | Path] | str | Path,
        relations: str | Path,
        name: str,
        *,
        labels: Sequence[str | Path] = (),
        lang: str = "en",
        entities_per_relation: int = 1000,
        seed: int = 0,
        fmt: str = "auto",
        max_malformed: float = 0.001,
        require_label: str = "both",
        answer_choice: str = "random",
        progress: bool | None = None,
    ) -> dict:
        """Build dataset ``name`` from knowledge-graph triple files (N-Triples, one-line Turtle, TSV;
        plain or gzip) and a relations file (YAML); see [Build a dataset from a knowledge
        graph](datasets.md#build-a-dataset-from-a-knowledge-graph). The warehouse is not held while the
        triples are read. Returns a report; each of its ``files`` has ``lines``, the text naming its
        first malformed lines.

        Command: ``ctxprior build-dataset``.
        """
        from .ingest.kg_build import BuildOptions, build_dataset, line_list

        self._need_write()
        opts = BuildOptions(
            lang=lang,
            entities_per_relation=entities_per_relation,
            seed=seed,
            fmt=fmt,
            max_malformed=max_malformed,
            require_label=require_label,
            answer_choice=answer_choice,
        )
        files = [triples] if isinstance(triples, (str, Path)) else list(triples)
        rep = build_dataset(
            self._open_store,
            [str(f) for f in files],
            str(relations),
            name,
            labels=[str(f) for f in labels],
            options=opts,
            progress=progress,
            db_path=self.path,
        )
        for f in rep["files"]:
            f["lines"] = line_list(f)
        return rep

    def ingest(self, source: str, *args: Any, **params: Any) -> Any:
        """Load a dataset with the data source ``source`` (``"yago-qec"``, ``"dynamicqa"``, ``"demo"``:
        :func:`ingest_sources`); ``args`` and ``params`` are its parameters, as the command's
        arguments and options (``wh.ingest("yago-qec", "yago_qec.json", relations=["capital"])``).
        What needs no warehouse (download, validation) is done before it is opened; the dataset is
        written in one transaction. Returns what was loaded (for ``demo``, one dict per dataset).

        Command: ``ctxprior ingest SOURCE``.
        """
        src = ingest_sources().get(source)
        if src is None:
            raise UserError(f"unknown data source '{source}'; choose from {', '.join(ingest_sources())}")
        params = src.bind(args, params)
        params = src.prepare(**params) if src.prepare else params
        with self.connect(write=True) as store:
            return src.load(store, **params)

    def ingest_demo(self, only: Sequence[str] | None = None) -> list[dict]:
        """Load the bundled demo datasets (demo, friend_enemy, gender); a no-op when present.
        The same as ``wh.ingest("demo", only=only)``."""
        return self.ingest("demo", only=only)

    def ingest_yago_qec(
        self,
        source: str | Path,
        name: str = "yago_qec",
        relations: Sequence[str] | None = None,
        sha256: str | None = None,
    ) -> dict:
        """Load the authors' ``yago_qec.json`` from a path, ``hf://datasets/OWNER/REPO[@REV]/FILE`` or an
        http(s) URL (downloaded into the Hugging Face cache; ``sha256`` verifies it). Validated
        completely before anything is written; the result says what was loaded and from where.
        The same as ``wh.ingest("yago-qec", source, ...)``."""
        return self.ingest("yago-qec", source, name=name, relations=relations, sha256=sha256)

    def ingest_dynamicqa(
        self, folder: str | Path | None = None, name: str = "dynamicqa", revision: str | None = None
    ) -> dict:
        """Load DynamicQA from ``folder`` (the release CSVs), or without it from the Hub
        (``copenlu/dynamicqa`` at a pinned ``revision``, cached). The same as
        ``wh.ingest("dynamicqa", folder, ...)``."""
        return self.ingest("dynamicqa", folder, name=name, revision=revision)

    def write_demo_corpus(
        self, path: str | Path, seed: int = 0, n_documents: int = 3000, overwrite: bool = False
    ) -> dict[str, int]:
        """Write the demo's small generated corpus (one ``.jsonl.zst`` file) to ``path``, from the
        demo dataset's facts (for a co-occurrence covariate); returns its counts. ``path`` is never
        the warehouse, nor an existing file unless ``overwrite``."""
        from .ingest.demo import write_demo_corpus

        with self.connect() as store:
            return write_demo_corpus(store, path, seed=seed, n_documents=n_documents, overwrite=overwrite)

    # -- fake entities ---------------------------------------------------------------------
    def generate_fakes(
        self,
        dataset: str,
        relation: str,
        *,
        n: int = 50,
        model: str = "smollm2-135m",
        base_url: str | None = None,
        api_key_env: str | None = None,
        seed: int = 0,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_rounds: int = 10,
        prompt_style: str = "relation",
        timeout: float = 120.0,
        retries: int = 4,
        allow_partial: bool = False,
        chat: Any = None,
    ) -> Any:
        """Generate ``n`` fake entities for ``relation`` with a chat model (local, or ``openai:MODEL``
        at ``base_url``) and store them with their provenance; see [Fake entities](datasets.md#fake-entities).
        The warehouse is free for other writers while the model writes. Returns a ``FakesResult``.

        Command: ``ctxprior fakes generate``.
        """
        from .fakes import generate_fakes

        with self.connect(write=True, brief=True) as store:
            return generate_fakes(
                store,
                dataset,
                relation,
                n=n,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                seed=seed,
                temperature=temperature,
                top_p=top_p,
                max_rounds=max_rounds,
                prompt_style=prompt_style,
                timeout=timeout,
                retries=retries,
                allow_partial=allow_partial,
                chat=chat,
            )

    def add_fakes(
        self,
        path: str | Path,
        dataset: str,
        relation: str,
        *,
        n: int | None = None,
        entity_class: str | None = None,
    ) -> Any:
        """Add your own fake names from a file (one per line, a list, a JSON array, or a CSV with a
        ``name`` column), screened like generated ones. Returns a ``FakesResult``.

        Command: ``ctxprior fakes add``.
        """
        from .fakes import add_fakes

        with self.connect(write=True) as store:
            return add_fakes(store, path, dataset, relation, n=n, entity_class=entity_class)

    def fakes(self, dataset: str, relation: str | None = None) -> Rows:
        """A dataset's fakes: counts per relation by source, or (with ``relation``) each fake with
        the real entity whose answer it borrows and where it came from.

        Command: ``ctxprior fakes list``.
        """
        from .fakes import fakes_summary, list_fakes

        with self.connect() as store:
            cols, rows = list_fakes(store, dataset, relation) if relation else fakes_summary(store, dataset)
        return Rows(cols, rows)

    def sample(
        self,
        dataset: str,
        *,
        entities: int | None = 100,
        contexts: int | None = 600,
        context_types: Sequence[str] = ("base", "assertive", "negation"),
        seed: int = 11,
        relations: Sequence[str] | None = None,
        design: str = "paper",
        answer_sampling: str = "authors",
        templates_per_type: int | None = None,
        fakes: str = "random",
        real_entities: str = "fixed",
        items: int | None = None,
    ) -> int:
        """Draw the paper's sample design (App. C) from ``dataset``; returns the sample id.

        ``design="fixed"``: every item of a fixed-context dataset (``ingest("table", ...)`` or a
        preset) with exactly its own passages, the first ``items`` (default all); ``entities``,
        ``contexts`` and the other design options do not apply to it.

        ``fakes``: ``random`` (the authors' code: a seeded random choice among the relation's
        fakes) or ``paired`` (the fakes at the positions of the selected real entities, the same
        for every seed). ``real_entities``: ``fixed`` (top by degree, else one random draw that
        does not depend on ``seed``) or ``per-seed`` (without degrees, a new draw per seed); see
        [Departures](departures.md#dataset-building-and-sampling-du-et-al-2024).

        ``answer_sampling``: ``authors`` (the paper's code: the full answer list, without
        replacement) or ``distinct`` (uniform over distinct answers); see
        [Datasets and samples](datasets.md#sampling-answers-and-namesakes). ``design="all"``
        renders every template once per entity (the case studies; ``templates_per_type`` keeps a
        seeded choice of that many templates per context type).

        >>> sid = ctxprior.open("demo.duckdb", write=True).sample("demo", relations=["capital"], entities=2, contexts=6)

        Command: ``ctxprior sample``.
        """
        from .ingest.sampling import draw_sample

        if design == "fixed":
            from .ingest.fixed_sample import draw_fixed_sample

            with self.connect(write=True) as store:
                return draw_fixed_sample(store, dataset, items, seed)
        with self.connect(write=True) as store:
            return draw_sample(
                store,
                dataset,
                relations=relations or None,
                n_entities=entities,
                n_contexts=contexts,
                context_types=list(context_types),
                seed=seed,
                design=design,
                answer_sampling=answer_sampling,
                templates_per_type=templates_per_type,
                fakes=fakes,
                real_entities=real_entities,
                items=items,
            )

    # -- scoring ---------------------------------------------------------------------------
    def score(
        self,
        sample: int | None = None,
        *,
        model: Any = "smollm2-135m",
        device: str = "auto",
        dtype: str = "auto",
        quantization: str | None = None,
        batch_size: int | None = None,
        query_types: Sequence[str] = ("open", "closed"),
        query_forms_per_type: int | None = None,
        relations: Sequence[str] | None = None,
        estimator: str = "first-token",
        memorization: bool = False,
        max_new_tokens: int = 8,
        store_topk: int = 0,
        prior_topk: int = 10,
        shard_size: int | None = None,
        seed: int = 0,
        prompt_format: str = "raw",
        resume: int | None = None,
        fresh: bool = False,
        executor: str = "local",
        workers: int | None = None,
        address: str | None = None,
        gpus_per_worker: float | None = None,
        shard_dir: str | None = None,
        progress: bool = True,
        per_layer: str | bool | None = None,
        log: Callable[[str], None] | None = _stderr,
    ) -> Run:
        """Score a sample: ψ per (query form, entity, context), χ per (query form, entity).

        ``model``: an alias (``smollm2-135m``), a Hugging Face id or folder, a ``.gguf`` file, or a
        model already loaded with :func:`ctxprior.load_model`. Rerunning the same call continues an
        unfinished run (``resume=RUN`` names one; ``fresh=True`` starts anew). Ctrl-C (or
        ``ctxprior runs cancel``) keeps the finished units. ``executor="ray"`` computes units on
        Ray workers. ``prompt_format="chat"`` wraps each prompt in the model's chat template
        ([Chat models](scoring.md#chat-models)); ``per_layer="chi"`` (or True) / ``"psi"`` adds the
        logit-lens scores of every layer ([Per-layer scores](scoring.md#per-layer-scores)).
        Options are those of ``ctxprior score`` ([Scoring](scoring.md#options)), declared once
        (:func:`score_options`) and checked alike: a bad value is the command's one-line
        ``UserError``, raised before anything is written.
        """
        from .scoring.executors import executor_factory
        from .scoring.models import LoadedModel
        from .scoring.options import SCORE_OPTIONS, ScoreConfig, check_options
        from .scoring.runs import score_sample

        if sample is None and resume is None:
            raise UserError("--sample: give the sample to score (see `ctxprior info`), or --resume RUN")
        here = locals()
        args = {o.name: here[o.name] for o in SCORE_OPTIONS}  # every declared option is a keyword
        args["per_layer"] = per_layer = _per_layer(per_layer)
        check_options(SCORE_OPTIONS, args)  # the CLI's checks, before anything is read or written
        args["query_types"] = tuple(query_types)
        args["relations"] = tuple(relations) if relations else None
        # the options that change the rows (shard_size is chosen when the run starts)
        fields = set(ScoreConfig.__dataclass_fields__) - {"shard_size"}
        config = ScoreConfig(**{k: v for k, v in args.items() if k in fields})
        lm = model if isinstance(model, LoadedModel) else None
        if resume is not None:
            from .schema.runs import refuse_if_driven
            from .scoring.runs import stored_device_dtype

            with self.connect() as store:
                refuse_if_driven(store, resume)  # before the model loads: one driver per run
                if device == "auto" and dtype == "auto":
                    device, dtype = stored_device_dtype(store, resume)
        factory = executor_factory(
            self.path,
            executor,
            device=device,
            dtype=dtype,
            workers=workers,
            address=address,
            gpus_per_worker=gpus_per_worker,
            shard_dir=shard_dir,
        )
        with self.connect(write=True, brief=True) as store, _sigterm_interrupts():
            s = score_sample(
                store,
                sample,
                lm.model_id if lm else model,
                device=device,
                dtype=dtype,
                quantization=quantization,
                batch_size=batch_size,
                config=config,
                shard_size=shard_size,
                seed=seed,
                resume=resume,
                fresh=fresh,
                lm=lm,
                executor_factory=factory,
                progress=progress,
                log=log or (lambda m: None),
            )
        return Run.of(s)

    def cancel(self, run: int, timeout: float = 60.0, log: Callable[[str], None] | None = _stderr) -> str:
        """Stop a running run (SIGTERM to its driver on this host, only when that process is proven to
        be the run's driver, never to a PID an imported row merely names; finished units are kept) and
        mark it cancelled; ``score(resume=run)`` continues it. Returns the run's status."""
        from .schema.runs import cancel_run

        if not self.writable:
            raise UserError(f"{self.path} was opened read-only; use ctxprior.open({self.path!r}, write=True)")
        return cancel_run(self.path, run, timeout=timeout, wait=self.wait, log=log)

    # -- analyses --------------------------------------------------------------------------
    def analyze(
        self,
        runs: Sequence[int] | None = None,
        *,
        only: str | Sequence[str] | None = None,
        permutations: int = 10_000,
        alpha: float = 0.05,
        seed: int = 0,
        covariates: Sequence[str] = (),
        seen_fakes: str | None = None,
        log: Callable[[str], None] | None = _stderr,
    ) -> pd.DataFrame:
        """Run the paper's analyses on ``runs`` (default: every finished run), store and return them.

        ``only``: analysis names (``ctxprior.api.analysis_names()``: ``relevance``, ``assertive``, ...,
        ``dynamicqa``), or one comma-separated string of them as ``--only`` takes (``""``: the
        default set); ``covariates``: ``"cov_name.column"`` specs.
        See [Analyses](analyses.md). Returns the stored rows of these runs; ``.attrs["counts"]``
        holds the number of rows each analysis stored.

        Command: ``ctxprior analyze``.
        """
        from .queries.driver import analyze, parse_only

        if isinstance(only, str):
            only = parse_only(only)
        with self.connect(write=True) as store:
            counts = analyze(
                store,
                run_ids=list(runs) if runs else None,
                only=list(only) if only else None,
                k=permutations,
                alpha=alpha,
                seed=seed,
                covariates=list(covariates),
                seen_fakes=seen_fakes,
                log=log or (lambda m: None),
            )
        out = self.results(runs)
        out.attrs["counts"] = counts  # {analysis: rows stored}
        return out

    def summary(
        self, runs: Sequence[int] | None = None, only: str | Sequence[str] | None = None
    ) -> list[str]:
        """The short text summary of the stored analyses (what ``ctxprior analyze`` prints);
        ``only`` as in :meth:`analyze`.

        Command: ``ctxprior analyze``.
        """
        from .queries.driver import parse_only
        from .queries.summary import summary_lines

        if isinstance(only, str):
            only = parse_only(only)
        with self.connect() as store:
            return summary_lines(store, list(runs) if runs else None, only=list(only) if only else None)

    def figures(
        self, out: str | Path, runs: Sequence[int] | None = None, *, overwrite: bool = False
    ) -> list[tuple[str, str | None, str]]:
        """Write the paper's figures (PNG + the CSV behind each) to folder ``out`` (existing files
        of the same names are replaced only with ``overwrite``).

        Command: ``ctxprior figures``.
        """
        from .queries.figures import write_figures

        with self.connect() as store:
            return write_figures(store, str(out), list(runs) if runs else None, overwrite=overwrite)

    def report(
        self, out: str | Path = "report.html", runs: Sequence[int] | None = None, *, overwrite: bool = False
    ) -> str:
        """Write the self-contained HTML report; returns its path. ``out`` is never the warehouse,
        nor an existing file unless ``overwrite``.

        Command: ``ctxprior report``.
        """
        from .queries.report import write_report

        with self.connect() as store:
            return write_report(store, str(out), list(runs) if runs else None, overwrite=overwrite)

    def demo(
        self,
        out: str | Path = "demo-output",
        *,
        entities: int = 4,
        contexts: int = 12,
        seed: int = 11,
        model: str = "smollm2-135m",
        permutations: int = 10_000,
        all_relations: bool = False,
        log: Callable[[str], None] | None = _stderr,
    ) -> dict:
        """The main job (``ctxprior demo``): ingest the bundled demo datasets, sample, score, count
        co-occurrences, analyze, and write the figures and the report into ``out``, logging each
        step. Returns the sample and run ids and the output paths.

        Command: ``ctxprior demo``.
        """
        from .pipeline import DEMO_RELATIONS, run_demo

        self._need_write()
        return run_demo(
            self,
            log or (lambda m: None),
            entities=entities,
            contexts=contexts,
            seed=seed,
            model=model,
            permutations=permutations,
            out=out,
            relations=None if all_relations else DEMO_RELATIONS,
        )

    # -- export, import, publish -----------------------------------------------------------
    def export_parquet(
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
        from .publish.parquet import export_parquet, parse_names, parse_runs, select

        t, v, r = parse_names(_listed(tables)), parse_names(_listed(views)), parse_runs(_listed(runs))
        with self.connect() as store:
            if v == ["all"]:
                v = store.view_names()
            sel = select(store, tables=t if (t or v) else None, views=v, runs=r)
            return export_parquet(store, directory, sel, overwrite=overwrite)

    def import_parquet(self, directory: str | Path, *, mode: str = "fail") -> dict[str, int]:
        """Load a folder written by :meth:`export_parquet` or :meth:`publish` (every file's sha256 is
        checked before the warehouse is opened). ``mode``: ``fail`` (the warehouse must have no rows),
        ``merge`` or ``replace``. Returns the rows added per table.

        Command: ``ctxprior import parquet``.
        """
        from .publish.parquet import check_folder, import_parquet

        check_folder(directory)
        with self._removed_if_failed(), self.connect(write=True) as store:
            return import_parquet(store, directory, mode=mode, verify=False)

    def publish(
        self,
        repo_id: str,
        *,
        dry_run: str | Path | None = None,
        private: bool = False,
        runs: str | Sequence[int | str] | None = None,
        include_distributions: bool = False,
        token_env: str | None = None,
        license: str | None = None,
        citation: str | None = None,
        message: str | None = None,
        overwrite: bool = False,
        log: Callable[[str], None] | None = _stderr,
    ) -> Any:
        """Publish the warehouse as the Hugging Face dataset ``repo_id`` (one commit, none when the Hub
        has identical files); with ``dry_run``: write what would be uploaded into that folder and upload
        nothing (``overwrite``: replace an earlier dry run). Returns a ``PublishResult`` (its ``url`` is
        empty for a dry run); see [Publishing](publishing.md).

        Command: ``ctxprior publish``.
        """
        from .publish.card import missing_meanings
        from .publish.hub import PublishResult, build_dataset_dir, publish
        from .publish.parquet import parse_runs

        r = parse_runs(_listed(runs))
        with self.connect() as store:
            if dry_run:
                manifest = build_dataset_dir(
                    store,
                    dry_run,
                    repo_id,
                    runs=r,
                    include_distributions=include_distributions,
                    license=license,
                    citation=citation,
                    overwrite=overwrite,
                )
                return PublishResult(
                    repo_id, "", False, None, manifest=manifest, missing_meanings=missing_meanings(manifest)
                )
            return publish(
                store,
                repo_id,
                private=private,
                runs=r,
                include_distributions=include_distributions,
                token_env=token_env,
                license=license,
                citation=citation,
                message=message,
                echo=log or (lambda m: None),
            )

    def pull(
        self,
        source: str | Path,
        *,
        mode: str = "fail",
        revision: str | None = None,
        token_env: str | None = None,
    ) -> tuple[Path, dict[str, int]]:
        """Load a published ctxprior dataset (a local folder, or ``OWNER/NAME`` on the Hub at
        ``revision``) into the warehouse; ``mode`` as in :meth:`import_parquet`. Returns the folder
        read and the rows added per table.

        Command: ``ctxprior pull``.
        """
        from .publish.hub import pull

        with self._removed_if_failed():
            return pull(
                lambda: self.connect(write=True),
                str(source),
                mode=mode,
                revision=revision,
                token_env=token_env,
            )

    # --- runs and DynamicQA (B) ---
    def resume(
        self,
        run: int,
        *,
        executor: str = "local",
        workers: int | None = None,
        address: str | None = None,
        gpus_per_worker: float | None = None,
        shard_dir: str | None = None,
        progress: bool = True,
        log: Callable[[str], None] | None = _stderr,
    ):
        """Continue run ``run`` of any kind (persuasion or dynamic) with its stored model and options,
        after a crash, kill or cancel; ends with exactly the rows of an uninterrupted run
        (``ctxprior runs resume``). The executor options apply to persuasion runs (a dynamic run
        computes in this process). Returns a :class:`Run` (a ``DynamicRun`` for a dynamic run: the
        same fields, its units are facts)."""
        from .schema.runs import refuse_if_driven, run_kind

        with self.connect() as store:
            kind = run_kind(store, run)
            refuse_if_driven(store, run)  # one driver per run: a live one is never joined by a second
        if kind == "dynamic":
            if executor != "local":
                raise UserError(
                    f"--executor {executor}: run {run} is a dynamic run; it resumes in "
                    "this process (--executor local)"
                )
            return self.score_dynamic(resume=run, progress=progress, log=log)
        return self.score(
            resume=run,
            executor=executor,
            workers=workers,
            address=address,
            gpus_per_worker=gpus_per_worker,
            shard_dir=shard_dir,
            progress=progress,
            log=log,
        )

    def cancel_run(
        self, run: int, *, timeout: float = 60.0, log: Callable[[str], None] | None = _stderr
    ) -> tuple[str | None, str]:
        """:meth:`cancel` (any kind of run), returning (status before, status after): a run that was
        already done or cancelled is left as it is (what ``ctxprior runs cancel`` prints)."""
        runs = self.runs()
        before = runs.set_index("run_id")["status"].get(run) if len(runs) else None
        if before in ("done", "cancelled"):
            return before, before
        return before, self.cancel(run, timeout=timeout, log=log)

    def sample_dynamic(
        self,
        dataset: str = "dynamicqa",
        partitions: str | Sequence[str] | None = None,
        limit: int | None = None,
    ) -> dict:
        """A sample of DynamicQA facts for :meth:`score` (the first ``limit`` facts per partition,
        their original and counter-memory snippets as contexts); an identical existing sample is
        reused. Returns ``{"sample_id", "facts", "contexts"}`` (``ctxprior sample-dynamic``)."""
        from .dynamicqa.sample import make_sample, sample_counts

        with self.connect(write=True) as store:
            sid = make_sample(store, dataset, partitions, limit)
            n_facts, n_contexts = sample_counts(store, sid)
        return {"sample_id": sid, "facts": n_facts, "contexts": n_contexts}

    def score_dynamic(
        self,
        *,
        dataset: str = "dynamicqa",
        partitions: str | Sequence[str] | None = None,
        limit: int | None = None,
        model: str = "smollm2-135m",
        samples: int = 10,
        temperature: float = 0.5,
        max_new_tokens: int = 20,
        equivalence: str = "embedding:minilm",
        threshold: float | None = None,
        chat_template: str = "auto",
        seed: int = 0,
        device: str = "auto",
        se_form: str = "sum",
        cp_tokens: str = "generated",
        labels: str = "rouge",
        kl_zeros: str = "inf",
        resume: int | None = None,
        progress: bool = True,
        log: Callable[[str], None] | None = _stderr,
    ):
        """Sampled answers, semantic entropy and Coherent Persuasion for DynamicQA facts
        (``ctxprior score-dynamic``; options as there). Rerunning the same call continues an
        unfinished run (``resume=RUN`` continues run RUN with its stored options); Ctrl-C or
        ``ctxprior runs cancel`` keeps the finished facts. Returns a ``DynamicRun``: ``id``,
        ``status``, facts as ``units_done`` / ``units_total``, ``mean_cp``, ``mean_se_with_context``."""
        from .dynamicqa.generate import DynamicConfig, run_dynamic

        cfg = DynamicConfig(
            dataset=dataset,
            partitions=partitions,
            limit=limit,
            model=model,
            samples=samples,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            equivalence=equivalence,
            threshold=threshold,
            chat_template=chat_template,
            seed=seed,
            device=device,
            se_form=se_form,
            cp_tokens=cp_tokens,
            labels=labels,
            kl_zeros=kl_zeros,
        )
        cfg.validate()
        with self.connect(write=True, brief=True) as store, _sigterm_interrupts():
            return run_dynamic(
                store,
                None if resume is not None else cfg,
                resume=resume,
                progress=progress,
                echo=log or (lambda m: None),
            )

    def analyze_dynamic(self, runs: Sequence[int] | None = None) -> str:
        """DynamicQA Tables 1-3 analogues per run (default: every dynamic run with scores), stored in
        ``dynamicqa_summary`` / ``dynamicqa_regression``; returns the printed text
        (``ctxprior analyze-dynamic``)."""
        from .dynamicqa.analyses import analyze_dynamicqa

        with self.connect(write=True) as store:
            return analyze_dynamicqa(store, list(runs) if runs else None)

    # --- end B ---


def analysis_names() -> tuple[str, ...]:
    """Every analysis ``Warehouse.analyze(only=...)`` accepts, in run order (the registry of
    ``ctxprior.queries``: each analysis declared in its own file)."""
    from .queries.registry import names

    return names()


def ingest_sources() -> dict[str, Any]:
    """Every data source :meth:`Warehouse.ingest` (and ``ctxprior ingest``) knows, by name: the
    registry ``ctxprior.ingest.registry.SOURCES``, one declaration per source beside its loader.
    The declaring modules are found, not listed: every module of ``ingest/`` and each library
    package's ``ingest.py``."""
    import importlib
    from importlib import resources

    from .ingest.registry import SOURCES

    global _SOURCES_FOUND
    if not _SOURCES_FOUND:
        root = resources.files(__package__)
        names = [
            f"ingest.{f.name[:-3]}"
            for f in (root / "ingest").iterdir()
            if f.name.endswith(".py") and not f.name.startswith("_")
        ]
        names += [
            f"{d.name}.ingest"
            for d in root.iterdir()
            if d.name not in ("ingest", "commands") and (d / "ingest.py").is_file()
        ]
        for name in sorted(names):
            importlib.import_module(f"{__package__}.{name}")
        _SOURCES_FOUND = True
    return dict(sorted(SOURCES.items()))


_SOURCES_FOUND = False


def estimators() -> dict[str, str]:
    """Every ``estimator`` :meth:`Warehouse.score` accepts, with its one-line description (the
    registry ``ctxprior.scoring.estimators.ESTIMATORS``: one entry per estimator)."""
    from .scoring.estimators import ESTIMATORS

    return {name: e.help for name, e in ESTIMATORS.items()}


class Covariates:
    """``wh.covariates``: tables keyed by entity / answer / relation, joinable as ``cov_<name>`` views."""

    def __init__(self, wh: Warehouse):
        self._wh = wh

    def list(self) -> pd.DataFrame:
        """The covariate catalog, one row per covariate (what ``ctxprior covariates list`` shows, plus
        ``description``); an empty frame when there are none.

        Command: ``ctxprior covariates list``.
        """
        from .covariates.catalog import list_covariates

        with self._wh.connect() as store:
            if "covariate" not in store.table_names():
                return pd.DataFrame()
            return list_covariates(store)

    def add(
        self,
        data: pd.DataFrame | pa.Table | str | Path,
        *,
        on: Sequence[str] | str,
        name: str,
        match: str = "name",
        replace: bool = False,
        description: str | None = None,
    ) -> dict:
        """Add your own table (a DataFrame, an Arrow table, or a CSV / Parquet path) as ``cov_<name>``.

        ``on``: its key columns among dataset, relation, entity, answer; ``match``: compare entity /
        answer values with the warehouse's names (``name``) or URIs (``uri``).

        Command: ``ctxprior covariates add``.
        """
        from .covariates.user import add_user_table

        keys = on if isinstance(on, str) else ",".join(on)
        with self._wh.connect(write=True) as store:
            return add_user_table(
                store,
                data if not isinstance(data, Path) else str(data),
                name,
                keys,
                match=match,
                replace=replace,
                description=description,
            )

    def cooccurrence(
        self,
        corpus: Sequence[str | Path] | str | Path,
        *,
        name: str,
        window: int = 50,
        dataset: str | None = None,
        **options,
    ):
        """Count entity–answer co-occurrences in a corpus (App. F.2); see [Covariates](covariates.md).

        Command: ``ctxprior covariates cooccurrence``.
        """
        from .covariates.cooccurrence import cooccurrence

        files = [corpus] if isinstance(corpus, (str, Path)) else list(corpus)
        with self._wh.connect(write=True) as store:
            return cooccurrence(
                store, [str(f) for f in files], name, window=window, dataset=dataset, **options
            )

    def kg_degree(
        self, triples: Sequence[str | Path] | str | Path, *, name: str, dataset: str | None = None, **options
    ) -> dict:
        """Relation-specific KG degree δ(e, q) and total degree from triple files (App. F.3).

        Command: ``ctxprior covariates kg-degree``.
        """
        from .covariates.kg_degree import kg_degree

        files = [triples] if isinstance(triples, (str, Path)) else list(triples)
        with self._wh.connect(write=True) as store:
            return kg_degree(store, [str(f) for f in files], name, dataset=dataset, **options)


def _listed(values: Any) -> Any:
    """A comma-separated string as a one-item list (``"1,3"`` -> ``["1,3"]``), as click passes options."""
    return [values] if isinstance(values, str) else values


def migrate(path: str | Path | None = None, *, wait: float = 0.0) -> list[str]:
    """Upgrade the warehouse at ``path`` (default as :func:`open`) made by an older ctxprior to this
    version's schema, after a backup; returns what was done, one line each.

    Command: ``ctxprior migrate``.
    """
    import os

    from .schema.migrations import migrate as _migrate

    path = str(path or _store.default_db_path())
    if not os.path.exists(path):
        raise UserError(f"no warehouse at {path}")
    return _migrate(path, wait=wait)


def _per_layer(value: str | bool | None) -> str | None:
    """``per_layer`` of score / quick: None/False, True or "chi" (χ per layer), "psi" (χ and ψ)."""
    from .scoring.options import PER_LAYER

    if value in (None, False, ""):
        return None
    return PER_LAYER.check(PER_LAYER.bare if value is True else value)


def score_options() -> tuple:
    """The declared options of :meth:`Warehouse.score` (``ctxprior.scoring.options.Option``: name,
    flag, help, default, type, choices, validity), from which ``ctxprior score`` makes its options."""
    from .scoring.options import SCORE_OPTIONS

    return SCORE_OPTIONS


def quick(
    model: Any,
    query: str,
    entities: Sequence[str],
    contexts: Sequence[str],
    *,
    tokenizer: Any = None,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
    batch_size: int | None = None,
    prompt_format: str = "raw",
    per_layer: str | bool | None = None,
) -> pd.DataFrame:
    """Persuasion and susceptibility in memory, no warehouse (the authors' quick-start use).

    ``model``: an alias / Hugging Face id / folder, a model from :func:`ctxprior.load_model`, or a
    transformers causal LM already in your notebook together with its ``tokenizer``. ``query`` has
    an ``{entity}`` placeholder; each context is prepended as is (end it with ``"\\n"``);
    ``prompt_format="chat"`` puts context + query in the user turn of the model's chat template.
    Returns one row per (entity, context): ``entity, context, persuasion, susceptibility`` (nats;
    ``susceptibility`` repeats per entity); ``df.attrs["model"]`` names the model. With
    ``per_layer`` ("chi" or True: χ; "psi": χ and ψ) every row is repeated per ``layer`` of the
    logit lens (0 = embeddings; the last layer holds the values without it), one row per (entity,
    layer) for "chi".

    >>> df = ctxprior.quick("smollm2-135m", "Q: What is the capital of {entity}?\\nA:",
    ...                     ["France"], ["The capital of France is Rome.\\n", "The capital of France is Oslo.\\n"])
    >>> list(df.columns)
    ['entity', 'context', 'persuasion', 'susceptibility']

    Command: ``ctxprior quick``.
    """
    from .scoring.quick import quick_scores

    if "{entity}" not in query:
        raise UserError("query: the template needs an {entity} placeholder")
    if prompt_format not in ("raw", "chat"):
        raise UserError(f"prompt_format {prompt_format}: use raw or chat")
    per_layer = _per_layer(per_layer)
    out = quick_scores(
        _as_model(model, tokenizer, device, dtype, quantization),
        query,
        list(entities),
        list(contexts),
        batch_size=batch_size,
        prompt_format=prompt_format,
        per_layer=per_layer,
    )
    if per_layer == "chi":
        rows = [(e["entity"], layer, chi) for e in out["entities"] for layer, chi in enumerate(e["layers"])]
        df = pd.DataFrame(rows, columns=["entity", "layer", "susceptibility"])
    elif per_layer == "psi":
        rows = [
            (e["entity"], c, layer, p, chi)
            for e in out["entities"]
            for layer, (chi, psis) in enumerate(zip(e["layers"], e["layer_persuasion"]))
            for c, p in zip(contexts, psis)
        ]
        df = pd.DataFrame(rows, columns=["entity", "context", "layer", "persuasion", "susceptibility"])
    else:
        rows = [
            (e["entity"], c, p, e["susceptibility"])
            for e in out["entities"]
            for c, p in zip(contexts, e["persuasion"])
        ]
        df = pd.DataFrame(rows, columns=["entity", "context", "persuasion", "susceptibility"])
    df.attrs["model"] = out["model"]
    return df


def load_model(
    model: str | Path = "smollm2-135m",
    *,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
):
    """Load a causal LM once and reuse it in :func:`quick` / :meth:`Warehouse.score`."""
    from .scoring.models import load_model as _load

    return _load(str(model), device=device, dtype=dtype, quantization=quantization)


def _as_model(model: Any, tokenizer: Any, device: str, dtype: str, quantization: str | None):
    from .scoring.models import LoadedModel
    from .scoring.quick import wrap_model

    if isinstance(model, (str, Path)):
        return load_model(str(model), device=device, dtype=dtype, quantization=quantization)
    if isinstance(model, LoadedModel):
        return model
    if tokenizer is None:
        raise UserError("quick: a transformers model needs its tokenizer (tokenizer=...)")
    return wrap_model(model, tokenizer)


# -- argument types ------------------------------------------------------------------------------
# Every public function and method of this module checks its arguments against its annotations
# before it runs, so a notebook user's wrong type is one clear error naming the argument (an
# ArgumentTypeError: both a TypeError and a UserError), not a raw duckdb or pandas exception.


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
    if origin is abc.Callable or hint is abc.Callable:
        return callable(value)
    if isinstance(hint, type) and origin is None:
        return isinstance(value, hint)
    return True  # Any, TypeVars and the like


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
    if hint in names:
        return names[hint]
    module = getattr(hint, "__module__", "").split(".")[0]
    return f"a {module + '.' if module and module != 'ctxprior' else ''}{getattr(hint, '__name__', hint)}"


def _checked(fn: Callable) -> Callable:
    """``fn`` with its arguments checked against its annotations (read on the first call)."""
    import functools
    import inspect
    import typing

    from .errors import ArgumentTypeError

    sig, state = inspect.signature(fn), {}
    where = fn.__qualname__.removesuffix(".__init__")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "hints" not in state:
            state["hints"] = typing.get_type_hints(fn)
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
        return fn(*bound.args, **bound.kwargs)

    return wrapper


def _check_all() -> None:
    """Wrap the public functions and the public methods of Warehouse and Covariates."""
    g = globals()
    for name in ("open", "quick", "load_model", "migrate"):
        g[name] = _checked(g[name])
    for cls in (Warehouse, Covariates):
        for name, fn in list(vars(cls).items()):
            if callable(fn) and (not name.startswith("_") or name == "__init__") and not isinstance(fn, type):
                setattr(cls, name, _checked(fn))


_check_all()
