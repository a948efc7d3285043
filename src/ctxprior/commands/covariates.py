"""`ctxprior covariates ...`: corpus co-occurrence, KG degrees and user tables as SQL-joinable covariates."""

from __future__ import annotations

import click

from .app import pass_app


@click.group()
def covariates() -> None:
    """Covariates joinable in SQL: each one gets a view cov_<name> with readable keys
    (dataset, relation, entity, answer) next to its values."""


@covariates.command("cooccurrence")
@click.argument("corpus", nargs=-1, required=True, type=click.Path())
@click.option("--name", required=True, help="Covariate name (view cov_<name>), e.g. pile_cooc.")
@click.option(
    "--window",
    default=50,
    show_default=True,
    type=int,
    help="Co-occur when the later name starts at most this many words after the earlier one ends.",
)
@click.option("--dataset", default=None, help="Count the facts of this dataset only (default: all datasets).")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: worker processes on this machine; ray: Ray tasks (one per shard file).",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Parallel worker processes (local) or CPUs of the local Ray instance. Default: all CPUs.",
)
@click.option(
    "--address",
    default=None,
    help="Ray cluster address (e.g. ray://head:10001 or auto); default: start a local Ray instance.",
)
@click.option("--ignore-case", is_flag=True, help="Lower-case names and text before matching.")
@click.option(
    "--punctuation",
    type=click.Choice(["delete", "space"]),
    default="delete",
    show_default=True,
    help="Remove punctuation (the paper's rule: U.S. -> US) or replace it by a space (Hilton's -> Hilton s).",
)
@click.option("--text-field", default="text", show_default=True, help="JSON field holding the document text.")
@click.option(
    "--restart", is_flag=True, help="Drop the counts already stored under this name and count from scratch."
)
@click.option("--description", default=None, help="Free text stored in the catalog.")
@pass_app
def cooccurrence_cmd(
    app,
    corpus,
    name,
    window,
    dataset,
    executor,
    workers,
    address,
    ignore_case,
    punctuation,
    text_field,
    restart,
    description,
) -> None:
    """Count, for every fact, how often its entity and answer occur within WINDOW words of each
    other in CORPUS (.jsonl, .jsonl.zst, .jsonl.gz or .txt files, or folders of them), and each
    name's own frequency. Resumable: a rerun skips shards already counted under NAME."""
    from ..errors import UserError

    rep = app.api(write=True).covariates.cooccurrence(
        list(corpus),
        name=name,
        window=window,
        dataset=dataset,
        executor=executor,
        workers=workers,
        address=address,
        ignore_case=ignore_case,
        punctuation=punctuation,
        text_field=text_field,
        restart=restart,
        description=description,
    )
    mb = rep.bytes_text / 1e6
    click.echo(
        f"{rep.view}: {rep.n_facts} facts, {rep.n_names} names, {rep.n_pairs} entity-answer pairs "
        f"({rep.pairs_seen} rows with co-occurrence > 0)"
    )
    click.echo(
        f"shards: {rep.shards_counted} counted, {rep.shards_skipped} already counted (skipped), "
        f"{len(rep.failed)} failed, of {rep.shards_total}"
    )
    if rep.shards_counted:
        click.echo(
            f"counted {rep.n_documents} documents, {rep.n_words} words, {mb:.1f} MB "
            f"({rep.bytes_counted / 1e6:.1f} MB of files) in {rep.seconds:.1f} s "
            f"({mb / max(rep.seconds, 1e-9):.1f} MB/s)"
        )
    if rep.n_unnamed:
        click.echo(
            f"note: {rep.n_unnamed} facts have an entity or answer with no words after removing "
            "punctuation; their counts are NULL"
        )
    if rep.n_bad_json or rep.n_missing_text:
        click.echo(
            f"skipped {rep.n_bad_json} non-JSON lines and {rep.n_missing_text} lines without a "
            f"string '{text_field}' field, e.g. " + "; ".join(rep.bad_examples[:3])
        )
    if rep.failed:
        raise UserError(
            f"{len(rep.failed)} shard(s) failed and were not stored: {rep.failed[0]}"
            + (f" (and {len(rep.failed) - 1} more)" if len(rep.failed) > 1 else "")
            + "; fix or remove them and rerun the same command (counted shards are kept)"
        )


@covariates.command("kg-degree")
@click.argument("triples", nargs=-1, required=True, type=click.Path())
@click.option("--name", required=True, help="Covariate name (view cov_<name>), e.g. yago_degree.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "nt", "ttl", "tsv"]),
    default="auto",
    show_default=True,
    help="Triple format: N-Triples, Turtle with one triple per line, or TSV (subject, predicate, object).",
)
@click.option("--dataset", default=None, help="Attach degrees to this dataset's facts only (default: all).")
@click.option("--replace", is_flag=True, help="Replace an existing covariate of this name.")
@click.option("--description", default=None, help="Free text stored in the catalog.")
@pass_app
def kg_degree_cmd(app, triples, name, fmt, dataset, replace, description) -> None:
    """Relation-dependent KG degree delta(e,q) = |{a:(e,q,a)} U {a:(a,q,e)}| of every warehouse
    entity (by URI) and its total degree, computed by DuckDB over TRIPLES (optionally .gz)."""
    rep = app.api(write=True).covariates.kg_degree(
        list(triples), name=name, fmt=fmt, dataset=dataset, replace=replace, description=description
    )
    click.echo(
        f"{rep['view']}: read {rep['n_triples']} triples from {rep['n_files']} file(s); "
        f"{rep['n_entities_found']} of {rep['n_entity_uris']} entity URIs found, "
        f"{rep['n_facts_with_degree']} of {rep['n_facts']} facts have a relation degree"
    )
    if rep.get("unchanged"):
        click.echo("already computed from the same file(s); nothing to do")
    elif rep.get("n_unparsed_lines"):
        click.echo(f"skipped {rep['n_unparsed_lines']} line(s) that are not {rep.get('format', '')} triples")


@covariates.command("known")
@click.option(
    "--run", "run_id", required=True, type=int, help="Persuasion run whose model answers (its open queries)."
)
@click.option("--name", default=None, help="Covariate name (view cov_<name>); default known_r<run>.")
@click.option(
    "--max-new-tokens",
    default=16,
    show_default=True,
    type=int,
    help="Length of each greedy closed-book answer.",
)
@click.option(
    "--device", default="auto", show_default=True, help="Where the model runs: auto, cpu, cuda, mps."
)
@click.option(
    "--batch-size", default=None, type=int, help="Prompts per batch (default: from the model size)."
)
@click.option(
    "--replace", is_flag=True, help="Replace an existing covariate of this name (answers asked again)."
)
@pass_app
def known_cmd(app, run_id, name, max_new_tokens, device, batch_size, replace) -> None:
    """The model's own familiarity with each entity (Ferrando et al. 2025): the run's model answers
    each of the run's open queries with no context (greedy); an answer is correct when a gold answer
    occurs in its first line (case, punctuation and a/an/the ignored). An entity is known when at
    least half of its answers are correct, unknown when none is, partial otherwise."""
    rep = app.api(write=True).covariates.known(
        run_id,
        name=name,
        max_new_tokens=max_new_tokens,
        device=device,
        batch_size=batch_size,
        replace=replace,
    )
    click.echo(
        f"{rep['view']}: run {rep['run_id']}: {rep['n_correct']} of {rep['n_answers']} closed-book answers "
        f"correct; {rep['n_entities']} entities: {rep['n_known']} known, {rep['n_unknown']} unknown, "
        f"{rep['n_partial']} partial"
    )
    if rep.get("unchanged"):
        click.echo("already computed for this run; nothing to do (--replace asks again)")


@covariates.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--name", required=True, help="Covariate name (view cov_<name>).")
@click.option(
    "--on",
    "on",
    required=True,
    help="Key columns of FILE, comma-separated, from dataset,relation,entity,answer (e.g. entity,answer).",
)
@click.option(
    "--match",
    "match",
    type=click.Choice(["name", "uri"]),
    default="name",
    show_default=True,
    help="Match entity/answer/relation values against names or URIs.",
)
@click.option("--replace", is_flag=True, help="Replace an existing covariate of this name.")
@click.option("--description", default=None, help="Free text stored in the catalog.")
@click.option(
    "--show-unmatched", default=20, show_default=True, type=int, help="List at most this many unmatched keys."
)
@pass_app
def add_cmd(app, file, name, on, match, replace, description, show_unmatched) -> None:
    """Load a user table (CSV or Parquet) keyed by warehouse names or URIs as covariate NAME."""
    rep = app.api(write=True).covariates.add(
        file, on=on, name=name, match=match, replace=replace, description=description
    )
    if rep.get("unchanged"):
        click.echo(
            f"{rep['view']}: already added from the same file (sha256 {rep['sha256'][:12]}); nothing to do"
        )
        return
    click.echo(
        f"{rep['view']}: {rep['n_matched']} of {rep['n_rows']} rows matched warehouse keys "
        f"({rep['n_facts']} facts); value columns: {', '.join(rep['value_columns'])}"
    )
    if rep["unmatched"]:
        click.echo(f"{len(rep['unmatched'])} unmatched key(s):")
        for k in rep["unmatched"][:show_unmatched]:
            click.echo("  " + ", ".join(f"{c}={v!r}" for c, v in k.items()))
        if len(rep["unmatched"]) > show_unmatched:
            click.echo(f"  ... and {len(rep['unmatched']) - show_unmatched} more")


@covariates.command("list")
@pass_app
def list_cmd(app) -> None:
    """Show the covariate catalog."""
    df = app.api().covariates.list()
    if df.empty:
        click.echo("no covariates yet")
        return
    import pandas as pd

    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_colwidth", 40):
        click.echo(df.drop(columns=["description"]).to_string(index=False))


COMMANDS = [covariates]
