"""Issue 28, say it once: every option of ``ctxprior score`` is declared once
(``ctxprior.api.score_options()``), and the command line and ``wh.runs.score`` refuse the same bad
value with the same one-line message, leaving the warehouse file byte for byte unchanged."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import click
import pytest
from options_helpers import bad_values, refusal
from scoring_helpers import tiny_folder  # noqa: F401 (fixture)

import ctxprior
from ctxprior.api import Runs, score_options
from ctxprior.cli import cli
from ctxprior.errors import UserError

# options with no bad value of the right type that the declaration can tell (free text, on/off
# flags, a repeatable name checked against the sample): options_helpers.bad_values makes none
FREE = {"model", "device", "relations", "fresh", "memorization", "address", "shard_dir"}

# a bad value of every option that declares a check, made from its declaration (choices, range,
# list rules): (API keyword, API value, the same on the command line (None: the API's own))
CASES = [
    pytest.param(o.name, value, [o.flag, text] if o.flag else None, id=f"{o.name}={value!r}")
    for o in score_options()
    for value, text in bad_values(o)
]

# the wording users read, for one option of each kind of check: the problem each of its bad values
# (options_helpers.bad_values, in order) is refused with
WORDING = {
    "dtype": ("use auto, float32, bfloat16 or float16",),
    "quantization": ("use 8bit or 4bit",),
    "estimator": ("use auto, first-token or answer-set",),
    "outcome_rule": ("use recall, exact, prefix or none",),
    "per_layer": ("use chi or psi",),
    "batch_size": ("must be at least 1 or auto", "must be at most 65536 or auto"),
    "store_topk": ("must be at least 0", "must be at most 1000000"),
    "gpus_per_worker": ("must be at least 0", "must be at most 1024.0"),
    "seed": ("must be at least 0", "must be at most 9223372036854775807"),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    wh = ctxprior.open(tmp_path_factory.mktemp("opts") / "w.duckdb", write=True)
    wh.datasets.ingest_demo()
    return wh, wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=1)


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.quick
def test_every_option_of_score_is_walked():
    names = {o.name for o in score_options()}
    walked = {c.values[0] for c in CASES}
    assert walked | FREE == names, sorted(names ^ (walked | FREE))
    assert not walked & FREE


@pytest.mark.parametrize("name, value, args", CASES)
def test_the_api_and_the_cli_refuse_a_bad_value_alike(demo, run_cli, name, value, args):
    wh, sid = demo
    opt = next(o for o in score_options() if o.name == name)
    message = refusal(opt, value)
    before = _sha(wh.path)
    keywords = {"sample": value} if name == "sample" else {"sample": sid, name: value}
    with pytest.raises(UserError) as e:
        wh.runs.score(**keywords, progress=False, log=None)
    assert str(e.value) == message
    assert _sha(wh.path) == before
    if args is not None:
        r = run_cli("score", "--sample", sid, *args, db=wh.path)  # a second --sample wins
        assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
        assert _sha(wh.path) == before


@pytest.mark.quick
@pytest.mark.parametrize("name, problems", WORDING.items())
def test_the_messages_say_what_is_allowed(name, problems):
    opt = next(o for o in score_options() if o.name == name)
    messages = [refusal(opt, value) for value, _text in bad_values(opt)]
    assert messages == [f"{opt.label} {text}: {p}" for (_v, text), p in zip(bad_values(opt), problems)]
    assert len(messages) == len(problems)
    assert opt.check(opt.default) == opt.default  # and the default passes


@pytest.mark.quick
def test_a_list_option_names_its_problem():
    opt = next(o for o in score_options() if o.name == "query_types")
    messages = [refusal(opt, value) for value, _text in bad_values(opt)]
    assert messages == [
        "--query-types open,open: give each value once",
        "--query-types : give at least one of open, closed",
        "--query-types bogus: use open or closed",
    ]


@pytest.mark.quick
def test_cli_spellings_are_refused_in_one_line(demo, run_cli):
    wh, sid = demo
    before = _sha(wh.path)
    for args, message in [
        (["--batch-size", "many"], "--batch-size many: expected an integer or auto"),
        (["--load-in-8bit", "--load-in-4bit"], "--load-in-8bit and --load-in-4bit: choose one"),
    ]:
        r = run_cli("score", "--sample", sid, *args, db=wh.path)
        assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
    assert _sha(wh.path) == before


ONE_PLACE = (
    "edit the option's one declaration, SCORE_OPTIONS in src/ctxprior/scoring/options.py: "
    "wh.runs.score's keywords, ctxprior score's options and ScoreConfig's defaults are made from it"
)


@pytest.mark.quick
def test_the_api_signature_and_the_cli_options_are_made_from_the_declarations():
    """wh.runs.score's keywords are the declared options, in declared order, with the declared
    defaults (made by ``declared_keywords``, not written again), and each one with a flag is an
    option of `ctxprior score` with that default. When the API and the CLI disagree there is one
    place to edit: ONE_PLACE."""
    params = inspect.signature(Runs.score).parameters
    declared = [o.name for o in score_options()]
    assert list(params) == ["self", *declared, "progress", "log"], ONE_PLACE
    command = {p.name: p for p in cli.get_command(click.Context(cli), "score").params}
    for opt in score_options():
        assert params[opt.name].default == opt.default, ONE_PLACE
        if opt.flag:
            assert opt.flag in command[opt.name].opts, ONE_PLACE
            assert command[opt.name].default in (opt.default, opt.text(opt.default), ()), ONE_PLACE
    from ctxprior.scoring.options import ScoreConfig

    fields = ScoreConfig.__dataclass_fields__
    assert set(fields) - set(declared) == {"prompt_template", "prompt_template_sha256"}, ONE_PLACE
    for name in set(fields) & set(declared):
        assert fields[name].default == params[name].default, ONE_PLACE


@pytest.mark.quick
def test_an_undeclared_keyword_is_refused(demo):
    wh, sid = demo
    with pytest.raises(TypeError, match="query_forms"):  # the flag is --query-types, the keyword query_types
        wh.runs.score(sid, query_forms=["open"], progress=False, log=None)


def test_options_reach_the_estimator_under_their_declared_names(demo, run_cli, tiny_folder, monkeypatch):
    """--prior-topk and --store-topk reach the estimator as prior_topk / store_topk, --shard-size
    is the run's ScoreConfig.shard_size (the units' size): one name from the command line down."""
    from ctxprior.scoring import estimators

    wh, sid = demo
    seen: list[dict] = []
    first = estimators.ESTIMATORS["first-token"]

    def spy(engine, unit, **kw):
        seen.append(kw)
        return first.run(engine, unit, **kw)

    monkeypatch.setattr(estimators, "ESTIMATORS", estimators.ESTIMATORS.copy())
    estimators.register_estimator(estimators.Estimator("spy", spy, vocab_table=True))
    r = run_cli(
        "score", "--sample", sid, "--model", tiny_folder, "--query-types", "open", "--estimator", "spy",
        "--prior-topk", "3", "--store-topk", "2", "--shard-size", "1", "--outcome-rule", "none", "--quiet",
        db=wh.path,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    run = int(wh.sql("SELECT max(run_id) AS r FROM run")["r"][0])
    assert seen and all((k["prior_topk"], k["store_topk"]) == (3, 2) for k in seen)
    units = wh.sql("SELECT count(*) AS n FROM run_unit WHERE run_id = ?", [run])["n"][0]
    pairs = wh.sql(
        "SELECT count(DISTINCT (query_form_id, fact_id)) AS n FROM susceptibility WHERE run_id = ?", [run]
    )["n"][0]
    assert len(seen) == units == pairs  # one entity per unit
    assert wh.sql("SELECT max(rank) AS k FROM prior_topk WHERE run_id = ?", [run])["k"][0] == 3


@pytest.mark.quick
def test_the_cpu_batch_size_is_said_where_it_is_defined():
    """--batch-size auto on the CPU: the engine, the option's help and docs/scoring.md all say
    scoring/models.py's CPU_BATCH_SIZE (the page's options table is the help: test_docs_tables.py)."""
    from types import SimpleNamespace

    from ctxprior.scoring.models import CPU_BATCH_SIZE
    from ctxprior.scoring.sizing import auto_batch_size

    assert auto_batch_size(SimpleNamespace(device="cpu")) == CPU_BATCH_SIZE
    (help_text,) = [o.help for o in score_options() if o.name == "batch_size"]
    assert f"auto ({CPU_BATCH_SIZE} on CPU" in help_text
    docs = (Path(__file__).resolve().parents[1] / "docs" / "scoring.md").read_text()
    assert f"({CPU_BATCH_SIZE} rows on\nthe CPU)" in docs
