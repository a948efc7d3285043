"""`ctxprior demo`: the main job on the bundled demo data."""

from __future__ import annotations

import click

from ..cli import pass_app


@click.command("demo")
@click.option("--entities", type=int, default=4, show_default=True, help="Entities per relation (half fake).")
@click.option("--contexts", type=int, default=24, show_default=True, help="Contexts per relation.")
@click.option("--seed", type=int, default=11, show_default=True)
@click.option("--model", default="smollm2-135m", show_default=True, help="Model to score with.")
@pass_app
def demo_cmd(app, entities, contexts, seed, model) -> None:
    """Run the whole pipeline on the bundled demo: ingest, sample, score, analyze, summarize."""
    from ..pipeline import run_demo

    run_demo(app.db, click.echo, entities=entities, contexts=contexts, seed=seed, model=model)


COMMANDS = [demo_cmd]
