"""The analyses `ctxprior analyze` knows, each declared in one place.

- A group comparison is one ``.sql`` file in this package that starts with a front-matter
  comment block (the lines ``-- key: value`` before the first other line; a key repeated
  continues its value)::

      -- analysis: gender
      -- order: 120
      -- help: masculine vs feminine names, per context collection (§5, Fig. 11)
      -- compare: masculine != feminine
      -- ...
      SELECT ...

  Keys: ``analysis`` (its name), ``order`` (place in the default run order and in the
  summary), ``help``, ``compare`` (``A > B`` one-sided greater, ``A < B`` less, ``A != B``
  two-sided; A and B are values of the column ``grp``), ``design`` (the alternative design
  stored beside ``independent``: ``paired``, ``entity_mean`` or ``none``), ``unit``,
  ``stratum`` (the column that splits tests within a relation, default ``query_type``),
  ``family`` (the Benjamini-Hochberg family, default ``run_id, query_type, test``),
  ``units-from`` (another file whose rows ``comparisons.units_from_cells`` turns into this
  analysis's units), ``transform`` (``exclude-seen-fakes``: without the fake entities seen in
  the corpus; ``label-mixture``: say when values are ψ against a mixture), ``summary``
  (the summary line's text), ``report-title``, ``report`` (the report section's text),
  ``figure`` (the report figure shown in the section), ``default`` (``no``: not run unless named
  in ``--only`` or added by the driver, as ``known`` is for runs with closed-book answers).
- An analysis that needs Python beyond SQL and a standard comparison registers a step with
  ``@register_analysis(name, order=..., help=...)`` in its own module of ``analyses/steps/``.

- Another package adds analyses with an entry point ``ctxprior.analyses`` (``ctxprior.plugins``)
  naming a module: its import registers its steps, and the ``*.sql`` files of its folder are read
  as above.

``report-title`` falls back to the name, ``report`` and ``summary`` to ``help``.
``analyses()`` loads them all once, ordered by ``order``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .. import plugins
from ..plugins import Registry

_FRONT = re.compile(r"^--\s*([a-z][a-z0-9-]*):\s?(.*)$")
_OPS = {">": "greater", "<": "less", "!=": "two-sided"}


@dataclass(frozen=True)
class Comparison:
    """A two-group comparison: both designs, BH per family (``comparisons.step_comparison``)."""

    name: str
    sql: str
    label1: str
    label2: str
    alternative: str
    unit: str
    alt_design: str | None  # "paired" | "entity_mean" | None
    stratum: str = "query_type"  # column that splits tests within a relation
    family: tuple = ("run_id", "query_type", "test")  # BH family
    units_from: str | None = None  # e.g. context_cells.sql (one scan for several analyses)
    transforms: tuple = ()  # exclude-seen-fakes, label-mixture (see comparisons.step_comparison)
    text: str = field(default="", repr=False)  # the SQL of the file (read where it was declared)


@dataclass(frozen=True)
class Analysis:
    """One analysis: its name, place, help, and how it runs (a step or a comparison)."""

    name: str
    order: int
    help: str
    step: Callable | None = None  # step(job, name); None: comparisons.step_comparison
    comparison: Comparison | None = None
    kind: str = "persuasion"  # the kind of run it reads: persuasion | dynamic
    default: bool = True  # runs when --only is not given
    summary: str | None = None  # the summary line's text (comparisons)
    report_title: str | None = None
    report_text: str | None = None
    figure: str | None = None  # the report figure shown in its section


def register_analysis(
    name: str, *, order: int, help: str, kind: str = "persuasion", default: bool = True
) -> Callable:
    """Decorator: ``step(job, name)`` runs the analysis ``name`` in `analyze` (stack several to
    share one step between analyses)."""

    def deco(step):
        ANALYSES.add(name, Analysis(name, order, help, step=step, kind=kind, default=default))
        return step

    return deco


def front_matter(text: str) -> dict[str, str]:
    """The leading ``-- key: value`` lines of a SQL file (a repeated key continues its value)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _FRONT.match(line.strip())
        if not m:
            break
        key, value = m.group(1), m.group(2).strip()
        out[key] = f"{out[key]} {value}" if key in out else value
    return out


def _comparison(name: str, file: str, meta: dict[str, str], text: str) -> Comparison:
    m = re.fullmatch(r"(\S+)\s*(>|<|!=)\s*(\S+)", meta["compare"])
    if not m:
        raise ValueError(f"{file}: compare: expected 'A > B', 'A < B' or 'A != B', got {meta['compare']!r}")
    design = meta.get("design", "none")
    family = tuple(s.strip() for s in meta.get("family", "run_id, query_type, test").split(","))
    return Comparison(
        name,
        file,
        m.group(1),
        m.group(3),
        _OPS[m.group(2)],
        meta["unit"],
        None if design == "none" else design,
        meta.get("stratum", "query_type"),
        family,
        meta.get("units-from"),
        tuple(meta["transform"].split()) if "transform" in meta else (),
        text,
    )


def declared_in(folder: Any) -> dict[str, Analysis]:
    """The comparisons declared in the ``*.sql`` front matter of ``folder`` (a path or a package's
    resources)."""
    out = {}
    files = [f for f in folder.iterdir() if f.name.endswith(".sql")]
    for f in sorted(files, key=lambda p: p.name):
        text = f.read_text(encoding="utf-8")
        meta = front_matter(text)
        if "analysis" not in meta:
            continue  # a helper query, not an analysis
        name = meta["analysis"]
        if name in out:
            raise ValueError(f"{f.name}: analysis {name} is declared twice")
        help_ = meta.get("help", "") or name
        out[name] = Analysis(
            name,
            int(meta["order"]),
            help_,
            comparison=_comparison(name, f.name, meta, text),
            summary=meta.get("summary") or help_,
            report_title=meta.get("report-title") or name,
            report_text=meta.get("report") or help_,
            figure=meta.get("figure"),
            default=meta.get("default", "yes") != "no",
        )
    return out


def _found(obj: Any) -> list[tuple[str, Analysis]]:
    """An entry point's module: the analyses the ``*.sql`` files of its folder declare (its
    import registered its steps)."""
    file = getattr(obj, "__file__", None)
    return list(declared_in(Path(file).parent).items()) if file else []


ANALYSES: Registry[Analysis] = Registry(
    "analyses",
    "analysis",
    builtin=lambda: plugins.modules(f"{__package__}.steps"),
    declared=lambda: declared_in(resources.files(__package__)).items(),
    found=_found,
    order=lambda a: a.order,
)


def analyses() -> dict[str, Analysis]:
    """{name: Analysis} of every analysis, in run order (loaded on first use)."""
    return ANALYSES.all()


def get(name: str) -> Analysis:
    return analyses()[name]


def names() -> tuple[str, ...]:
    """Every analysis name in run order (the choices of ``analyze --only``)."""
    return tuple(analyses())


def default_names() -> tuple[str, ...]:
    """What `analyze` runs without ``--only``."""
    return tuple(n for n, a in analyses().items() if a.default)
