"""`ctxprior ingest ...`: load source datasets into the warehouse.

One subcommand per data source of the registry (``ctxprior.api.ingest_sources()``: each source is
declared once, beside its loader), made from its declaration when the group is used, so that
``ctxprior --help`` does not load the sources."""

from __future__ import annotations

import click

from .app import pass_app, summary
from .options import click_param


class _Sources(click.Group):
    """The ``ingest`` group: its subcommands are the registry's sources."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .. import api

        return sorted(api.ingest_sources())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from .. import api

        source = api.ingest_sources().get(name)
        return _command(source) if source is not None else None


@click.group(cls=_Sources)
def ingest() -> None:
    """Load a dataset into the warehouse (validated fully, written in one transaction)."""


def _command(source) -> click.Command:
    """``ctxprior ingest <source>``: calls ``wh.datasets.ingest(name, **params)`` and prints the source's lines."""

    @pass_app
    def run(app, **params) -> None:
        result = app.api(write=True).datasets.ingest(source.name, **params)
        for line in source.lines(result):
            click.echo(line)

    params = [click_param(p) for p in source.params]
    return click.Command(
        source.name, callback=run, params=params, help=source.help, short_help=summary(source.help or "")
    )


COMMANDS = [ingest]
