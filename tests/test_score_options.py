"""Issue 28, say it once: every option of ``ctxprior score`` is declared once
(``ctxprior.api.score_options()``), and the command line and ``wh.runs.score`` refuse the same bad
value with the same one-line message, leaving the warehouse file byte for byte unchanged."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import pytest
from scoring_helpers import tiny_folder  # noqa: F401 (fixture)

import ctxprior
from ctxprior.api import Runs, score_options
from ctxprior.cli import cli
from ctxprior.errors import UserError

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)

# API keyword -> (a bad value, the same value on the command line (None: the API's own), message)
BAD = {
    "dtype": ("float8", ["--dtype", "float8"], "--dtype float8: use auto, float32, bfloat16 or float16"),
    "quantization": ("2bit", None, "quantization 2bit: use 8bit or 4bit"),
    "batch_size": (0, ["--batch-size", "0"], "--batch-size 0: must be at least 1 or auto"),
    "prompt_format": ("json", ["--prompt-format", "json"], "--prompt-format json: use raw or chat"),
    "query_types": (
        ["open", "open"],
        ["--query-types", "open,open"],
        "--query-types open,open: give each value once",
    ),
    "query_forms_per_type": (
        0,
        ["--query-forms-per-type", "0"],
        "--query-forms-per-type 0: must be at least 1",
    ),
    "estimator": (
        "bogus",
        ["--estimator", "bogus"],
        "--estimator bogus: use auto, first-token or answer-set",
    ),
    "outcome_rule": (
        "fuzzy",
        ["--outcome-rule", "fuzzy"],
        "--outcome-rule fuzzy: use recall, exact, prefix or none",
    ),
    "max_new_tokens": (-3, ["--max-new-tokens", "-3"], "--max-new-tokens -3: must be at least 1"),
    "store_topk": (-1, ["--store-topk", "-1"], "--store-topk -1: must be at least 0"),
    "prior_topk": (0, ["--prior-topk", "0"], "--prior-topk 0: must be at least 1"),
    "per_layer": ("both", ["--per-layer", "both"], "--per-layer both: use chi or psi"),
    "shard_size": (0, ["--shard-size", "0"], "--shard-size 0: must be at least 1"),
    "seed": (-1, ["--seed", "-1"], "--seed -1: must be at least 0"),
    "executor": ("dask", ["--executor", "dask"], "--executor dask: use local or ray"),
    "workers": (0, ["--workers", "0"], "--workers 0: must be at least 1"),
    "gpus_per_worker": (-1, ["--gpus-per-worker", "-1"], "--gpus-per-worker -1: must be at least 0"),
}
# more bad values of the same options (what the issue found)
MORE = [
    ("query_types", ["cloze"], ["--query-types", "cloze"], "--query-types cloze: use open or closed"),
    ("query_types", [], ["--query-types", ","], "--query-types : give at least one of open, closed"),
    ("max_new_tokens", 0, ["--max-new-tokens", "0"], "--max-new-tokens 0: must be at least 1"),
    ("shard_size", -2, ["--shard-size", "-2"], "--shard-size -2: must be at least 1"),
    ("seed", 2**70, ["--seed", str(2**70)], f"--seed {2**70}: must be at most 9223372036854775807"),
    ("gpus_per_worker", -0.5, ["--gpus-per-worker", "-0.5"], "--gpus-per-worker -0.5: must be at least 0"),
]
# options with no bad value of the right type that can be told without the warehouse or the model:
# free text, on/off flags, ids checked against the warehouse (their own tests)
FREE = {"sample", "model", "device", "relations", "resume", "fresh", "memorization", "address", "shard_dir"}

CASES = [(name, *BAD[name]) for name in BAD] + MORE


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    wh = ctxprior.open(tmp_path_factory.mktemp("opts") / "w.duckdb", write=True)
    wh.datasets.ingest_demo()
    return wh, wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=1)


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_every_option_of_score_is_walked():
    names = {o.name for o in score_options()}
    assert set(BAD) | FREE == names, sorted(names ^ (set(BAD) | FREE))
    assert not set(BAD) & FREE


@pytest.mark.parametrize("name, value, args, message", CASES, ids=[f"{c[0]}={c[1]!r}" for c in CASES])
def test_the_api_and_the_cli_refuse_a_bad_value_alike(demo, run_cli, name, value, args, message):
    wh, sid = demo
    before = _sha(wh.path)
    with pytest.raises(UserError) as e:
        wh.runs.score(sid, **{name: value}, progress=False, log=None)
    assert str(e.value) == message
    assert _sha(wh.path) == before
    if args is not None:
        r = run_cli("score", "--sample", sid, *args, db=wh.path)
        assert (r.exit_code, r.output) == (2, f"Error: {message}\n")
        assert _sha(wh.path) == before


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


def test_the_api_signature_and_the_cli_options_are_made_from_the_declarations():
    """wh.runs.score's keywords are the declared options, in declared order, with the declared
    defaults (made by ``declared_keywords``, not written again), and each one with a flag is an
    option of `ctxprior score` with that default. When the API and the CLI disagree there is one
    place to edit: ONE_PLACE."""
    params = inspect.signature(Runs.score).parameters
    declared = [o.name for o in score_options()]
    assert list(params) == ["self", *declared, "progress", "log"], ONE_PLACE
    command = {p.name: p for p in cli.commands["score"].params}
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

    monkeypatch.setitem(estimators.ESTIMATORS, "spy", estimators.Estimator("spy", spy, vocab_table=True))
    r = run_cli(
        "score", "--sample", sid, "--model", tiny_folder, "--query-types", "open", "--estimator", "spy",
        "--prior-topk", "3", "--store-topk", "2", "--shard-size", "1", "--quiet", db=wh.path,
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


def test_the_cpu_batch_size_is_said_where_it_is_defined():
    """--batch-size auto on the CPU: the engine, the option's help and docs/scoring.md all say
    scoring/models.py's CPU_BATCH_SIZE (the page's options table is the help: test_docs_tables.py)."""
    from types import SimpleNamespace

    from ctxprior.scoring.engine import auto_batch_size
    from ctxprior.scoring.models import CPU_BATCH_SIZE

    assert auto_batch_size(SimpleNamespace(device="cpu")) == CPU_BATCH_SIZE
    (help_text,) = [o.help for o in score_options() if o.name == "batch_size"]
    assert f"auto ({CPU_BATCH_SIZE} on CPU" in help_text
    docs = (Path(__file__).resolve().parents[1] / "docs" / "scoring.md").read_text()
    assert f"({CPU_BATCH_SIZE} rows on\nthe CPU)" in docs
