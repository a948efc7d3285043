"""What the parts of the API share: the result types (:class:`Run`, :class:`Rows`), the base of the
nouns a :class:`~ctxprior.api.Warehouse` hands out (``wh.datasets``, ``wh.runs``, ...), and small
argument helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


def _stderr(msg: str) -> None:
    import sys

    print(msg, file=sys.stderr)


@dataclass
class Run:
    """A finished (or stopped) run, as :meth:`Runs.score` and :meth:`Runs.resume` return it."""

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
        """The run a ``scoring.runs.RunSummary`` (or a dynamic run's ``DynamicRun``) describes."""
        s = summary
        return cls(
            s.run_id if hasattr(s, "run_id") else s.id,
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
    """Column names and rows as DuckDB returned them (:meth:`Warehouse.query`, :meth:`Fakes.list`)."""

    columns: list[str]
    rows: list[tuple]

    def format(self, fmt: str = "table", max_rows: int | None = None) -> str:
        """As ``ctxprior sql`` prints them: ``table`` (at most ``max_rows`` rows), ``csv`` or ``json``."""
        from ..sqlshell import format_rows

        return format_rows(self.columns, self.rows, fmt, max_rows)

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


class Noun:
    """One part of a warehouse, as ``wh.<name>`` hands it out: its methods work on ``wh``'s file."""

    name = ""  # the attribute of Warehouse that holds it

    def __init__(self, wh: Any):
        self._wh = wh

    def __repr__(self) -> str:
        return f"{self._wh!r}.{self.name}"


def _listed(values: Any) -> Any:
    """A comma-separated string as a one-item list (``"1,3"`` -> ``["1,3"]``), as click passes options."""
    return [values] if isinstance(values, str) else values


def _per_layer(value: str | bool | None) -> str | None:
    """``per_layer`` of score / quick: None/False, True or "chi" (χ per layer), "psi" (χ and ψ)."""
    from ..scoring.options import PER_LAYER

    if value in (None, False, ""):
        return None
    return PER_LAYER.check(PER_LAYER.bare if value is True else value)
