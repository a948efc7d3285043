"""``wh.analyses``: run the paper's analyses on runs, read their stored rows, summary, figures and report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analyses.options import ANALYZE_OPTIONS
from .core import Noun, _stderr
from .typecheck import checked_methods, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


@checked_methods
class Analyses(Noun):
    """``wh.analyses``: the paper's analyses (see [Analyses](analyses.md)), stored per run."""

    name = "analyses"

    @declared_keywords(ANALYZE_OPTIONS, only=str | Sequence[str] | None)
    def run(
        self,
        runs: Sequence[int] | None = None,
        *,
        log: Callable[[str], None] | None = _stderr,
        **options: Any,
    ) -> pd.DataFrame:
        """Run the paper's analyses on ``runs`` (default: every finished run), store and return them.

        ``only``: analysis names (``ctxprior.api.analysis_names()``: ``relevance``, ``assertive``, ...,
        ``dynamicqa``), or one comma-separated string of them as ``--only`` takes (``""``: the
        default set); ``covariates``: ``"cov_name.column"`` specs. The keywords after ``runs`` are
        the options of ``ctxprior analyze`` (``ANALYZE_OPTIONS`` in ``analyses/options.py``), with
        their declared defaults.
        See [Analyses](analyses.md). Returns the stored rows of these runs; ``.attrs["counts"]``
        holds the number of rows each analysis stored.

        Command: ``ctxprior analyze``.
        """
        from ..analyses.driver import analyze, parse_only
        from ..options import check_options

        only = options["only"]
        if isinstance(only, str):
            only = parse_only(only)
        values = {**options, "runs": tuple(runs or ()), "only": tuple(only or ()) or None}
        check_options(ANALYZE_OPTIONS, values)
        with self._wh.connect(write=True, threads=1) as store:  # stored numbers: one thread (one_thread)
            counts = analyze(
                store,
                run_ids=list(runs) if runs else None,
                only=list(only) if only else None,
                k=options["permutations"],
                alpha=options["alpha"],
                seed=options["seed"],
                covariates=list(options["covariates"] or ()),
                seen_fakes=options["seen_fakes"],
                log=log or (lambda m: None),
            )
        out = self.results(runs)
        out.attrs["counts"] = counts  # {analysis: rows stored}
        return out

    def results(self, runs: Sequence[int] | None = None, analysis: str | None = None) -> pd.DataFrame:
        """Stored analysis rows (table ``analysis_result``), optionally for some runs / one analysis."""
        from ..sqlfiles import read_sql

        params = [[int(r) for r in runs] if runs else None, analysis or None]
        return self._wh.sql(read_sql("ctxprior.analyses", "sql/stored_results.sql"), params)

    def summary(
        self, runs: Sequence[int] | None = None, only: str | Sequence[str] | None = None
    ) -> list[str]:
        """The short text summary of the stored analyses (what ``ctxprior analyze`` prints);
        ``only`` as in :meth:`run`.

        Command: ``ctxprior analyze``.
        """
        from ..analyses.driver import parse_only
        from ..analyses.summary import summary_lines

        if isinstance(only, str):
            only = parse_only(only)
        with self._wh.connect() as store:
            return summary_lines(store, list(runs) if runs else None, only=list(only) if only else None)

    def figures(
        self, out: str | Path, runs: Sequence[int] | None = None, *, overwrite: bool = False
    ) -> list[tuple[str, str | None, str]]:
        """Write the paper's figures (PNG + the CSV behind each) to folder ``out`` (existing files
        of the same names are replaced only with ``overwrite``).

        Command: ``ctxprior figures``.
        """
        from ..analyses.figures import write_figures
        from ..analyses.options import FIGURES_OPTIONS
        from ..options import check_options

        check_options(FIGURES_OPTIONS, {"runs": tuple(runs or ())})
        with self._wh.connect() as store:
            return write_figures(store, str(out), list(runs) if runs else None, overwrite=overwrite)

    def report(
        self, out: str | Path = "report.html", runs: Sequence[int] | None = None, *, overwrite: bool = False
    ) -> str:
        """Write the self-contained HTML report; returns its path. ``out`` is never the warehouse,
        nor an existing file unless ``overwrite``.

        Command: ``ctxprior report``.
        """
        from ..analyses.options import REPORT_OPTIONS
        from ..analyses.report import write_report
        from ..options import check_options

        check_options(REPORT_OPTIONS, {"runs": tuple(runs or ())})
        with self._wh.connect() as store:
            return write_report(store, str(out), list(runs) if runs else None, overwrite=overwrite)
