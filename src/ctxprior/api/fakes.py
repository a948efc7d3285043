"""``wh.fakes``: fake entities, generated with a chat model or added from a file, and listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scoring.models import DEFAULT_MODEL
from .core import Noun, Rows
from .typecheck import checked_methods


@checked_methods
class Fakes(Noun):
    """``wh.fakes``: a dataset's fake entities (see [Fake entities](datasets.md#fake-entities))."""

    name = "fakes"

    def generate(
        self,
        dataset: str,
        relation: str,
        *,
        n: int = 50,
        model: str = DEFAULT_MODEL,
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
        from ..fakes import generate_fakes
        from ..fakes.options import GENERATE_OPTIONS
        from ..options import check_options

        check_options(GENERATE_OPTIONS, locals())  # before the warehouse is opened
        with self._wh.connect(write=True, brief=True) as store:
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

    def add(
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
        from ..fakes import add_fakes
        from ..fakes.options import ADD_OPTIONS
        from ..options import check_options

        check_options(ADD_OPTIONS, locals())
        with self._wh.connect(write=True) as store:
            return add_fakes(store, path, dataset, relation, n=n, entity_class=entity_class)

    def list(self, dataset: str, relation: str | None = None) -> Rows:
        """A dataset's fakes: counts per relation by source, or (with ``relation``) each fake with
        the real entity whose answer it borrows and where it came from.

        Command: ``ctxprior fakes list``.
        """
        from ..fakes import fakes_summary, list_fakes

        with self._wh.connect() as store:
            cols, rows = list_fakes(store, dataset, relation) if relation else fakes_summary(store, dataset)
        return Rows(cols, rows)
