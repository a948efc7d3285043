"""``wh.hub``: publish the warehouse as a Hugging Face dataset, and pull a published one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..publish.options import PUBLISH_OPTIONS
from .core import Noun, _listed, _stderr
from .typecheck import checked_methods, declared_keywords


@checked_methods
class Hub(Noun):
    """``wh.hub``: published ctxprior datasets (see [Publishing](publishing.md))."""

    name = "hub"

    @declared_keywords(PUBLISH_OPTIONS, dry_run=str | Path | None, runs=str | Sequence[int | str] | None)
    def publish(self, repo_id: str, *, log: Callable[[str], None] | None = _stderr, **options: Any) -> Any:
        """Publish the warehouse as the Hugging Face dataset ``repo_id`` (one commit, none when the Hub
        has identical files); with ``dry_run``: write what would be uploaded into that folder and upload
        nothing (``overwrite``: replace an earlier dry run). Returns a ``PublishResult`` (its ``url`` is
        empty for a dry run); see [Publishing](publishing.md).

        Command: ``ctxprior publish``.
        """
        from ..publish.card import missing_meanings
        from ..publish.hub import PublishResult, build_dataset_dir, publish
        from ..publish.parquet import parse_runs

        o, r = options, parse_runs(_listed(options["runs"]))
        shared = {k: o[k] for k in ("include_distributions", "license", "citation")}
        with self._wh.connect() as store:
            if o["dry_run"]:
                manifest = build_dataset_dir(
                    store, o["dry_run"], repo_id, runs=r, overwrite=o["overwrite"], **shared
                )
                return PublishResult(
                    repo_id, "", False, None, manifest=manifest, missing_meanings=missing_meanings(manifest)
                )
            return publish(
                store,
                repo_id,
                private=o["private"],
                runs=r,
                token_env=o["token_env"],
                message=o["message"],
                echo=log or (lambda m: None),
                **shared,
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
        ``revision``) into the warehouse; ``mode`` as in :meth:`Parquet.load`. Returns the folder
        read and the rows added per table.

        Command: ``ctxprior pull``.
        """
        from ..publish.hub import pull
        from ..publish.options import MODE

        MODE.check(mode)

        with self._wh._removed_if_failed():
            return pull(
                lambda reads: self._wh.connect(write=True, reads=reads),  # the folder's Parquet files
                str(source),
                mode=mode,
                revision=revision,
                token_env=token_env,
            )
