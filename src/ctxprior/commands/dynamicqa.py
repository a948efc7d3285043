"""DynamicQA commands: `ingest dynamicqa`, `sample-dynamic`, `score-dynamic`, `analyze-dynamic`."""

from __future__ import annotations

import click

from ..cli import pass_app
from ..commands.ingest import ingest as ingest_group


@click.command("dynamicqa")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--name", default="dynamicqa", show_default=True, help="Dataset name in the warehouse.")
@pass_app
def ingest_dynamicqa_cmd(app, directory: str, name: str) -> None:
    """Load DynamicQA from DIRECTORY (Static_final.csv, Temporal_final.csv, Disputable_final.csv):
    facts, aliases, replacement objects, edit counts, popularity, questions and masked contexts."""
    from ..ingest.dynamicqa import ingest_dynamicqa, read_dynamicqa

    read_dynamicqa(directory)  # validate every file before opening the warehouse for writing
    with app.open() as wh:
        s = ingest_dynamicqa(wh, directory, name=name)
    click.echo(f"ingested dataset '{s['dataset']}': {s['facts']} facts (static {s['static_facts']}, "
               f"temporal {s['temporal_facts']}, disputable {s['disputable_facts']}), {s['relations']} relations, "
               f"{s['entities']} entities, {s['answers']} answers, {s['aliases']} aliases, "
               f"{s['query_forms']} query forms, {s['context_templates']} context templates")


ingest_group.add_command(ingest_dynamicqa_cmd)


@click.command("sample-dynamic")
@click.option("--dataset", default="dynamicqa", show_default=True, help="DynamicQA dataset name.")
@click.option("--partition", default="static,temporal,disputable", show_default=True,
              help="Comma list of partitions.")
@click.option("--limit", type=int, default=None, help="First N facts per partition (file order). Default: all.")
@pass_app
def sample_dynamic_cmd(app, dataset: str, partition: str, limit: int | None) -> None:
    """Store a sample for `ctxprior score --sample S`: the chosen facts with their original and
    counter-memory snippets as contexts. Reuses an identical existing sample. Prints the id last."""
    from ..ingest.dynamicqa import make_sample

    with app.open() as wh:
        sid = make_sample(wh, dataset, partition, limit)
        n_f, n_c = wh.query("SELECT (SELECT count(*) FROM sample_fact WHERE sample_id = ?), "
                            "(SELECT count(*) FROM context WHERE sample_id = ?)", [sid, sid])[0]
    click.echo(f"sample {sid}: dataset '{dataset}', {n_f} facts, {n_c} contexts (original + counter per fact)")
    click.echo(str(sid))


COMMANDS = [sample_dynamic_cmd]
