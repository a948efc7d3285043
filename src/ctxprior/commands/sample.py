"""`ctxprior sample`: draw a context sample (the paper's design) and store it."""

from __future__ import annotations

import click

from .app import pass_app


@click.command("sample")
@click.option("--dataset", required=True, help="Dataset name (see `ctxprior info`).")
@click.option(
    "--relation",
    "relations",
    multiple=True,
    metavar="R",
    help="Only this relation (short name or full id); repeatable. Default: all.",
)
@click.option(
    "--entities",
    "n_entities",
    type=int,
    default=None,
    help="Entities per relation: half real (top by degree when known), half fake. "
    "Default: 100 for the paper design, every entity for --design all.",
)
@click.option(
    "--contexts",
    "n_contexts",
    type=int,
    default=None,
    help="Contexts per relation (paper design); each entity appears in contexts/entities "
    "of them. Default: 600.",
)
@click.option(
    "--context-types",
    default="base,assertive,negation",
    show_default=True,
    help="Comma-separated context types, split evenly per entity.",
)
@click.option("--seed", type=int, default=11, show_default=True, help="Random seed (paper: 11, 12, 13).")
@click.option(
    "--design",
    type=click.Choice(["paper", "all", "fixed"]),
    default="paper",
    show_default=True,
    help="paper: the balanced random design; all: every template once per entity "
    "(case studies; --entities 0 means every entity); fixed: every item of a fixed-context "
    "dataset (`ingest table`, nq-swap, conflictqa, counterfact) with exactly its own passages.",
)
@click.option(
    "--items",
    type=int,
    default=None,
    metavar="N",
    help="With --design fixed: only the first N items in source order. Default: every item.",
)
@click.option(
    "--answer-sampling",
    type=click.Choice(["authors", "distinct"]),
    default="authors",
    show_default=True,
    help="How each context's answer is drawn from the relation's answers. authors: as the "
    "paper's code, from the full list of its facts' answers (frequent answers more "
    "often) without replacement; distinct: uniformly over the distinct answers, with "
    "replacement.",
)
@click.option(
    "--templates-per-type",
    type=int,
    default=None,
    metavar="N",
    help="With --design all: render a seeded choice of N templates per context type (e.g. a "
    "small gender study). Default: every template.",
)
@click.option(
    "--fakes",
    type=click.Choice(["random", "paired"]),
    default="random",
    show_default=True,
    help="Which fakes a sample queries. random: as the authors' code, a seeded random choice "
    "among the relation's fakes (each with its own answer); paired: the fakes at the "
    "positions of the selected real entities (the same for every seed).",
)
@click.option(
    "--real-entities",
    type=click.Choice(["fixed", "per-seed"]),
    default="fixed",
    show_default=True,
    help="fixed: top by degree, else one random draw that does not depend on --seed (seeds "
    "vary the contexts and fakes, as in the paper); per-seed: without degrees, a new "
    "draw for every seed.",
)
@pass_app
def sample_cmd(
    app,
    dataset,
    relations,
    n_entities,
    n_contexts,
    context_types,
    seed,
    design,
    answer_sampling,
    templates_per_type,
    fakes,
    real_entities,
    items,
) -> None:
    """Draw a context sample and store it; prints the new sample id alone on the last line."""
    types = [t for t in context_types.split(",") if t.strip()]
    if design == "paper":
        n_entities = 100 if n_entities is None else n_entities
        n_contexts = 600 if n_contexts is None else n_contexts
    elif n_entities == 0:
        n_entities = None
    wh = app.api(write=True)
    sid = wh.sample(
        dataset,
        relations=relations,
        entities=n_entities,
        contexts=n_contexts,
        context_types=types,
        seed=seed,
        design=design,
        answer_sampling=answer_sampling,
        templates_per_type=templates_per_type,
        fakes=fakes,
        real_entities=real_entities,
        items=items,
    )
    s = wh.samples().set_index("sample_id").loc[sid]
    click.echo(
        f"sample {sid}: dataset '{s['dataset']}', seed {s['seed']}, design {s['design']}, "
        f"{s['relations']} relations, {s['entities']} entities, {s['contexts']} contexts"
    )
    click.echo(str(sid))


COMMANDS = [sample_cmd]
