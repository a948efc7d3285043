"""`ctxprior ingest ...`: load source datasets into the warehouse."""

from __future__ import annotations

import click

from .app import pass_app


@click.group()
def ingest() -> None:
    """Load a dataset into the warehouse (validated fully, written in one transaction)."""


@ingest.command("yago-qec")
@click.argument("path", metavar="PATH|hf://datasets/OWNER/REPO[@REV]/FILE|URL")
@click.option("--name", default="yago_qec", show_default=True, help="Dataset name in the warehouse.")
@click.option("--relation", "relations", multiple=True, metavar="R",
              help="Load only this relation (full id or short name, e.g. capital); repeatable.")
@click.option("--sha256", "sha256", metavar="HEX",
              help="Expected sha256 of the file; a different file is refused before anything is written.")
@pass_app
def ingest_yago_qec_cmd(app, path: str, name: str, relations: tuple[str, ...], sha256: str | None) -> None:
    """Load the paper authors' yago_qec.json (relations, real + GPT-4 fake entities, query forms,
    context templates, URIs, class fractions and degrees) from a local file, a Hub dataset file or
    an http(s) URL (downloaded into the Hugging Face cache; its sha256 is recorded)."""
    s = app.api(write=True).ingest_yago_qec(path, name=name, relations=relations, sha256=sha256)
    click.echo(f"ingested dataset '{s['dataset']}': {s['relations']} relations, {s['facts']} facts, "
               f"{s['entities']} entities, {s['answers']} answers, {s['query_forms']} query forms, "
               f"{s['context_templates']} context templates")
    click.echo(f"source: {s['source']} (sha256 {s['sha256']})")


@ingest.command("dynamicqa")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--name", default="dynamicqa", show_default=True, help="Dataset name in the warehouse.")
@click.option("--revision", metavar="REV",
              help="Without DIRECTORY: the Hub revision (commit, branch or tag) of copenlu/dynamicqa to "
                   "download. Default: the pinned commit recorded in ctxprior.dynamicqa.ingest.HUB_REVISION.")
@pass_app
def ingest_dynamicqa_cmd(app, directory: str | None, name: str, revision: str | None) -> None:
    """Load DynamicQA from DIRECTORY (Static_final.csv, Temporal_final.csv, Disputable_final.csv as in
    the GitHub release, or static.csv, temporal.csv, disputable.csv as on the Hub); without DIRECTORY,
    download copenlu/dynamicqa from the Hugging Face Hub at a pinned revision (cached). Loads facts,
    aliases, replacement objects, edit counts, popularity, questions and masked contexts."""
    s = app.api(write=True).ingest_dynamicqa(directory, name=name, revision=revision)
    click.echo(f"ingested dataset '{s['dataset']}': {s['facts']} facts (static {s['static_facts']}, "
               f"temporal {s['temporal_facts']}, disputable {s['disputable_facts']}), {s['relations']} relations, "
               f"{s['entities']} entities, {s['answers']} answers, {s['aliases']} aliases, "
               f"{s['query_forms']} query forms, {s['context_templates']} context templates")
    click.echo(f"source: {s['source']}")


@ingest.command("demo")
@click.option("--only", "only", multiple=True, type=click.Choice(["demo", "friend_enemy", "gender"]),
              help="Load only this bundled dataset; repeatable. Default: all three.")
@pass_app
def ingest_demo_cmd(app, only: tuple[str, ...]) -> None:
    """Load the bundled demo datasets: `demo` (real facts + fake entities), `friend_enemy`
    (Table 1 pairs) and `gender` (App. G.2.1 lists). Already-loaded ones are skipped."""
    stats = app.api(write=True).ingest_demo(list(only) or None)
    if not stats:
        click.echo("demo datasets already present; nothing to do")
    for s in stats:
        click.echo(f"ingested dataset '{s['dataset']}': {s['relations']} relations, {s['facts']} facts, "
                   f"{s['entities']} entities, {s['query_forms']} query forms, "
                   f"{s['context_templates']} context templates")


COMMANDS = [ingest]
