"""``wh.fakes``: fake entities, generated with a chat model or added from a file, and listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..fakes.options import ADD_OPTIONS, GENERATE_OPTIONS
from ..options import check_options
from .core import Noun, Rows
from .typecheck import checked_methods, declared_keywords


@checked_methods
class Fakes(Noun):
    """``wh.fakes``: a dataset's fake entities (see [Fake entities](datasets.md#fake-entities))."""

    name = "fakes"

    @declared_keywords(GENERATE_OPTIONS)
    def generate(self, dataset: str, relation: str, *, chat: Any = None, **options: Any) -> Any:
        """Generate ``n`` fake entities for ``relation`` with a chat model (local, or ``openai:MODEL``
        at ``base_url``) and store them with their provenance; see [Fake entities](datasets.md#fake-entities).
        The warehouse is free for other writers while the model writes. Returns a ``FakesResult``.
        The keywords are the options of ``ctxprior fakes generate``, made from their one
        declaration (``GENERATE_OPTIONS`` in ``fakes/options.py``).

        Command: ``ctxprior fakes generate``.
        """
        from ..fakes import generate_fakes

        check_options(
            GENERATE_OPTIONS, {"dataset": dataset, "relation": relation, **options}
        )  # before opening
        with self._wh.connect(write=True, brief=True) as store:
            return generate_fakes(store, dataset, relation, chat=chat, **options)

    @declared_keywords(ADD_OPTIONS)
    def add(self, path: str | Path, dataset: str, relation: str, **options: Any) -> Any:
        """Add your own fake names from a file (one per line, a list, a JSON array, or a CSV with a
        ``name`` column), screened like generated ones. Returns a ``FakesResult``.

        Command: ``ctxprior fakes add``.
        """
        from ..fakes import add_fakes

        check_options(ADD_OPTIONS, {"path": path, "dataset": dataset, "relation": relation, **options})
        with self._wh.connect(write=True) as store:
            return add_fakes(store, path, dataset, relation, **options)

    def list(self, dataset: str, relation: str | None = None) -> Rows:
        """A dataset's fakes: counts per relation by source, or (with ``relation``) each fake with
        the real entity whose answer it borrows and where it came from.

        Command: ``ctxprior fakes list``.
        """
        from ..fakes import fakes_summary, list_fakes

        with self._wh.connect() as store:
            cols, rows = list_fakes(store, dataset, relation) if relation else fakes_summary(store, dataset)
        return Rows(cols, rows)
