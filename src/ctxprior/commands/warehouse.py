"""`ctxprior sql`, `ctxprior info`, `ctxprior migrate`: look into and maintain the warehouse."""

from __future__ import annotations

import os

import click

from ..api import print_options, read_input_text
from ..errors import UserError
from .app import pass_app
from .options import declared_options


@click.command("sql")
@click.argument("query", required=False)
@click.option("--file", "file", type=click.Path(dir_okay=False), help="Run the SQL in this file instead.")
@declared_options(print_options(), names=("fmt",))
@click.option(
    "--var",
    "variables",
    multiple=True,
    metavar="NAME=VALUE",
    help="SET VARIABLE NAME = VALUE before the query (VALUE as JSON, e.g. run_ids=[1,2]); "
    "read it in SQL with getvariable('NAME'). Repeatable.",
)
@declared_options(print_options(), names=("max_rows",))
@click.option(
    "--allow-read",
    "allow_read",
    multiple=True,
    metavar="PATH",
    help="Let the query read this file, or this folder and everything below it (e.g. a CSV "
    "to join); without it the query reads only the warehouse. Repeatable.",
)
@pass_app
def sql_cmd(app, query, file, fmt, variables, max_rows, allow_read) -> None:
    """Run read-only SQL on the warehouse and print the result. Statements that write are refused,
    and the query reads no file but the warehouse unless --allow-read names it.

    Example: ctxprior sql "SELECT relation, count(*) FROM v_entity GROUP BY 1"
    """
    if bool(query) == bool(file):
        raise UserError("give either a QUERY argument or --file FILE")
    if file:
        if not os.path.exists(file):
            raise UserError(f"{file}: no such file")
        query = read_input_text(file, "--file")  # never a FIFO, a device, the warehouse: ctxprior/inputs.py
    vars_ = {}
    for v in variables:
        if "=" not in v:
            raise UserError(f"--var {v}: expected NAME=VALUE")
        k, val = v.split("=", 1)
        vars_[k.strip()] = val
    rows = app.api().query(query, vars_, allow_read=allow_read)
    click.echo(rows.format(fmt, max_rows if fmt == "table" else None))


@click.command("info")
@pass_app
def info_cmd(app) -> None:
    """Show what the warehouse holds: datasets, relations, entities by kind, samples, runs."""
    click.echo(app.api().info())


@click.command("migrate")
@pass_app
def migrate_cmd(app) -> None:
    """Upgrade a warehouse made by an older ctxprior to this version's schema (backs it up first)."""
    from ..api import migrate

    for line in migrate(app.db, wait=app.wait):
        click.echo(line)


COMMANDS = [sql_cmd, info_cmd, migrate_cmd]
