"""Issue 35 part 4, every input has a schema: grouped by mechanism, not by probe.

- spec schema: ``ingest table --spec`` is validated by ``ingest/table_spec.Spec`` (pydantic, strict);
- structured-text bounds: ``inputs.py`` reads JSON / YAML with a size, a depth, a count of values with
  aliases expanded (a "billion laughs" file), a digit limit and no duplicated keys;
- manifest schema: ``import parquet`` validates ``manifest.json`` by ``publish/manifest.Manifest``;
- meta schema: ``meta.schema_version`` has one declared form;
- numeric bounds: every number ``Option`` declares a maximum (walked over the source and over every
  declaration reachable at run time), so the CLI and the API refuse a huge value alike;
- design applicability: each ``sample`` option declares the designs it applies to (``applies``);
- paths, names and API types: a NUL byte, a path under a file, the warehouse as ``sql --file``, a
  blank dataset name, an int where text goes.

Each failure is exit code 2 and one line (``Error: ...``), with the warehouse byte for byte unchanged.
"""

from __future__ import annotations

import ast
import hashlib
import json
import time
from pathlib import Path

import duckdb
import pytest

import ctxprior
from ctxprior.api.options import COMMANDS
from ctxprior.errors import UserError
from ctxprior.options import Option

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxprior"
CSV = "q,g,c\nWhat is the capital of France?,Paris,Paris is the capital.\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A small warehouse: the demo datasets, one sample."""
    wh = ctxprior.open(tmp_path_factory.mktemp("schemas") / "w.duckdb", write=True)
    wh.datasets.ingest_demo()
    wh.samples.draw("demo", relations=["capital"], entities=2, contexts=6, seed=1)
    return wh


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _one_line(r) -> str:
    """The message of a refused command: exit code 2 and exactly one line."""
    assert r.exit_code == 2, r.output
    assert r.output.startswith("Error: ") and r.output.count("\n") == 1, r.output
    return r.output.removeprefix("Error: ").rstrip("\n")


def _refused_alike(run_cli, wh, cli_args, api_call, expected: str) -> None:
    """The CLI and the API refuse with one line holding ``expected``; the warehouse is unchanged."""
    before = _sha(wh.path)
    message = _one_line(run_cli(*cli_args, db=wh.path))
    assert expected in message, message
    if api_call is not None:
        with pytest.raises(UserError) as e:
            api_call()
        assert str(e.value) == message and "\n" not in str(e.value)
    assert _sha(wh.path) == before


# -- spec schema ---------------------------------------------------------------------------------

SPECS = [
    ("question: 5\n", "question must be a string (got 5)"),
    ("contexts: 5\n", "contexts must be a list (got 5)"),
    ("item: true\n", "item must be a string (got True)"),
    ("labels: 5\n", "labels must be a mapping (got 5)"),
    ("labels: [1]\n", "labels: must be a list of LABEL or LABEL=TYPE strings"),
    ("relations: {REL: 5}\n", "relations.REL must be a mapping (got 5)"),
    ("relations: {REL: {query_templates: 5}}\n", "relations.REL.query_templates must be a list (got 5)"),
    ("relations: {5: {}}\n", "relations: key 5 must be a string"),
    ("5: question\n", "key 5 must be a string"),
    ("contexts: [5]\n", "contexts[0]: must be a mapping {type, text, answer} or TYPE=TEXT_COLUMN"),
    ("contexts: [{type: gold, text: 5}]\n", "contexts[0].text must be a string (got 5)"),
    ("contexts: [{type: gold, text: c, extra: 1}]\n", "unknown key 'extra'"),
    ("query_templates: [5]\n", "query_templates[0] must be a string (got 5)"),
    ("context_templates: {gold: 5}\n", "context_templates.gold must be a list (got 5)"),
    ("separator: 5\n", "separator must be a string (got 5)"),
    ("bogus: 1\n", "unknown key 'bogus'"),
    ("- a\n- b\n", "expected a mapping of option names to values"),
    ("question: q\nquestion: r\n", "the key 'question' appears twice"),
    # issue 42 item 10: a NUL byte the same option on the command line refuses
    ('query_format: "Q: {question}\\0"\n', "query_format holds a NUL byte"),
    ('labels: {"a\\0": gold}\n', "labels holds a NUL byte"),
    ('labels: ["a=b\\0"]\n', "labels.a holds a NUL byte"),
    ('relations: {R: {query_templates: ["x\\0"]}}\n', "relations.R.query_templates[0] holds a NUL byte"),
]


@pytest.mark.parametrize("text, expected", SPECS, ids=[s[0].strip()[:30] for s in SPECS])
def test_spec_schema_refuses_wrong_types_naming_the_field(demo, run_cli, tmp_path, text, expected):
    (tmp_path / "t.csv").write_text(CSV)
    (tmp_path / "s.yaml").write_text(text)
    spec, data = str(tmp_path / "s.yaml"), str(tmp_path / "t.csv")
    _refused_alike(
        run_cli,
        demo,
        ["ingest", "table", data, "--spec", spec],
        lambda: demo.datasets.ingest("table", data, spec=spec),
        f"--spec {spec}: {expected}",
    )


@pytest.mark.quick
def test_a_valid_spec_still_loads_with_each_spelling(tmp_path):
    (tmp_path / "t.csv").write_text(CSV)
    (tmp_path / "s.yaml").write_text(
        "question: q\ngold: g\ncontexts: ['gold=c', {type: other, text: c}]\nlabels: [gold]\n"
    )
    wh = ctxprior.open(tmp_path / "w.duckdb", write=True)
    wh.datasets.ingest("table", str(tmp_path / "t.csv"), spec=str(tmp_path / "s.yaml"))
    assert wh.sql("SELECT count(*) AS n FROM fixed_context")["n"].tolist() == [2]


# -- structured-text bounds ----------------------------------------------------------------------


def _billion_laughs() -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    return "\n".join(lines) + "\ncontexts: *i\n"


BOUNDED = [
    ("laughs.yaml", _billion_laughs(), "holds more than 1,000,000 values (YAML aliases expanded)"),
    ("deep.yaml", "question: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 64 levels deep"),
    ("deep.json", '{"question": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than 64 levels deep"),
    ("digits.json", '{"question": ' + "9" * 5000 + "}", "an integer of 5000 digits (at most 30)"),
    ("digits.yaml", "question: " + "9" * 5000 + "\n", "an integer of 5000 digits (at most 30)"),
    ("twice.json", '{"question": "q", "question": "r"}', "the key 'question' appears twice"),
]


@pytest.mark.parametrize("name, text, expected", BOUNDED, ids=[b[0] for b in BOUNDED])
def test_structured_text_is_read_with_bounds(demo, run_cli, tmp_path, name, text, expected):
    (tmp_path / "t.csv").write_text(CSV)
    (tmp_path / name).write_text(text)
    spec, data = str(tmp_path / name), str(tmp_path / "t.csv")
    start = time.monotonic()
    _refused_alike(
        run_cli,
        demo,
        ["ingest", "table", data, "--spec", spec],
        lambda: demo.datasets.ingest("table", data, spec=spec),
        f"--spec {spec}: {expected}",
    )
    assert time.monotonic() - start < 30  # the billion laughs ran 50 s into a MemoryError


@pytest.mark.quick
@pytest.mark.parametrize(
    "value, expected",
    [
        ("[" * 10_000 + "]" * 10_000, "--var x: nested more than 64 levels deep"),
        ("9" * 5000, "--var x: an integer of 5000 digits (at most 30)"),
    ],
    ids=["deep", "digits"],
)
def test_sql_var_json_is_bounded(demo, run_cli, value, expected):
    _refused_alike(
        run_cli,
        demo,
        ["sql", "SELECT getvariable('x')", "--var", f"x={value}"],
        lambda: demo.query("SELECT getvariable('x')", {"x": value}),
        expected,
    )


@pytest.mark.quick
@pytest.mark.parametrize(
    "source, name, text, expected",
    [
        ("table", "big.jsonl", '{"q": "x", "g": ' + "9" * 5000 + ', "c": "y"}\n', "integer too long to read"),
        ("table", "big.json", '[{"q": "x", "g": ' + "9" * 5000 + ', "c": "y"}]', "integer too long to read"),
        ("table", "deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("yago-qec", "deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("yago-qec", "big.json", '{"a": ' + "9" * 5000 + "}", "integer too long to read"),
    ],
    ids=["jsonl digits", "json digits", "jsonl deep", "yago deep", "yago digits"],
)
def test_data_files_with_huge_integers_or_deep_nesting_are_one_line(
    demo, run_cli, tmp_path, source, name, text, expected
):
    (tmp_path / name).write_text(text)
    data = str(tmp_path / name)
    mapping = ["--question", "q", "--gold", "g", "--context", "gold=c"] if source == "table" else []
    kwargs = {"question": "q", "gold": "g", "contexts": ["gold=c"]} if source == "table" else {}
    _refused_alike(
        run_cli,
        demo,
        ["ingest", source, data, *mapping],
        lambda: demo.datasets.ingest(source, data, **kwargs),
        expected,
    )


@pytest.mark.quick
def test_relations_file_is_read_with_the_same_bounds(tmp_path):
    from ctxprior.ingest.kg_relations import read_relations

    (tmp_path / "r.yaml").write_text(_billion_laughs().replace("contexts: *i", "relations: *i"))
    with pytest.raises(UserError, match="holds more than 1,000,000 values"):
        read_relations(tmp_path / "r.yaml")


# -- manifest schema -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(demo, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    demo.parquet.export(out)
    return out


def _tampered(manifest: dict, case: str) -> dict:
    m = json.loads(json.dumps(manifest))
    table = next(i for i, e in enumerate(m["tables"]) if e["kind"] == "table" and e["files"])
    if case == "format_version":
        m["format_version"] = "x"
    elif case == "schema_version":
        m["schema_version"] = "abc"
    elif case == "rows":
        m["tables"][table]["rows"] = "many"
    elif case == "entry":
        m["tables"][table] = 5
    elif case == "name":
        del m["tables"][table]["name"]
    elif case == "sha256":
        del m["tables"][table]["files"][0]["sha256"]
    elif case == "huge":
        m["tables"][table]["rows"] = 2**70
    return m


MANIFESTS = [
    ("format_version", "format_version must be an integer (got 'x')"),
    ("schema_version", "schema_version must be an integer (got 'abc')"),
    ("rows", ".rows must be an integer (got 'many')"),
    ("entry", "must be a mapping (got 5)"),
    ("name", ".name is missing"),
    ("sha256", ".files[0].sha256 is missing"),
    ("huge", ".rows: input should be less than or equal to"),
]


@pytest.mark.parametrize("case, expected", MANIFESTS, ids=[m[0] for m in MANIFESTS])
def test_manifest_schema_refuses_a_tampered_manifest(run_cli, exported, tmp_path, case, expected):
    import shutil

    folder = tmp_path / "in"
    shutil.copytree(exported, folder)
    manifest = json.loads((exported / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps(_tampered(manifest, case)))
    target = ctxprior.open(tmp_path / "t.duckdb", write=True)
    target.info()  # the file exists, empty
    _refused_alike(
        run_cli,
        target,
        ["import", "parquet", folder],
        lambda: target.parquet.load(folder),
        f"{folder / 'manifest.json'}: ",
    )
    message = _one_line(run_cli("import", "parquet", folder, db=target.path))
    assert expected in message, message


# -- meta schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["abc", "2.0", "", " 3", "9" * 40])
def test_meta_schema_version_has_one_declared_form(demo, run_cli, tmp_path, value):
    import shutil

    path = tmp_path / "m.duckdb"
    shutil.copy(demo.path, path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [value])
    con.close()
    before = _sha(path)
    for args in (["info"], ["sql", "SELECT 1"], ["sample", "--dataset", "demo"], ["migrate"]):
        message = _one_line(run_cli(*args, db=str(path)))
        assert "meta.schema_version" in message and "is not a schema version" in message, message
    with pytest.raises(UserError, match="is not a schema version"):
        ctxprior.open(path).info()
    assert _sha(path) == before


@pytest.mark.quick
def test_a_view_in_place_of_a_table_is_one_line(demo, run_cli, tmp_path):
    import shutil

    path = tmp_path / "v.duckdb"
    shutil.copy(demo.path, path)
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE reliance")
    con.execute("CREATE VIEW reliance AS SELECT 1 AS x")
    con.close()
    before = _sha(path)
    assert "view reliance" in _one_line(run_cli("info", db=str(path)))
    assert _sha(path) == before


# -- numeric bounds ------------------------------------------------------------------------------


def _numeric_calls() -> list[tuple[str, int, str, list[str]]]:
    """(file, line, option name, keywords) of every ``Option(...)`` in the source whose kind is a number."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Option":
                kw = {k.arg: k.value for k in node.keywords}
                if getattr(kw.get("kind"), "id", None) in ("int", "float"):
                    name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
                    out.append(
                        (str(path.relative_to(SRC)), node.lineno, name, sorted(kw))
                    )  # sorted: the same test ids in every process (pytest-xdist)
    return out


@pytest.mark.quick
@pytest.mark.parametrize("where, line, name, keywords", _numeric_calls(), ids=lambda v: str(v))
def test_every_numeric_option_declaration_has_an_upper_bound(where, line, name, keywords):
    assert "maximum" in keywords, f"{where}:{line}: Option {name!r} declares no maximum"


def _declared() -> list[tuple[str, Option]]:
    """Every declared number option reachable at run time: each command's, sql's printing options,
    the API-only ones, each data source's params."""
    from ctxprior.ingest.demo import DEMO_CORPUS_OPTIONS
    from ctxprior.scoring.options import MOST_SUSCEPTIBLE_OPTIONS

    groups = {c: ctxprior.api.command_options(c) for c in COMMANDS}
    groups["sql"] = ctxprior.api.print_options()
    groups["most_susceptible"] = MOST_SUSCEPTIBLE_OPTIONS
    groups["write_demo_corpus"] = DEMO_CORPUS_OPTIONS
    for name, source in ctxprior.api.ingest_sources().items():
        groups[f"ingest {name}"] = source.params
    return [(g, o) for g, opts in groups.items() for o in opts if o.kind in (int, float)]


@pytest.mark.quick
@pytest.mark.parametrize("group, opt", _declared(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_every_declared_number_refuses_a_huge_value(group, opt):
    assert opt.maximum is not None, f"{group}: {opt.label} has no maximum"
    for huge in (opt.maximum + 1, 2**70, float("inf")):
        if opt.kind is int and isinstance(huge, float):
            continue
        with pytest.raises(UserError) as e:
            opt.check((huge,) if opt.multiple else huge)
        assert "must be at most" in str(e.value) or "at most" in str(e.value), str(e.value)


@pytest.mark.quick
@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda wh: wh.runs.most_susceptible(2**70), "run 1180591620717411303424: must be at most"),
        (lambda wh: wh.runs.most_susceptible(1, n=2**70), "must be at most"),
        (lambda wh: wh.samples.draw("demo", seed=2**70), "--seed 1180591620717411303424: must be at most"),
        (
            lambda wh: wh.datasets.write_demo_corpus("c.jsonl.zst", n_documents=10**12),
            "must be at most 1000000",
        ),
        (lambda wh: wh.datasets.write_demo_corpus("c.jsonl.zst", n_documents=-1), "must be at least 1"),
        (lambda wh: wh.runs.score(2**70, model="m"), "--sample 1180591620717411303424: must be at most"),
        (lambda wh: wh.runs.score(1, model=5), "--model 5: expected text, got int"),
        (lambda wh: wh.covariates.known(1, max_new_tokens=100_000_000), "--max-new-tokens 100000000"),
        (lambda wh: wh.query("SELECT 1", {"x": 5}), "variables must be a mapping of a string to a string"),
        (lambda wh: wh.samples.draw(5), "dataset must be a string"),
    ],
    ids=[
        "most_susceptible run",
        "most_susceptible n",
        "draw seed",
        "demo corpus 10**12",
        "demo corpus -1",
        "score sample",
        "score model int",
        "known max-new-tokens",
        "query variables",
        "draw dataset int",
    ],
)
def test_api_arguments_of_the_wrong_type_or_size_are_one_line(demo, tmp_path, monkeypatch, call, expected):
    monkeypatch.chdir(tmp_path)
    before = _sha(demo.path)
    with pytest.raises(UserError) as e:
        call(demo)
    assert expected in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert _sha(demo.path) == before
    assert not (tmp_path / "c.jsonl.zst").exists()


@pytest.mark.quick
def test_the_cli_refuses_a_huge_number_in_one_line(demo, run_cli):
    _refused_alike(
        run_cli,
        demo,
        ["covariates", "known", "--run", "1", "--max-new-tokens", "100000000"],
        None,
        "--max-new-tokens 100000000: must be at most",
    )
    _refused_alike(run_cli, demo, ["sample", "--dataset", "demo", "--seed", "9" * 5000], None, "--seed")


@pytest.mark.quick
def test_the_global_wait_has_an_upper_bound(demo, run_cli):
    before = _sha(demo.path)
    assert "must be at most 604800 seconds" in _one_line(run_cli("--wait", "99999999", "info", db=demo.path))
    for wait in (2**70, 10**5000):
        with pytest.raises(UserError, match="must be at most 604800 seconds"):
            ctxprior.open(demo.path, wait=wait)
    assert _sha(demo.path) == before


# -- design applicability ------------------------------------------------------------------------


def _not_applying() -> list:
    from ctxprior.sampling.draw import DESIGNS, SAMPLE_OPTIONS

    out = []
    for opt in SAMPLE_OPTIONS:
        if opt.applies is None:
            continue
        other, allowed = opt.applies
        assert other == "design"
        value = (
            7
            if opt.kind is int
            else next(n for n in opt.names() if n != opt.default)
            if opt.names() and not opt.listed
            else ("base",)
            if opt.listed
            else ("capital",)
        )
        for design in DESIGNS:
            if design not in allowed:
                out.append(pytest.param(opt, value, design, id=f"{opt.name}-with-{design}"))
    return out


@pytest.mark.quick
@pytest.mark.parametrize("opt, value, design", _not_applying())
def test_an_option_that_does_not_apply_to_the_design_is_refused(demo, run_cli, opt, value, design):
    texts = value if isinstance(value, tuple) and opt.multiple else (opt.text(value),)
    args = ["sample", "--dataset", "demo", "--design", design]
    for t in texts:
        args += [opt.flag, str(t)]
    _refused_alike(
        run_cli,
        demo,
        args,
        lambda: demo.samples.draw("demo", design=design, **{opt.name: value}),
        f"{opt.flag} {opt.text(value)}: only with --design ",
    )


@pytest.mark.quick
def test_the_issue_probe_fixed_with_entities_and_contexts(demo, run_cli):
    _refused_alike(
        run_cli,
        demo,
        ["sample", "--dataset", "demo", "--design", "fixed", "--entities", "5", "--contexts", "600"],
        lambda: demo.samples.draw("demo", design="fixed", entities=5, contexts=600),
        "--entities 5: only with --design paper or --design all (not --design fixed)",
    )


# -- paths, names ----------------------------------------------------------------------------------


@pytest.mark.quick
@pytest.mark.parametrize("name", ["", " ", "a\nb", "x" * 129], ids=["empty", "blank", "newline", "long"])
def test_a_dataset_name_has_a_declared_pattern(demo, run_cli, tmp_path, name):
    (tmp_path / "t.csv").write_text(CSV)
    data = str(tmp_path / "t.csv")
    mapping = {"question": "q", "gold": "g", "contexts": ["gold=c"]}
    _refused_alike(
        run_cli,
        demo,
        ["ingest", "table", data, "--question", "q", "--gold", "g", "--context", "gold=c", "--name", name],
        lambda: demo.datasets.ingest("table", data, name=name, **mapping),
        f"--name {name!r}"[:44]
        if len(name) > 40
        else f"--name {name!r}: a dataset name is 1 to 128 characters",
    )


@pytest.mark.quick
def test_sql_file_naming_the_warehouse_is_one_line(demo, run_cli):
    _refused_alike(run_cli, demo, ["sql", "--file", demo.path], None, "is the warehouse")


@pytest.mark.quick
def test_an_output_path_under_a_file_is_one_line(demo, run_cli):
    _refused_alike(
        run_cli,
        demo,
        ["export", "parquet", f"{demo.path}/x"],
        lambda: demo.parquet.export(f"{demo.path}/x"),
        "is a file, not a folder",
    )


@pytest.mark.quick
@pytest.mark.parametrize(
    "call",
    [
        lambda wh: wh.parquet.export("o\x00x"),
        lambda wh: wh.parquet.load("o\x00x"),
        lambda wh: wh.datasets.write_demo_corpus("c\x00.jsonl.zst"),
        lambda wh: wh.covariates.add("t\x00.csv", name="x", on=["entity"]),
        lambda wh: wh.datasets.ingest("table", "t\x00.csv", question="q", gold="g", contexts=["gold=c"]),
        lambda wh: ctxprior.open("w\x00.duckdb").info(),
    ],
    ids=["export", "load", "demo corpus", "covariates add", "ingest table", "open"],
)
def test_a_nul_byte_in_an_api_path_is_one_line(demo, call):
    before = _sha(demo.path)
    with pytest.raises(UserError) as e:
        call(demo)
    assert "NUL byte" in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert _sha(demo.path) == before
