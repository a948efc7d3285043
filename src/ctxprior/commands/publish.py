"""`ctxprior export parquet`, `ctxprior import parquet`, `ctxprior publish`, `ctxprior pull`."""

from __future__ import annotations

import click

from ..api import command_options
from ..errors import UserError
from .app import pass_app
from .options import declared_options


def _mode(merge: bool, replace: bool) -> str:
    if merge and replace:
        raise UserError("--merge and --replace: pass at most one of them")
    return "merge" if merge else "replace" if replace else "fail"


def _print_counts(manifest: dict) -> None:
    """Rows per table/view with rows; the empty ones on one line."""
    for e in manifest["tables"]:
        if e["rows"]:
            click.echo(f"  {e['kind']:5} {e['name']:32} {e['rows']:>12,} rows")
    empty = [e["name"] for e in manifest["tables"] if not e["rows"]]
    if empty:
        click.echo(f"  empty ({len(empty)}): " + ", ".join(empty))
    skipped = [v["name"] for v in manifest.get("skipped_views", [])]
    if skipped:
        click.echo(f"  skipped, cannot be read ({len(skipped)}): " + ", ".join(skipped))


def _print_added(added: dict) -> None:
    for name in sorted(added):
        if added[name]:
            click.echo(f"  {name:32} {added[name]:>12,} rows")


_merge_opt = click.option(
    "--merge",
    is_flag=True,
    help="Add the rows the warehouse lacks (rows with an existing id must be identical).",
)
_replace_opt = click.option(
    "--replace", is_flag=True, help="Delete every row of the warehouse first, then load (one transaction)."
)


@click.group("export")
def export_group() -> None:
    """Export the warehouse to other formats."""


@export_group.command("parquet")
@declared_options(command_options("export parquet"))
@pass_app
def export_parquet_cmd(app, directory, **options) -> None:
    """Write every table (or the chosen tables/views) as Parquet under DIRECTORY, with manifest.json.

    The manifest records the schema and ctxprior versions, the runs included, every column's type,
    and each file's row count and sha256. `ctxprior import parquet DIRECTORY` rebuilds the warehouse.
    """
    manifest = app.api().parquet.export(directory, **options)
    n = sum(len(e["files"]) for e in manifest["tables"])
    click.echo(f"exported {len(manifest['tables'])} table(s)/view(s), {n} file(s) to {directory}")
    _print_counts(manifest)


@click.group("import")
def import_group() -> None:
    """Import data exported by ctxprior."""


@import_group.command("parquet")
@declared_options(command_options("import parquet"))
@_merge_opt
@_replace_opt
@pass_app
def import_parquet_cmd(app, directory, merge, replace) -> None:
    """Rebuild the warehouse from a folder written by `ctxprior export parquet` (or publish).

    Every file's sha256 is checked against manifest.json first. The warehouse (--db) must have no
    rows unless --merge or --replace is given; everything is loaded in one transaction.
    """
    added = app.api(write=True).parquet.load(directory, mode=_mode(merge, replace))
    click.echo(
        f"imported {sum(added.values()):,} rows into {sum(1 for n in added.values() if n)} "
        f"table(s) of {app.db}"
    )
    _print_added(added)


@click.command("publish")
@declared_options(command_options("publish"))
@pass_app
def publish_cmd(app, repo_id, dry_run, **options) -> None:
    """Publish the warehouse as a Hugging Face dataset REPO_ID (OWNER/NAME).

    One config per table and readable view (Parquet under data/<config>/), a dataset card built from
    the warehouse, and manifest.json. One commit; none when the Hub already has identical files.
    """
    res = app.api().hub.publish(repo_id, dry_run=dry_run, log=click.echo, **options)
    if dry_run:
        n = sum(len(e["files"]) for e in res.manifest["tables"])
        click.echo(f"dry run: wrote README.md, manifest.json and {n} Parquet file(s) to {dry_run}")
        _print_counts(res.manifest)
    else:
        _print_counts(res.manifest)
        click.echo(f"https://huggingface.co/datasets/{repo_id}" if not res.url else res.url)
    missing = res.missing_meanings
    if missing:
        click.echo(
            f"note: {len(missing)} column(s) have no meaning in the card: {', '.join(missing[:8])}"
            + (" ..." if len(missing) > 8 else ""),
            err=True,
        )


@click.command("pull")
@declared_options(command_options("pull"))
@_merge_opt
@_replace_opt
@pass_app
def pull_cmd(app, source, merge, replace, **options) -> None:
    """Load a published ctxprior dataset (a local folder, or OWNER/NAME on the Hub) into the warehouse."""
    folder, added = app.api(write=True).hub.pull(source, mode=_mode(merge, replace), **options)
    click.echo(
        f"pulled {sum(added.values()):,} rows into {sum(1 for n in added.values() if n)} table(s) "
        f"of {app.db} from {folder}"
    )
    _print_added(added)


COMMANDS = [export_group, import_group, publish_cmd, pull_cmd]
