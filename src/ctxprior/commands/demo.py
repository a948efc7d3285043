"""`ctxprior demo`: the main job on the bundled demo data."""

from __future__ import annotations

import click

from ..api import command_options
from .app import pass_app
from .options import declared_options


@click.command("demo")
@declared_options(command_options("demo"))
@pass_app
def demo_cmd(app, out, **options) -> None:
    """Run the whole pipeline on the bundled demo: ingest, sample, score (with memorization on a few
    entities), co-occurrence covariate, every analysis, figures and the HTML report."""
    app.api(write=True).demo(out, log=click.echo, **options)


COMMANDS = [demo_cmd]
