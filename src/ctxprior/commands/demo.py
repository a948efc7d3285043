"""`ctxprior demo`: the main job on the bundled demo data."""

from __future__ import annotations

import click

from ..cli import pass_app


@click.command("demo")
@click.option("--entities", type=int, default=6, show_default=True, help="Entities per relation (half fake).")
@click.option("--contexts", type=int, default=36, show_default=True, help="Contexts per relation.")
@click.option("--permutations", type=int, default=10_000, show_default=True, help="Permutations per test.")
@click.option("--seed", type=int, default=11, show_default=True)
@click.option("--model", default="smollm2-135m", show_default=True, help="Model to score with.")
@pass_app
def demo_cmd(app, entities, contexts, permutations, seed, model) -> None:
    """Run the whole pipeline on the bundled demo: ingest, sample, score, analyze, summarize."""
    from ..pipeline import run_demo

    run_demo(app.db, lambda m: click.echo(m), entities=entities, contexts=contexts, seed=seed, model=model,
             permutations=permutations)


COMMANDS = [demo_cmd]
