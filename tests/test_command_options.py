"""Issue 28, say it once: every option of every command is declared once
(``ctxprior.api.command_options(command)``, listed in ``ctxprior.api.options.COMMANDS``), and the
command line and the command's API method refuse the same bad value with the same one-line
message, leaving the warehouse file byte for byte unchanged and creating no missing one.

The bad values are made from the declarations (a name not among the choices, a number out of range,
a list with a repeated or no value: tests/options_helpers.py), so a new option with a check is
walked without a line here."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import click
import pytest
from options_helpers import bad_values, refusal

import ctxprior
from ctxprior.api.options import COMMANDS
from ctxprior.cli import cli
from ctxprior.errors import UserError

# Leaf commands without declared options, and why.
WITHOUT_OPTIONS = {
    "info": "no options",
    "migrate": "no options: `ctxprior.migrate(path)`",
    "covariates list": "no options",
    "sql": "QUERY or --file, --var NAME=VALUE and --allow-read are the CLI's spellings of "
    "Warehouse.query's arguments, with no check of their own; --format and --max-rows are "
    "sqlshell.PRINT_OPTIONS, checked by Rows.format (test_sql_printing_options_...)",
    "ingest": "each data source declares its own parameters (ingest/registry.py, test_ingest_registry.py)",
}

# A valid call of each command: the API's keyword arguments (the options that need a value) and the
# same on the command line (API keyword -> text); the walk replaces one of them by a bad value.
VALID: dict[str, dict] = {
    "score": {"sample": 1},
    "sample": {"dataset": "demo"},
    "analyze": {},
    "export parquet": {"directory": "out"},
    "import parquet": {"directory": "out"},
    "publish": {"repo_id": "me/data"},
    "pull": {"source": "out"},
    "sample-dynamic": {},
    "score-dynamic": {},
    "analyze-dynamic": {},
    "fakes generate": {"dataset": "demo", "relation": "capital"},
    "fakes add": {"path": "names.txt", "dataset": "demo", "relation": "capital"},
    "fakes list": {"dataset": "demo"},
    "build-dataset": {"triples": ("kg.nt",), "name": "kg", "relations": "relations.yaml"},
    "figures": {"out": "figures"},
    "report": {},
    "demo": {},
    "runs resume": {"run": 1},
    "runs cancel": {"run": 1},
    "runs prompts": {"run": 1},
    "quick": {"model": "smollm2-135m", "query": "{entity} is", "entities": ["Paris"], "contexts": ["x\n"]},
    "covariates cooccurrence": {"corpus": ("corpus.jsonl",), "name": "cooc"},
    "covariates kg-degree": {"triples": ("kg.nt",), "name": "deg"},
    "covariates known": {"run": 1},
    "covariates add": {"data": "table.csv", "name": "mine", "on": ("entity",)},
}
# what a command line needs besides its declared options (the API takes the lists themselves)
CLI_EXTRA = {"quick": ["--entities-file", "entities.txt", "--contexts-file", "contexts.txt"]}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A small warehouse: the demo datasets, one sample."""
    wh = ctxprior.open(tmp_path_factory.mktemp("opts") / "w.duckdb", write=True)
    wh.datasets.ingest_demo()
    wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=1)
    return wh


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cases():
    for command, _ in COMMANDS.items():
        for opt in ctxprior.api.command_options(command):
            for value, text in bad_values(opt):
                yield pytest.param(command, opt, value, text, id=f"{command}:{opt.name}={value!r}")


def _method(wh, command: str):
    """The API method of ``command``: ``noun.method`` of a Warehouse, a Warehouse method, or a function."""
    where = COMMANDS[command][2]
    if "." in where:
        noun, name = where.split(".")
        return getattr(getattr(wh, noun), name)
    return getattr(wh, where, None) or getattr(ctxprior, where)


def _cli_args(command: str, values: dict) -> list[str]:
    """The command line of ``command`` with these values (API keyword -> text)."""
    args = command.split()
    for opt in ctxprior.api.command_options(command):
        if opt.name not in values:
            continue
        texts = values[opt.name] if isinstance(values[opt.name], tuple) else (values[opt.name],)
        for t in texts:
            args += [str(t)] if opt.argument else [opt.flag, str(t)]
    return args + CLI_EXTRA.get(command, [])


@pytest.mark.parametrize("command, opt, value, text", list(_cases()))
def test_the_api_and_the_cli_refuse_a_bad_value_alike(demo, run_cli, tmp_path, command, opt, value, text):
    message = refusal(opt, value)
    before = _sha(demo.path)
    with pytest.raises(UserError) as e:
        _method(demo, command)(**{**VALID[command], opt.name: value})
    assert str(e.value) == message
    assert _sha(demo.path) == before
    missing = tmp_path / "missing.duckdb"
    with pytest.raises(UserError):
        _method(ctxprior.open(missing, write=True), command)(**{**VALID[command], opt.name: value})
    assert not missing.exists()
    if opt.flag or opt.argument:  # else an API-only option (the CLI has its own spelling)
        r = run_cli(*_cli_args(command, {**VALID[command], opt.name: text}), db=demo.path)
        assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
        assert _sha(demo.path) == before


@pytest.mark.quick
@pytest.mark.parametrize(
    "command, opt",
    [
        pytest.param(c, o, id=f"{c}:{o.name}")
        for c in COMMANDS
        for o in ctxprior.api.command_options(c)
        if o.kind in (int, float) and not o.choices
    ],
)
def test_a_number_option_refuses_text(demo, run_cli, command, opt):
    what = "an integer" if opt.kind is int else "a number"
    message = f"{opt.label} many: expected {what}" + (" or auto" if opt.auto else "")
    r = run_cli(*_cli_args(command, {**VALID[command], opt.name: "many"}), db=demo.path)
    assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
    with pytest.raises(UserError):  # the API's type check (or the declaration's) names it
        _method(demo, command)(**{**VALID[command], opt.name: "many"})


@pytest.mark.quick
def test_most_susceptible_checks_its_arguments(demo):
    """The API-only method's declared checks, with bad values made from the declarations."""
    from ctxprior.scoring.options import MOST_SUSCEPTIBLE_OPTIONS

    cases = [(o, v) for o in MOST_SUSCEPTIBLE_OPTIONS for v, _text in bad_values(o)]
    assert {o.name for o, _ in cases} == {"run", "n"}
    for opt, value in cases:
        with pytest.raises(UserError) as e:
            demo.runs.most_susceptible(**{"run": 1, opt.name: value})
        assert str(e.value) == refusal(opt, value)


@pytest.mark.quick
def test_every_command_has_a_valid_call():
    assert set(VALID) == set(COMMANDS), sorted(set(COMMANDS) ^ set(VALID))


def _function(command: str):
    """The API method of ``command`` as a function (its signature), without a warehouse."""
    from ctxprior.api.warehouse import Warehouse

    where = COMMANDS[command][2]
    if "." in where:
        noun, name = where.split(".")
        return getattr(getattr(Warehouse, noun), name)
    return getattr(Warehouse, where, None) or getattr(ctxprior, where)


# API parameters whose None stands for the declared default
NONE_IS_DEFAULT = {
    ("sample-dynamic", "partitions"): "None: every partition (as stored in the sample's key)",
    ("score-dynamic", "partitions"): "None: every partition (as stored in the run's config)",
}


@pytest.mark.quick
@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_api_defaults_are_the_declared_ones(command):
    """Each declared option that is a parameter of the API method has the declared default."""
    params = inspect.signature(_function(command)).parameters
    for opt in ctxprior.api.command_options(command):
        p = params.get(opt.name)
        if p is None or p.default is inspect.Parameter.empty or (command, opt.name) in NONE_IS_DEFAULT:
            continue
        default, declared = p.default, opt.default
        if opt.listed or opt.multiple:  # a list: None and () are both "none given"
            default, declared = tuple(default or ()), tuple(declared or ())
        assert default == declared, (command, opt.name)


def _leaves(group: click.Group, prefix: str = ""):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, full + " ")
        else:
            yield full


@pytest.mark.quick
def test_every_command_declares_its_options_or_has_none():
    leaves = set(_leaves(cli))
    ingest = {c for c in leaves if c.startswith("ingest ")}  # the data sources' own declarations
    unlisted = leaves - set(COMMANDS) - set(WITHOUT_OPTIONS) - ingest
    assert not unlisted, sorted(unlisted)
    assert not set(WITHOUT_OPTIONS) - leaves - {"ingest"}, sorted(set(WITHOUT_OPTIONS) - leaves)


def _printing_cases():
    from ctxprior.sqlshell import PRINT_OPTIONS

    for opt in PRINT_OPTIONS:
        for value, text in bad_values(opt):
            yield pytest.param(opt.flag, text, refusal(opt, value), id=f"{opt.flag}={text}")
    yield pytest.param("--max-rows", "-1", "--max-rows -1: must be at least 1", id="--max-rows=-1")


@pytest.mark.quick
@pytest.mark.parametrize("flag, text, message", list(_printing_cases()))
def test_sql_printing_options_are_refused_alike_by_the_cli_and_rows_format(
    demo, run_cli, flag, text, message
):
    """`ctxprior sql --max-rows -1` printed "... 3 more rows" of 2 rows; the printing options are
    declared once (sqlshell.PRINT_OPTIONS) and Rows.format checks them as the CLI does."""
    from ctxprior.sqlshell import PRINT_OPTIONS

    r = run_cli("sql", "SELECT 1 AS a UNION ALL SELECT 2", flag, text, db=demo.path)
    assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
    opt = next(o for o in PRINT_OPTIONS if o.flag == flag)
    rows = demo.query("SELECT 1 AS a UNION ALL SELECT 2")
    with pytest.raises(UserError) as e:
        rows.format(**{opt.name: opt.parse(text)})
    assert str(e.value) == message
    r = run_cli("fakes", "list", "--dataset", "demo", "--format", "xml", db=demo.path)
    assert (r.exit_code, r.output) == (2, "Error: --format xml: use table, csv or json\n")
    assert rows.format(max_rows=1).splitlines()[-2:] == [
        "... 1 more row (use --format csv for all)",
        "(2 rows)",
    ]


@pytest.mark.quick
def test_a_required_option_left_out_is_refused_by_click(run_cli, tmp_path):
    """A declared ``required`` option has no default at all (click 8.3+ took the explicit None as
    given, and ``quick`` without --query ended in an AttributeError traceback)."""
    (tmp_path / "e.txt").write_text("Paris\n")
    (tmp_path / "c.txt").write_text("The capital is Rome.\n")
    r = run_cli("quick", "--entities-file", tmp_path / "e.txt", "--contexts-file", tmp_path / "c.txt")
    assert r.exit_code == 2 and "Missing option '--query'" in r.output
