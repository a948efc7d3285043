"""The `ctxprior` command line. Thin: every command parses options and calls a library function.

Command groups live in ``ctxprior/commands/<area>.py``; each module lists its click commands in
``COMMANDS`` and is picked up here, so areas add commands without editing this file. A module is
imported when one of its commands runs (or ``--help`` lists them all): which module holds which
command is read from the modules' text (``commands.found``), so ``ctxprior sql`` never imports the
scoring engine, torch or the other commands' libraries.
"""

from __future__ import annotations

import importlib
import sys

import click

from .commands.app import AppContext, summary
from .errors import WARNINGS_ENV, UserError
from .inputs import command_warehouse
from .storage.store import DB_ENV, DEFAULT_DB
from .version import __version__


class UserErrorExit(click.ClickException):
    """A UserError as click sees it: printed as 'Error: ...', exit code 2."""

    exit_code = 2


class App(click.Group):
    """The root group: its commands load on first use (module docstring)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .commands import found

        return sorted(set(self.commands) | set(found()))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            from .commands import found

            if name in found():
                _load(found()[name])
        return self.commands.get(name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as e:
            raise UserErrorExit(e.cli_message()) from None
        except click.BadParameter as e:  # a bad value (a folder for a file, ...): one line, not a usage block
            if isinstance(e, click.MissingParameter):
                raise
            raise UserErrorExit(e.format_message()) from None


@click.group(cls=App, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--db",
    envvar=DB_ENV,
    default=DEFAULT_DB,
    show_default=True,
    metavar="PATH",
    help=f"Warehouse file (DuckDB). Also set by ${DB_ENV}.",
)
@click.option(
    "--wait",
    type=float,
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="Keep retrying this long when another process is writing the warehouse.",
)
@click.option(
    "--verbose",
    is_flag=True,
    help=f"Also show the libraries' own notices and progress bars (deprecation warnings, "
    f"transformers' loading bars), which are hidden otherwise; the same as {WARNINGS_ENV}=1.",
)
@click.version_option(__version__, prog_name="ctxprior")
@click.pass_context
def cli(ctx: click.Context, db: str, wait: float, verbose: bool) -> None:
    """ctxprior: measure how much a language model follows its context versus its prior.

    Datasets go into a DuckDB warehouse, scoring runs write persuasion (KL) and
    susceptibility (mutual information) scores back, and analyses run as SQL.
    """
    if verbose:
        _verbose()
    command_warehouse(db)  # inputs are compared with it before they are opened (ctxprior/inputs.py)
    ctx.obj = AppContext(db=db, wait=wait)


def _summarize(cmd: click.Command) -> None:
    """Give ``cmd`` and its subcommands a whole summary (``commands.app.summary``) unless they
    declare one (a group that makes its commands when used, ``ingest``, calls ``summary`` itself)."""
    if cmd.short_help is None and cmd.help:
        cmd.short_help = summary(cmd.help)
    for sub in getattr(cmd, "commands", {}).values():
        _summarize(sub)


def _load(module_name: str) -> None:
    """Import ``commands.<module_name>`` and add its ``COMMANDS`` to the root group."""
    module = importlib.import_module(f"{__package__}.commands.{module_name}")
    for cmd in getattr(module, "COMMANDS", []):
        _summarize(cmd)
        cli.add_command(cmd)


def _quiet_exit(code: int) -> None:
    """Exit; DuckDB 2's nanobind bindings may list 'leaked' objects at interpreter shutdown,
    which is noise for a user, so stderr is closed once everything of ours is printed."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    except OSError:
        pass
    sys.exit(code)


def _verbose() -> None:
    """``--verbose``: the libraries' notices show again, and their loading bars stay on."""
    import os
    import warnings

    os.environ[WARNINGS_ENV] = "1"  # read by scoring.models.quiet_loading
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("default", category=category)


def _quiet_libraries() -> None:
    """Deprecation notices of the libraries ctxprior drives (transformers, torch, datasets, ...)
    are addressed to ctxprior's developers, not to the person at the console: the command line
    hides them unless ``CTXPRIOR_WARNINGS=1`` or Python's ``-W`` option says otherwise.
    ctxprior's own warnings, and every library's errors, still show."""
    import os
    import warnings

    if os.environ.get(WARNINGS_ENV) == "1" or sys.warnoptions:
        return
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
        warnings.filterwarnings("default", category=category, module=r"ctxprior(\.|$)")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
    _quiet_libraries()
    try:
        rv = cli.main(args=argv, prog_name="ctxprior", standalone_mode=False)
    except UserError as e:
        click.echo(f"Error: {e.cli_message()}", err=True)
        _quiet_exit(2)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        _quiet_exit(130)
    except KeyboardInterrupt:
        click.echo("Interrupted; committed work is kept (resume with the same command).", err=True)
        _quiet_exit(130)
    except click.ClickException as e:
        e.show()
        _quiet_exit(e.exit_code)
    except click.exceptions.Exit as e:
        _quiet_exit(e.exit_code)
    _quiet_exit(rv if isinstance(rv, int) else 0)
