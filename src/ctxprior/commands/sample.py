"""`ctxprior sample`: draw a context sample (the paper's design) and store it."""

from __future__ import annotations

import click

from ..api import command_options
from .app import pass_app
from .options import declared_options


@click.command("sample")
@declared_options(command_options("sample"))
@pass_app
def sample_cmd(app, dataset, entities, contexts, **options) -> None:
    """Draw a context sample and store it; prints the new sample id alone on the last line."""
    wh = app.api(write=True)
    sid = wh.samples.draw(dataset, entities=entities, contexts=contexts, **options)
    s = wh.samples.list().set_index("sample_id").loc[sid]
    click.echo(
        f"sample {sid}: dataset '{s['dataset']}', seed {s['seed']}, design {s['design']}, "
        f"{s['relations']} relations, {s['entities']} entities, {s['contexts']} contexts"
    )
    click.echo(str(sid))


COMMANDS = [sample_cmd]
