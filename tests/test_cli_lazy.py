"""The command line imports only the command it runs (cli.py, ``commands.found``), and a read-only
open of a warehouse imports neither SQLAlchemy nor the table declarations (storage reads
``schema/tables.sql``): ``ctxprior sql``, ``info`` and ``runs`` start in well under a second, and
``runs prompts`` of a raw-format run loads no model stack."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest

# what a read-only command never imports: the model stack, the warehouse's writers, the data frames
HEAVY = ("torch", "transformers", "sqlalchemy", "pandas", "pyarrow", "scipy", "ctxprior.scoring.engine")


@pytest.mark.quick
def test_the_found_commands_are_the_modules_commands():
    """Which module holds which command, read from the modules' text, is what importing them says."""
    import pkgutil

    from ctxprior import commands

    eager = {}
    for m in pkgutil.iter_modules(commands.__path__):
        for cmd in getattr(importlib.import_module(f"ctxprior.commands.{m.name}"), "COMMANDS", []):
            eager[cmd.name] = m.name
    assert commands.found() == eager


@pytest.mark.quick
def test_every_command_is_listed_and_runs_its_help(run_cli):
    from ctxprior.cli import cli
    from ctxprior.commands import found

    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(found())
    res = run_cli("--help")
    assert res.exit_code == 0
    for name in found():
        assert f"  {name} " in res.output, name
    assert cli.get_command(ctx, "no-such-command") is None


def _imported(args: list[str], cwd) -> list[str]:
    """The heavy modules a real ``ctxprior ARGS`` process imported (printed at its exit)."""
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        f"or m in {HEAVY!r}))))\n"
        "from ctxprior.cli import main\n"
        f"main({args!r})\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_read_only_commands_import_no_heavy_library(demo_db, tmp_path):
    for args in (["sql", "SELECT count(*) FROM v_entity"], ["info"], ["runs"]):
        assert _imported(["--db", demo_db, *args], tmp_path) == [], args


def test_runs_prompts_of_a_raw_run_loads_no_model_stack(demo_db, run_cli, tmp_path):
    """`runs prompts` rebuilds strings (scoring/texts.py): a raw-format run's prompts need neither
    torch nor transformers (a chat-format run loads its tokenizer alone)."""
    from scale_helpers import make_tiny_folder

    tiny = make_tiny_folder(tmp_path / "tiny")
    for args in (
        ("sample", "--dataset", "demo", "--relation", "capital", "--entities", "2", "--contexts", "6"),
        ("score", "--sample", "1", "--model", tiny, "--outcome-rule", "none"),
    ):
        res = run_cli(*args, db=demo_db)
        assert res.exit_code == 0, res.output
    got = _imported(["--db", demo_db, "runs", "prompts", "1", "--limit", "2"], tmp_path)
    assert not [
        m for m in got if m.split(".")[0] in ("torch", "transformers") or m == "ctxprior.scoring.engine"
    ], got


@pytest.mark.quick
def test_a_read_only_open_reads_the_generated_ddl_not_sqlalchemy(demo_db):
    code = (
        "import sys\nfrom ctxprior.storage import open_store\n"
        f"with open_store({demo_db!r}, read_only=True) as s:\n    s.query('SELECT 1')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sqlalchemy', 'ctxprior.schema.core'))))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
