"""`ctxprior build-dataset`: build a dataset from a knowledge-graph dump."""

from __future__ import annotations

import os

import click

from ..api import command_options
from .app import pass_app
from .options import declared_options


@click.command("build-dataset", short_help="Build dataset NAME from a knowledge graph's TRIPLES.")
@declared_options(command_options("build-dataset"))
@pass_app
def build_dataset_cmd(app, triples, relations, name, **options) -> None:
    """Build dataset NAME from TRIPLES (N-Triples, one-line Turtle or TSV files or folders, plain or
    gzip, any size): the top entities by KG degree for each relation of --relations, with answers,
    names, degrees, query forms and context templates, like an ingested yago_qec.json."""
    rep = app.api(write=True).datasets.build(list(triples), relations, name, **options)
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
