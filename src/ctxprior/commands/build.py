"""`ctxprior build-dataset`: build a dataset from a knowledge-graph dump."""

from __future__ import annotations

import os

import click

from .app import pass_app


@click.command("build-dataset")
@click.argument("triples", nargs=-1, required=True, type=click.Path())
@click.option("--name", required=True, help="Dataset name in the warehouse.")
@click.option(
    "--relations",
    "relations",
    required=True,
    type=click.Path(),
    help="Relations file (YAML): predicates, query forms, context templates, class filters "
    "(format in docs/datasets.md; example: ctxprior/ingest/data/kg_relations.yaml).",
)
@click.option(
    "--labels",
    "labels",
    multiple=True,
    type=click.Path(),
    metavar="FILE",
    help="Extra triple file(s) read only for labels (rdfs:label, skos:prefLabel, schema:name); "
    "repeatable. Labels in TRIPLES are used too.",
)
@click.option(
    "--lang",
    default="en",
    show_default=True,
    help="Label language: labels tagged with it win over untagged ones; other languages are ignored.",
)
@click.option(
    "--entities-per-relation",
    type=int,
    default=1000,
    show_default=True,
    help="Keep this many entities per relation: the top ones by KG degree (ties broken by --seed).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for breaking degree ties and for the random answer choice.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "nt", "ttl", "tsv"]),
    default="auto",
    show_default=True,
    help="Triple format of all files (auto: from each file name, .nt/.ttl/.tsv, optionally .gz).",
)
@click.option(
    "--max-malformed",
    type=float,
    default=0.001,
    show_default=True,
    help="Refuse the input when more than this fraction of its lines are not triples "
    "(fewer are skipped and reported with line numbers).",
)
@click.option(
    "--require-label",
    type=click.Choice(["both", "entity", "none"]),
    default="both",
    show_default=True,
    help="both: as the authors, drop facts whose entity or (IRI) answer has no label in --lang; "
    "entity: only entities need one; none: name unlabelled IRIs after their local name.",
)
@click.option(
    "--answer-choice",
    type=click.Choice(["random", "degree"]),
    default="random",
    show_default=True,
    help="Which answer an entity with several gets. random: as the authors, one at random "
    "(seeded by --seed); degree: a labelled one with the highest KG degree.",
)
@pass_app
def build_dataset_cmd(
    app,
    triples,
    name,
    relations,
    labels,
    lang,
    entities_per_relation,
    seed,
    fmt,
    max_malformed,
    require_label,
    answer_choice,
) -> None:
    """Build dataset NAME from TRIPLES (N-Triples, one-line Turtle or TSV files or folders, plain or
    gzip, any size): the top entities by KG degree for each relation of --relations, with answers,
    names, degrees, query forms and context templates, like an ingested yago_qec.json."""
    rep = app.api(write=True).datasets.build(
        list(triples),
        relations,
        name,
        labels=list(labels),
        lang=lang,
        entities_per_relation=entities_per_relation,
        seed=seed,
        fmt=fmt,
        max_malformed=max_malformed,
        require_label=require_label,
        answer_choice=answer_choice,
    )
    click.echo(
        f"built dataset '{rep['dataset']}': {rep['relations']} relations, {rep['facts']} facts, "
        f"{rep['entities']} entities, {rep['answers']} answers, {rep['query_forms']} query forms, "
        f"{rep['context_templates']} context templates"
    )
    n_files = sum(f["role"] == "triples" for f in rep["files"])
    click.echo(
        f"read {rep['n_triples']:,} triples from {n_files} file(s) in {rep['seconds']:.1f} s "
        f"({rep['lines_per_second']:,.0f} lines/s)"
    )
    for f in rep["files"]:
        if f["n_malformed"]:
            click.echo(
                f"skipped {f['n_malformed']} malformed line(s) in {os.path.basename(f['path'])} "
                f"({f['lines']})"
            )
    if rep.get("n_unusable_names"):
        click.echo(
            f"left out {rep['n_unusable_names']} chosen fact(s) whose entity or answer has no usable name "
            "(blank, over 100 characters, or a control character)"
        )
    for r in rep["per_relation"]:
        lo, hi = r["total_degree_range"] or (0, 0)
        note = f"; {r['n_unlabelled_entities']} named after their IRI" if r["n_unlabelled_entities"] else ""
        click.echo(
            f"  {r['name']}: {r['n_entities']} of {r['n_candidates']} entities (total degree {hi}..{lo}){note}"
        )


COMMANDS = [build_dataset_cmd]
