"""`ctxprior covariates ...`: corpus co-occurrence, KG degrees and user tables as SQL-joinable covariates."""

from __future__ import annotations

import click

from ..api import command_options
from .app import pass_app
from .options import declared_options


@click.group()
def covariates() -> None:
    """Covariates joinable in SQL: each one gets a view cov_<name> with readable keys
    (dataset, relation, entity, answer) next to its values."""


@covariates.command(
    "cooccurrence",
    short_help="Count how often each fact's entity and answer occur near each other in CORPUS.",
)
@declared_options(command_options("covariates cooccurrence"))
@pass_app
def cooccurrence_cmd(app, corpus, text_field, **options) -> None:
    """Count, for every fact, how often its entity and answer occur within WINDOW words of each
    other in CORPUS (.jsonl, .jsonl.zst, .jsonl.gz or .txt files, or folders of them), and each
    name's own frequency. Resumable: a rerun skips shards already counted under NAME."""
    from ..errors import UserError

    rep = app.api(write=True).covariates.cooccurrence(list(corpus), text_field=text_field, **options)
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


@covariates.command(
    "kg-degree", short_help="Relation-dependent KG degree of every entity, counted over TRIPLES."
)
@declared_options(command_options("covariates kg-degree"))
@pass_app
def kg_degree_cmd(app, triples, **options) -> None:
    """Relation-dependent KG degree delta(e,q) = |{a:(e,q,a)} U {a:(a,q,e)}| of every warehouse
    entity (by URI) and its total degree, computed by DuckDB over TRIPLES (optionally .gz)."""
    rep = app.api(write=True).covariates.kg_degree(list(triples), **options)
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
@declared_options(command_options("covariates known"))
@pass_app
def known_cmd(app, run, **options) -> None:
    """The model's own familiarity with each entity (Ferrando et al., ICLR 2025, §3): the run's
    model answers the run's open queries with no context. Rule ferrando (default, as the paper's
    released code does it): per attribute (an entity's facts in one relation, asked with the
    relation's first open query form) one greedy answer, labelled correct (fuzzy names, numbers
    within 2), refusal or error; an entity with n attributes is known with at least max(2, n-1)
    correct and none refused, unknown with none correct, left out (partial) otherwise. Rule
    ctxprior-samples: --samples answers sampled per attribute at --temperature, correct when at
    least --min-correct match; known with at least --min-attributes correct attributes. Rule
    greedy-majority: one greedy answer per open query form, known when at least half are correct.
    The ctxprior rules match a gold answer in the first line (case, punctuation, a/an/the
    ignored)."""
    rep = app.api(write=True).covariates.known(run, **options)
    for line in _known_lines(rep):
        click.echo(line)
    if rep.get("unchanged"):
        click.echo("already computed for this run with these options; nothing to do (--replace asks again)")


def _known_lines(rep: dict) -> list[str]:
    """What `covariates known` prints for its report."""
    head = f"{rep['view']}: run {rep['run_id']}, rule {rep['rule']}"
    if rep["rule"] == "greedy-majority":
        return [
            f"{head}: {rep['n_correct']} of {rep['n_answers']} closed-book answers correct; "
            f"{rep['n_entities']} entities: {rep['n_known']} known, {rep['n_unknown']} unknown, "
            f"{rep['n_partial']} partial"
        ]
    if rep["rule"] == "ferrando":
        lines = [
            f"{head} (released code's labels, greedy, {rep['max_new_tokens']} tokens): "
            f"{rep['n_correct_attributes']} of {rep['n_attributes']} attributes correct, "
            f"{rep['n_refused_attributes']} refused",
            f"{rep['n_entities']} entities: {rep['n_known']} known (>= max(2, n-1) of n correct, none "
            f"refused), {rep['n_unknown']} unknown (none correct), {rep['n_partial']} left out",
        ]
        need = "2"
    else:
        lines = [
            f"{head} ({rep['samples']} samples at temperature {rep['temperature']:g}, seed "
            f"{rep['seed']}): {rep['n_correct_attributes']} of {rep['n_attributes']} attributes correct "
            f"(>= {rep['min_correct']} matching samples; {rep['n_correct']} of {rep['n_answers']} samples "
            "match)",
            f"{rep['n_entities']} entities: {rep['n_known']} known (>= {rep['min_attributes']} correct "
            f"attributes), {rep['n_unknown']} unknown (none), {rep['n_partial']} left out",
        ]
        need = str(rep["min_attributes"])
    if rep["n_too_few_attributes"]:
        lines.append(
            f"{rep['n_too_few_attributes']} entities have fewer than {need} attributes asked: they can be "
            "unknown or left out, never known"
        )
    return lines


@covariates.command("add")
@declared_options(command_options("covariates add"))
@click.option(
    "--show-unmatched", default=20, show_default=True, type=int, help="List at most this many unmatched keys."
)
@pass_app
def add_cmd(app, data, show_unmatched, **options) -> None:
    """Load a user table (CSV or Parquet) keyed by warehouse names or URIs as covariate NAME."""
    rep = app.api(write=True).covariates.add(data, **options)
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
