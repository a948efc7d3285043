"""`ctxprior demo`: the main job on the bundled demo data."""

from __future__ import annotations

import click

from .app import pass_app


@click.command("demo")
@click.option("--entities", type=int, default=4, show_default=True, help="Entities per relation (half fake).")
@click.option(
    "--all-relations", is_flag=True, help="All nine demo relations (default: five, to stay a few minutes)."
)
@click.option("--contexts", type=int, default=12, show_default=True, help="Contexts per relation.")
@click.option("--permutations", type=int, default=10_000, show_default=True, help="Permutations per test.")
@click.option("--seed", type=int, default=11, show_default=True, help="Sampling seed.")
@click.option("--model", default="smollm2-135m", show_default=True, help="Model to score with.")
@click.option(
    "--out",
    default="demo-output",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for the figures, the HTML report and the generated corpus.",
)
@pass_app
def demo_cmd(app, entities, all_relations, contexts, permutations, seed, model, out) -> None:
    """Run the whole pipeline on the bundled demo: ingest, sample, score (with memorization on a few
    entities), co-occurrence covariate, every analysis, figures and the HTML report."""
    app.api(write=True).demo(
        out,
        entities=entities,
        contexts=contexts,
        seed=seed,
        model=model,
        permutations=permutations,
        all_relations=all_relations,
        log=click.echo,
    )


COMMANDS = [demo_cmd]
