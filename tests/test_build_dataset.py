"""`ctxprior build-dataset`: the triple reader, relations.yaml validation, the build itself
(cross-checked against a naive Python reference), bad input, and build -> sample -> score."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import shutil
from importlib import resources
from pathlib import Path

import duckdb
import kg_reference as ref
import pytest
import yaml

from ctxprior.covariates.triples import TripleFiles
from ctxprior.errors import UserError
from ctxprior.ingest.kg_build import BuildOptions, build_dataset, literal_value, local_name, unescape
from ctxprior.ingest.kg_relations import read_relations
from ctxprior.storage import open_store

FIXTURE = Path(__file__).parent / "fixtures" / "kg"
TRIPLES = FIXTURE / "countries.nt"
LABELS_DE = FIXTURE / "labels_de.nt"
EXAMPLE = str(resources.files("ctxprior.ingest").joinpath("data/kg_relations.yaml"))
Y = "http://yago-knowledge.org/resource/"


# -- the triple reader ----------------------------------------------------------------------------

TRICKY = [
    "<http://a/s> <http://a/p> <http://a/o> .",
    '<http://a/s> <http://a/p> "lit" .',
    '<http://a/s>\t<http://a/p>\t"tab separated"@en\t.',
    "<http://a/s>  <http://a/p>   <http://a/o>  .",  # doubled separators -> regex path
    "   <http://a/s> <http://a/p> <http://a/o> .",  # leading white space
    "<http://a/s> <http://a/p> <http://a/o>.",  # no space before the dot
    "<http://a/s> <http://a/p> <http://a/o>",  # no dot at all
    '<http://a/s> <http://a/p> "ends with a dot."@en .',
    '<http://a/s> <http://a/p> "ends with a dot.".',
    '<http://a/s> <http://a/p> "quote \\" inside" .',
    '<http://a/s> <http://a/p> "back\\\\slash" .',
    '<http://a/s> <http://a/p> "typed"^^<http://www.w3.org/2001/XMLSchema#string> .',
    '<http://a/s> <http://a/p> "a b c"@en-GB .',
    '<http://a/s> <http://a/p> "unterminated .',
    '<http://a/s> <http://a/p> "x" "y" .',
    "<http://a/s> <http://a/p> <http://a/o> <http://a/extra> .",
    "<http://a/s> <http://a/p> .",
    "<http://a/s with space> <http://a/p> <http://a/o> .",  # spaces inside an IRI (the regex allows them)
    '"literal subject" <http://a/p> <http://a/o> .',
    "_:b0 <http://a/p> _:b1 .",
    "yago:France yago:capital yago:Paris .",
    "yago:France\tyago:capital\tyago:Paris\t.",
    "yago:France a schema:Country .",
    "yago:Y yago:p yago:Z.",
    "unknown:X yago:p bare .",
    "this is not a triple",
    "<http://a/s> <http://a/p> <http://a/o> . # trailing comment",
    "<http://a/s>\t<http://a/p> <http://a/o> .",  # mixed tab and space
    '<http://a/s> <http://a/p> "tab\tinside" .',
    '<http://a/s> <http://a/p> "é ü 中文"@zh .',
    "# a comment",
    "\t# an indented comment",
    "   ",
    "",
    "@prefix ex: <http://example.org/> .",
    "PREFIX ex2: <http://example.org/2/>",
    "ex:A ex2:b ex:C .",
]


def _random_lines(n: int, seed: int = 0) -> list[str]:
    """Lines glued from term-like pieces with random separators (valid and broken ones)."""
    rng = random.Random(seed)
    pieces = [
        "<http://x/a>",
        "<http://x/b c>",
        "<http://x/d>e>",
        '"v"',
        '"v w"@en',
        '"q\\"q"',
        '"t"^^xsd:int',
        "_:n1",
        "yago:Q",
        "a",
        "bare",
        '"',
        "<",
        ".",
        '"x.".',
        "ex:A.",
        '"@en',
        "<http://x/é>",
        '"a\\\\"',
    ]
    seps = [" ", " ", " ", "\t", "  ", " \t"]
    out = []
    for _ in range(n):
        k = rng.choice([2, 3, 3, 3, 3, 4])
        terms = [rng.choice(pieces) for _ in range(k)]
        line = rng.choice(["", "", " "]) + "".join(t + rng.choice(seps) for t in terms[:-1]) + terms[-1]
        out.append(line + rng.choice([" .", " .", "\t.", ".", "", " . ", "  ."]))
    return out


def _duckdb_parse(path: Path, fmt: str = "auto") -> list:
    con = duckdb.connect()
    tf = TripleFiles(con, [str(path)], fmt)
    rows = con.execute(
        f"SELECT line_no, s, p, o FROM ({tf.sql(line_numbers=True)}) ORDER BY line_no"
    ).fetchall()
    con.close()
    return rows


def _reference_parse(path: Path) -> list:
    prefixes = dict(ref.DEFAULTS)
    fmt = ref.fmt_of(str(path))
    if fmt == "ttl":
        for line in ref.lines(str(path)):
            m = ref.PREFIX.match(line)
            if m:
                prefixes[m.group(1)] = m.group(2)
    out = []
    for i, line in enumerate(ref.lines(str(path)), 1):
        r = ref.parse_line(line, fmt)
        if r is None:
            continue
        if r != "bad" and fmt != "tsv" and any(ref.undeclared(x, prefixes) for x in r):
            r = "bad"
        out.append((i, None, None, None) if r == "bad" else (i, *(ref.expand(x, prefixes) for x in r)))
    return out


@pytest.mark.parametrize("suffix", [".nt", ".ttl", ".nt.gz"])
def test_reader_matches_the_regex_reference(tmp_path, suffix):
    """The SQL fast path + regex fallback accepts exactly the lines the full regex accepts, with the
    same terms, and line numbers count every line (blank ones too)."""
    text = "\n".join(TRICKY + _random_lines(3000)) + "\n"
    p = tmp_path / f"g{suffix}"
    p.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    got, want = _duckdb_parse(p), _reference_parse(p)
    assert len(want) > 2500 and sum(r[1] is None for r in want) > 300  # both kinds are exercised
    assert got == want


def test_reader_tsv_and_turtle_prefixes(tmp_path):
    p = tmp_path / "g.tsv"
    p.write_text(
        f"{Y}France\t{Y}capital\t{Y}Paris\nyago:France\tyago:capital\tyago:Lyon .\n"
        "only\ttwo\n\t\t\n# comment\n<x>\t<y>\t<z>\textra\n"
    )
    assert (
        _duckdb_parse(p)
        == _reference_parse(p)
        == [
            (1, Y + "France", Y + "capital", Y + "Paris"),
            (2, Y + "France", Y + "capital", Y + "Lyon"),
            (3, None, None, None),
            (6, "x", "y", "z"),
        ]
    )
    p = tmp_path / "crlf.nt"
    p.write_bytes(b'<http://a/s> <http://a/p> "x" .\r\n\r\n# c\r\n<http://a/s> <http://a/p> <http://a/o>\r\n')
    assert (
        _duckdb_parse(p)
        == _reference_parse(p)
        == [(1, "http://a/s", "http://a/p", '"x"'), (4, "http://a/s", "http://a/p", "http://a/o")]
    )
    p = tmp_path / "g.ttl"
    p.write_text("yago:A yago:p yago:B .\n@prefix yago: <http://other/> .\n")  # applies to the whole file
    assert _duckdb_parse(p) == [(1, "http://other/A", "http://other/p", "http://other/B")]
    p.write_text("@prefix x: <http://one/> .\n@prefix x: <http://two/> .\nx:A x:p x:B .\n")
    with pytest.raises(UserError, match="prefix 'x:' is defined twice"):
        _duckdb_parse(p)


def test_line_numbers_stay_exact_on_a_large_file(tmp_path):
    """Line numbers come from an order-preserving read: check them on a file DuckDB reads in parallel."""
    n = 300_000
    bad = {17, 123_457, n - 3}
    lines = (
        "<broken line" if i in bad else f"<http://x/e{i}> <http://x/p> <http://x/o{i % 97}> ."
        for i in range(1, n + 1)
    )
    p = tmp_path / "big.nt"
    p.write_text("\n".join(lines) + "\n")
    con = duckdb.connect()
    tf = TripleFiles(con, [str(p)])
    rows = con.execute(f"SELECT line_no, s FROM ({tf.sql(line_numbers=True)})").fetchall()
    assert sorted(r[0] for r in rows if r[1] is None) == sorted(bad)
    assert all(r[1] == f"http://x/e{r[0]}" for r in rows if r[1] is not None)


def test_unescape_and_local_names():
    assert unescape(r"Chi\u0219in\u0103u") == "Chișinău"
    assert unescape(r"say \"hi\"\tnow \\ \U0001F600") == 'say "hi"\tnow \\ \U0001f600'
    assert literal_value('"68000000"^^<http://www.w3.org/2001/XMLSchema#integer>') == "68000000"
    assert literal_value(r'"a \"b\""@en') == 'a "b"'
    assert local_name(Y + "Rio_Negro_(Amazon)") == "Rio Negro (Amazon)"
    assert local_name("http://x.org/ont#Caf%C3%A9_Bar") == "Café Bar"
    assert local_name("urn:isbn:123") == "123"
    assert local_name("http://www.wikidata.org/entity/Q42") == "Q42"


# -- relations.yaml ------------------------------------------------------------------------------

GOOD = {
    "relations": [
        {
            "predicate": "yago:capital",
            "name": "capital",
            "query_forms": {
                "open": ["Capital of {entity}:"],
                "closed": ["Is {answer} the capital of {entity}?"],
            },
            "context_templates": {"base": "The capital of {entity} is {answer}.\n"},
        }
    ]
}


def _with(path_value, value):
    d = json.loads(json.dumps(GOOD))
    node = d
    for k in path_value[:-1]:
        node = node[k]
    if value is KeyError:
        del node[path_value[-1]]
    else:
        node[path_value[-1]] = value
    return d


BAD_RELATIONS = [
    (_with(["relations", 0, "predicat"], "yago:x"), "unknown key 'predicat'; did you mean 'predicate'?"),
    (_with(["colour"], "red"), "top level: unknown key 'colour'"),
    (
        _with(["relations", 0, "context_templates", "base"], "The capital is {answer}.\n"),
        "has no {entity} placeholder",
    ),
    (
        _with(["relations", 0, "context_templates", "base"], "The capital of {entity}.\n"),
        "has no {answer} placeholder",
    ),
    (_with(["relations", 0, "query_forms", "open"], ["What is the capital?"]), "has no {entity} placeholder"),
    (
        _with(["relations", 0, "query_forms", "open"], ["Is {answer} the capital of {entity}?"]),
        "open templates may only use {entity}",
    ),
    (
        _with(["relations", 0, "query_forms", "closed"], ["Capital of {entity}?"]),
        "has no {answer} placeholder",
    ),
    (_with(["relations", 0, "query_forms", "closed"], KeyError), "missing key 'closed'"),
    (
        _with(["relations", 0, "context_templates", "asertive"], "x {entity} {answer}"),
        "did you mean 'assertive'?",
    ),
    (
        _with(["relations", 0, "context_templates"], {"negation": "{entity} is not {answer}"}),
        "missing key 'base'",
    ),
    (
        _with(["relations", 0, "context_templates", "base"], "The capital of {entty} is {answer}"),
        "uses {entty}",
    ),
    (
        _with(["relations", 0, "context_templates", "base"], "The capital of {entity is {answer}"),
        "broken placeholder",
    ),
    (_with(["relations", 0, "predicate"], "nope:capital"), "unknown prefix 'nope:'"),
    (_with(["relations", 0, "reverse"], "yes please"), "expected true or false"),
    (_with(["relations", 0, "subject_class"], []), "non-empty list"),
    (_with(["relations"], []), "non-empty list of relations"),
    ({"relations": GOOD["relations"] * 2}, "is listed twice"),
]


@pytest.mark.parametrize("data, message", BAD_RELATIONS)
def test_relations_file_validation(tmp_path, data, message):
    p = tmp_path / "relations.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=None) as e:
        read_relations(p)
    assert message in str(e.value) and "\n" not in str(e.value) and str(p) in str(e.value)


def test_relations_file_syntax_problems(tmp_path):
    p = tmp_path / "r.yaml"
    for text, message in [
        ("relations: [\n", "not valid YAML: line"),
        ("relations: []\nrelations: []\n", "duplicate key 'relations'"),
        ("", "is empty"),
        ("- a\n- b\n", "expected a mapping, got list"),
    ]:
        p.write_text(text)
        with pytest.raises(UserError, match=message):
            read_relations(p)
    with pytest.raises(UserError, match="no such relations file"):
        read_relations(tmp_path / "missing.yaml")


def test_bundled_example_is_valid():
    spec = read_relations(EXAMPLE)
    assert [r.short_name for r in spec.relations] == [
        "capital",
        "capital_of",
        "official_language",
        "neighbors",
        "flows_into",
        "demonym",
    ]
    assert spec.relations[1].reverse and spec.relations[1].relation_id == "reverse-" + Y + "capital"
    assert all(
        {t for t, _, _ in r.context_templates} == {"base", "assertive", "negation"} for r in spec.relations
    )


# -- the build ------------------------------------------------------------------------------------


def _build(db: str, name: str = "countries", triples=(TRIPLES,), relations: str = EXAMPLE, **kw):
    labels = kw.pop("labels", ())
    opts = BuildOptions(**kw)
    return build_dataset(
        lambda **o: open_store(db, **o),
        [str(t) for t in triples],
        relations,
        name,
        labels=[str(x) for x in labels],
        options=opts,
        progress=False,
        db_path=db,
    )


def _facts(db: str, name: str) -> dict[str, list[dict]]:
    with open_store(db, read_only=True) as store:
        cur = store.execute(
            """
            SELECT r.short_name AS relation, f.position, e.uri AS entity, e.name AS entity_name, a.uri AS answer_uri,
                   a.name AS answer, f.uri_degree, f.predicate_degree, f.namesake_degree, f.namesake_num_uris
            FROM fact f JOIN relation r USING (relation_id) JOIN dataset d USING (dataset_id)
            JOIN entity e USING (entity_id) JOIN answer a USING (answer_id)
            WHERE d.name = ? ORDER BY r.position, f.position""",
            [name],
        )
        cols = [c[0] for c in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r.pop("relation"), []).append(r)
    return out


def _reference(spec_path: str, triples=(TRIPLES,), **kw) -> dict[str, list[dict]]:
    spec = read_relations(spec_path)
    rels = [(r.predicate, r.reverse, r.subject_classes, r.object_classes) for r in spec.relations]
    lang = kw.get("lang", "en")
    got = ref.build(
        [str(t) for t in triples],
        rels,
        k=kw.get("entities_per_relation", 1000),
        seed=kw.get("seed", 0),
        lang=lang,
        labels_files=[str(x) for x in kw.get("labels", ())],
        require_label=kw.get("require_label", "both"),
        answer_choice=kw.get("answer_choice", "random"),
    )
    out = {}
    for r, facts in zip(spec.relations, got):
        out[r.short_name] = [
            {
                "position": f["position"],
                "entity": f["entity"],
                "entity_name": unescape(f["entity_label"])
                if f["entity_label"] is not None
                else ref.local_name(f["entity"]),
                "answer_uri": None if f["answer"].startswith('"') else f["answer"],
                "answer": literal_value(f["answer"])
                if f["answer"].startswith('"')
                else (
                    unescape(f["answer_label"])
                    if f["answer_label"] is not None
                    else ref.local_name(f["answer"])
                ),
                "uri_degree": f["total_degree"],
                "predicate_degree": f["delta"],
                "namesake_degree": f["namesake_degree"],
                "namesake_num_uris": f["namesake_num_uris"],
            }
            for f in facts
        ]
    return out


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"entities_per_relation": 7, "seed": 3},
        {"entities_per_relation": 7, "seed": 4},
        {"lang": "de", "labels": (LABELS_DE,), "entities_per_relation": 12, "require_label": "none"},
        {"lang": "fr", "require_label": "none"},
        {"require_label": "entity", "entities_per_relation": 30},
        {"require_label": "none", "answer_choice": "degree"},
        {"answer_choice": "degree", "seed": 5},
        {"seed": 5},
    ],
)
def test_build_matches_the_python_reference(db_path, kw):
    _build(db_path, **kw)
    got, want = _facts(db_path, "countries"), _reference(EXAMPLE, **kw)
    assert list(got) == list(want)
    for rel in want:
        assert got[rel] == want[rel], rel


def test_build_facts_are_right(db_path, run_cli):
    r = run_cli("build-dataset", TRIPLES, "--name", "countries", "--relations", EXAMPLE)
    assert r.exit_code == 0, r.output
    assert "built dataset 'countries': 6 relations" in r.output and "read 1,768 triples" in r.output
    f = {rel: {x["entity_name"]: x for x in xs} for rel, xs in _facts(db_path, "countries").items()}
    assert f["capital"]["France"]["answer"] == "Paris"
    assert f["capital"]["Moldova"]["answer"] == "Chișinău"  # \u escapes decoded
    assert "Georgia" in f["capital"] and len([x for x in f["capital"] if x == "Georgia"]) == 1
    assert f["capital"]["Georgia"]["answer"] == "Tbilisi"  # the U.S. state is no schema:Country
    assert f["capital"]["Georgia"]["namesake_num_uris"] == 2  # ... but it is a namesake
    assert f["capital_of"]["Paris"]["namesake_num_uris"] == 2  # Paris, Texas
    assert f["capital_of"]["Monaco"]["answer"] == "Monaco"  # its own capital
    assert f["capital_of"]["Monaco"]["predicate_degree"] == 1
    assert f["flows_into"]["Danube"]["predicate_degree"] == 5  # Black Sea + Inn, Drava, Sava, Tisza
    assert f["demonym"]["Monaco"]["answer"] == "Monégasque" and f["demonym"]["Monaco"]["answer_uri"] is None
    assert f["official_language"]["Switzerland"]["predicate_degree"] == 4
    assert "Atlanta" not in f["capital_of"]
    with open_store(db_path, read_only=True) as store:
        order = store.query("""SELECT e.name FROM fact f JOIN relation r USING (relation_id) JOIN entity e USING (entity_id)
                            WHERE r.short_name = 'demonym' ORDER BY f.position LIMIT 3""")
        assert [x[0] for x in order] == ["Russia", "Germany", "France"]  # the highest total degrees
        assert store.scalar("SELECT count(*) FROM covariate WHERE name = 'countries_degree'") == 1


def test_formats_and_gzip_build_the_same_dataset(db_path, tmp_path):
    """The fixture as gzip, as Turtle with prefixes and as TSV builds the identical dataset."""
    text = TRIPLES.read_text(encoding="utf-8")
    gz = tmp_path / "countries.nt.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    ttl_lines, tsv_lines = ["@prefix y: <http://yago-knowledge.org/resource/> ."], []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        s, p, o = line[:-2].split(" ", 2)
        short = [
            t.replace("<" + Y, "y:")[:-1]
            if t.startswith("<" + Y) and "(" not in t and "," not in t and "." not in t[len(Y) + 1 : -1]
            else t
            for t in (s, p, o)
        ]
        ttl_lines.append("\t".join(short) + "\t.")
        tsv_lines.append("\t".join((s, p, o)))
    ttl = tmp_path / "countries.ttl"
    ttl.write_text("\n".join(ttl_lines) + "\n", encoding="utf-8")
    tsv = tmp_path / "countries.tsv"
    tsv.write_text("\n".join(tsv_lines) + "\n", encoding="utf-8")
    _build(db_path, "nt")
    want = _facts(db_path, "nt")
    for name, path in [("gz", gz), ("ttl", ttl), ("tsv", tsv)]:
        _build(db_path, name, triples=(path,))
        assert _facts(db_path, name) == want, name


def test_kg_degree_covariate_agrees_with_the_build(db_path, run_cli):
    """`covariates kg-degree` over the same triples gives the built facts' degree columns."""
    _build(db_path)
    r = run_cli("covariates", "kg-degree", TRIPLES, "--name", "kg", "--dataset", "countries")
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        rows = store.query("""SELECT c.degree, c.total_degree, f.predicate_degree, f.uri_degree
                           FROM cov_kg c JOIN fact f USING (fact_id)""")
        n_facts = store.scalar("SELECT count(*) FROM fact")
    assert len(rows) == n_facts > 300
    assert all(d == pd and t == ud for d, t, pd, ud in rows)


def test_provenance_rows(db_path, tmp_path):
    rel = tmp_path / "rel.yaml"
    shutil.copy(EXAMPLE, rel)
    _build(
        db_path, triples=(TRIPLES,), relations=str(rel), labels=(LABELS_DE,), entities_per_relation=5, seed=9
    )
    sha = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (TRIPLES, LABELS_DE, rel)}
    with open_store(db_path, read_only=True) as store:
        src = store.query(
            "SELECT role, path, format, sha256, size_bytes, n_lines FROM dataset_source ORDER BY ordinal"
        )
        build = store.query(
            "SELECT relations_sha256, relations_yaml, params_json, stats_json FROM dataset_build"
        )[0]
        ds = store.query("SELECT source_format, source_sha256 FROM dataset")[0]
    assert [r[:3] for r in src] == [
        ("triples", str(TRIPLES), "nt"),
        ("labels", str(LABELS_DE), "nt"),
        ("relations", str(rel), "yaml"),
    ]
    assert [r[3] for r in src] == [sha[TRIPLES], sha[LABELS_DE], sha[rel]]
    assert src[0][4] == TRIPLES.stat().st_size and src[0][5] == 1768 and src[1][5] == 70
    assert build[0] == sha[rel] and build[1] == rel.read_text()
    params = json.loads(build[2])
    assert params["entities_per_relation"] == 5 and params["seed"] == 9 and params["lang"] == "en"
    assert json.loads(build[3])["n_triples"] == 1768
    assert ds[0] == "kg" and ds[1] == hashlib.sha256("\n".join(sorted(sha.values())).encode()).hexdigest()


# -- bad input: one line, exit 2, warehouse unchanged ----------------------------------------------


def _state(db: str):
    with open_store(db, read_only=True) as store:
        return {
            t: store.scalar(f"SELECT count(*) FROM {t}")
            for t in ("dataset", "entity", "fact", "dataset_source")
        }


@pytest.fixture
def base_db(db_path):
    _build(db_path, "existing", entities_per_relation=3)
    return db_path


def _relations_with(tmp_path, **changes) -> str:
    data = yaml.safe_load(Path(EXAMPLE).read_text())
    data["relations"] = data["relations"][:2]
    for k, v in changes.items():
        data["relations"][0][k] = v
    p = tmp_path / f"rel_{len(list(tmp_path.glob('rel_*.yaml')))}.yaml"
    p.write_text(yaml.safe_dump(data))
    return str(p)


def test_bad_input_is_one_line_exit_2_and_changes_nothing(base_db, run_cli, tmp_path):
    before = _state(base_db)
    bad_nt = tmp_path / "bad.nt"
    lines = TRIPLES.read_text().splitlines()
    bad_nt.write_text("\n".join(lines[:10] + ["<not a triple"] * 3 + lines[10:]) + "\n")
    xml = tmp_path / "g.xml.nt"
    xml.write_text("<rdf:RDF>\n</rdf:RDF>\n")
    # out-of-range and unknown values of declared options: tests/test_command_options.py's walk
    cases = [
        ([TRIPLES, "--name", "existing"], "a dataset named 'existing' already exists"),
        ([tmp_path / "missing.nt", "--name", "x"], "missing.nt: no such file or folder"),
        ([TRIPLES, "--name", "x", "--labels", tmp_path / "nolabels.nt"], "nolabels.nt: no such file"),
        ([TRIPLES, "--name", "x", "--labels", TRIPLES], "given both as TRIPLES and as --labels"),
        (
            [TRIPLES, "--name", "x", "--relations", tmp_path / "nope.yaml"],
            "nope.yaml: no such relations file",
        ),
        (
            [TRIPLES, "--name", "x", "--relations", _relations_with(tmp_path, predicate="yago:kapital")],
            "predicate <http://yago-knowledge.org/resource/kapital> is not in the triple files (1768 triples read)",
        ),
        (
            [TRIPLES, "--name", "x", "--relations", _relations_with(tmp_path, subject_class="schema:Planet")],
            "has 68 triples but none whose subject/object have the classes <http://schema.org/Planet>",
        ),
        (
            [bad_nt, "--name", "x"],
            "3 of 1771 lines are not triples (0.17%, more than --max-malformed 0.001): "
            "bad.nt: 3 (lines 11, 12, 13)",
        ),
        ([xml, "--name", "x"], "no line parsed as a nt triple (2 lines, e.g. line 1); check --format"),
        ([TRIPLES, "--name", "x", "--lang", "english!"], "--lang 'english!': expected a language tag"),
        (
            [TRIPLES, "--name", "x", "--lang", "fr", "--require-label", "entity"],
            "relations[4] (flows_into): no entity has a label in 'fr' (--require-label entity)",
        ),
    ]
    for args, message in cases:
        if "--relations" not in args:
            args = [*args, "--relations", EXAMPLE]
        r = run_cli("build-dataset", *args)
        assert r.exit_code == 2, (args, r.output)
        assert message in r.output and r.output.count("\n") == 1, (message, r.output)
        assert _state(base_db) == before
    gz = tmp_path / "broken.nt.gz"
    gz.write_bytes(b"not gzip at all")
    r = run_cli("build-dataset", gz, "--name", "x", "--relations", EXAMPLE)
    assert r.exit_code == 2 and "cannot read the triples" in r.output and _state(base_db) == before


def test_malformed_lines_below_the_threshold_are_skipped_and_reported(db_path, run_cli, tmp_path):
    lines = TRIPLES.read_text().splitlines()
    p = tmp_path / "some_bad.nt"
    p.write_text("\n".join(lines[:100] + ["<broken"] + lines[100:]) + "\n")
    r = run_cli("build-dataset", p, "--name", "c", "--relations", EXAMPLE)
    assert r.exit_code == 0, r.output
    assert "skipped 1 malformed line(s) in some_bad.nt (line 101)" in r.output
    r = run_cli("build-dataset", p, "--name", "c2", "--relations", EXAMPLE, "--max-malformed", "0")
    assert r.exit_code == 2 and "some_bad.nt: 1 (line 101)" in r.output


def test_seed_breaks_ties_deterministically(db_path):
    for name, seed in [("a", 1), ("b", 1), ("c", 2)]:
        _build(db_path, name, entities_per_relation=5, seed=seed)
    a, b, c = (_facts(db_path, n)["capital_of"] for n in "abc")
    assert a == b
    # capitals with the same total degree (6) and delta (1) are tied: another seed picks others
    assert [x["entity"] for x in a][2:] != [x["entity"] for x in c][2:]
    assert [x["uri_degree"] for x in a] == [x["uri_degree"] for x in c]


# -- end to end ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from scale_helpers import make_tiny_folder

    return make_tiny_folder(tmp_path_factory.mktemp("tiny") / "tiny")


def test_build_sample_score_analyze(db_path, run_cli, tiny_folder):
    r = run_cli(
        "build-dataset",
        TRIPLES,
        "--name",
        "countries",
        "--relations",
        EXAMPLE,
        "--entities-per-relation",
        "10",
    )
    assert r.exit_code == 0, r.output
    r = run_cli(
        "sample",
        "--dataset",
        "countries",
        "--relation",
        "capital",
        "--relation",
        "demonym",
        "--entities",
        "4",
        "--contexts",
        "12",
    )
    assert r.exit_code == 0, r.output
    sid = int(r.output.strip().splitlines()[-1])
    r = run_cli("score", "--sample", sid, "--model", tiny_folder, "--quiet")
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        assert (
            store.scalar("SELECT count(*) FROM persuasion") == 2 * 4 * 4 * 12
        )  # relations x entities x forms x contexts
        assert store.scalar("SELECT count(*) FROM susceptibility") == 2 * 4 * 4
        assert store.scalar("SELECT count(*) FROM persuasion WHERE persuasion IS NULL OR persuasion < 0") == 0
    r = run_cli("analyze", "--permutations", "200", "--quiet")
    assert r.exit_code == 0, r.output


# -- the real YAGO query forms (shared data) -------------------------------------------------------


@pytest.mark.shared_data
def test_build_with_the_papers_query_forms(shared_dir, db_path, tmp_path):
    """A relations file made from the authors' YAGO query forms and derived context templates
    (negation is missing there and is left out) builds on the fixture graph."""
    qf = json.loads((shared_dir / "data/measurelm/yago_query_forms.json").read_text())
    ct = json.loads((shared_dir / "data/measurelm/yago_context_templates.json").read_text())
    wanted = [
        Y + "capital",
        "reverse-" + Y + "capital",
        "http://schema.org/officialLanguage",
        "http://schema.org/neighbors",
        Y + "flowsInto",
        "http://schema.org/demonym",
    ]
    rels = [
        {
            "predicate": rid,
            "query_forms": qf[rid],
            "context_templates": {k: v for k, v in ct[rid].items() if v is not None},
        }
        for rid in wanted
    ]
    p = tmp_path / "yago_relations.yaml"
    p.write_text(yaml.safe_dump({"relations": rels}))
    rep = _build(db_path, "yago_forms", relations=str(p), entities_per_relation=10)
    assert rep["relations"] == 6 and rep["facts"] == 60
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM context_template") == 6 * 5
        names = [r[0] for r in store.query("SELECT short_name FROM relation ORDER BY position")]
    assert names == ["capital", "reverse-capital", "officialLanguage", "neighbors", "flowsInto", "demonym"]


def test_duplicates_and_self_loops_count_once(db_path, tmp_path):
    """Total degree = distinct triples touching the entity (a repeated line and a self-loop count once);
    delta = distinct neighbours along the predicate in either direction."""
    p = tmp_path / "g.nt"
    e, cap, lab = f"<{Y}", f"<{Y}capital>", "<http://www.w3.org/2000/01/rdf-schema#label>"
    p.write_text(
        "\n".join(
            [
                f"{e}A> {cap} {e}B> .",
                f"{e}A> {cap} {e}B> .",  # duplicate line
                f"{e}A> {cap} {e}A> .",  # self-loop
                f"{e}C> {cap} {e}A> .",  # incoming edge of the same predicate
                f'{e}A> {lab} "Alpha"@en .',
                f'{e}A> {lab} "Alpha"@en .',
                f"{e}B> {cap} {e}C> .",
            ]
        )
        + "\n"
    )
    rel = tmp_path / "one.yaml"
    rel.write_text(yaml.safe_dump(GOOD))
    rel = str(rel)
    rep = _build(db_path, "tiny", triples=(p,), relations=rel, entities_per_relation=10, require_label="none")
    f = {x["entity"]: x for x in _facts(db_path, "tiny")["capital"]}
    assert f[Y + "A"]["uri_degree"] == 4  # A-B, A-A, C-A, label
    assert f[Y + "A"]["predicate_degree"] == 3  # {B, A} U {A, C}
    assert f[Y + "A"]["entity_name"] == "Alpha" and f[Y + "B"]["entity_name"] == "B"
    assert f[Y + "B"]["uri_degree"] == 2 and f[Y + "C"]["uri_degree"] == 2
    assert rep["n_triples"] == 7
    assert _facts(db_path, "tiny") == {
        k: v for k, v in _reference(rel, triples=(p,), entities_per_relation=10, require_label="none").items()
    }


def test_a_failed_build_creates_no_warehouse(tmp_path, run_cli):
    db = tmp_path / "new.duckdb"
    rel = _relations_with(tmp_path, predicate="yago:kapital")
    r = run_cli("build-dataset", TRIPLES, "--name", "x", "--relations", rel, db=str(db))
    assert r.exit_code == 2 and "is not in the triple files" in r.output
    assert not db.exists()


# -- issue 19: hardening (D4-D8) ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["data[1].nt", "data*.nt", "dat?.nt"])
def test_glob_characters_in_a_path_name_exactly_that_file(db_path, run_cli, tmp_path, name):
    """D4: `build-dataset "kg/data[1].nt"` reads data[1].nt (not data1.nt), and its provenance
    sha256 is that of the file read."""
    kg = tmp_path / "kg"
    kg.mkdir()
    shutil.copy(TRIPLES, kg / name)
    extra = [f"<{Y}France> <http://x/p> <http://x/o{i}> ." for i in range(50)]  # changes France's degree
    for decoy in ("data1.nt", "datax.nt", "data.nt"):
        (kg / decoy).write_text("\n".join(extra) + "\n")
    r = run_cli("build-dataset", kg / name, "--name", "g", "--relations", EXAMPLE)
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        src = store.query("SELECT path, sha256, n_lines FROM dataset_source WHERE role = 'triples'")
    assert src == [(str(kg / name), hashlib.sha256((kg / name).read_bytes()).hexdigest(), 1768)]
    _build(db_path, "ref")
    assert _facts(db_path, "g") == _facts(db_path, "ref")


def test_a_non_utf8_line_is_a_malformed_line(db_path, run_cli, tmp_path):
    """D5: one Latin-1 line in a dump counts under --max-malformed (with its true line number, blank
    lines and later malformed lines counted right) instead of aborting the build."""
    raw = TRIPLES.read_bytes().splitlines()
    p = tmp_path / "latin1.nt"
    p.write_bytes(
        b"\n".join(
            raw[:50]
            + [b"", b'<http://x/a> <http://x/p> "caf\xe9" .']
            + raw[50:100]
            + [b"<broken"]
            + raw[100:]
        )
        + b"\n"
    )
    r = run_cli("build-dataset", p, "--name", "c", "--relations", EXAMPLE, "--max-malformed", "0.01")
    assert r.exit_code == 0, r.output
    assert "skipped 2 malformed line(s) in latin1.nt (lines 52, 103; 1 not UTF-8)" in r.output, r.output
    with open_store(db_path, read_only=True) as store:
        assert store.query("SELECT n_lines, n_malformed FROM dataset_source WHERE role = 'triples'") == [
            (1770, 2)
        ]
    assert _facts(db_path, "c") == (_build(db_path, "ref") and _facts(db_path, "ref"))
    before = hashlib.sha256(Path(db_path).read_bytes()).hexdigest()
    r = run_cli("build-dataset", p, "--name", "d", "--relations", EXAMPLE, "--max-malformed", "0")
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "latin1.nt: 2 (lines 52, 103; 1 not UTF-8); fix the files or raise --max-malformed" in r.output
    assert hashlib.sha256(Path(db_path).read_bytes()).hexdigest() == before
    whole = tmp_path / "all_latin1.nt"
    whole.write_bytes(b'<http://x/a> <http://x/p> "caf\xe9" .\n' * 3)
    r = run_cli("build-dataset", whole, "--name", "e", "--relations", EXAMPLE)
    assert r.exit_code == 2 and "all_latin1.nt: not UTF-8 text" in r.output and r.output.count("\n") == 1, (
        r.output
    )
    assert hashlib.sha256(Path(db_path).read_bytes()).hexdigest() == before


def test_a_corrupt_gz_in_a_folder_is_named(db_path, run_cli, tmp_path):
    """D8: a corrupt .gz among good files of a TRIPLES folder is reported under its own name."""
    kg = tmp_path / "kg"
    kg.mkdir()
    data = TRIPLES.read_bytes()
    (kg / "a_good.nt.gz").write_bytes(gzip.compress(data))
    bad = gzip.compress(data * 20)
    (kg / "b_bad.nt.gz").write_bytes(bad[: len(bad) // 2])
    (kg / "c_good.nt.gz").write_bytes(gzip.compress(data))
    r = run_cli("build-dataset", kg, "--name", "g", "--relations", EXAMPLE)
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"Error: {kg / 'b_bad.nt.gz'}: cannot read the triples"), r.output
    assert not Path(db_path).exists()


@pytest.mark.parametrize("suffix", [".ttl", ".nt"])
def test_an_undeclared_prefix_makes_a_malformed_line(db_path, run_cli, tmp_path, suffix):
    """D6: `undeclared:Foo schema:neighbors undeclared:Bar .` is not stored as a fact with the IRI
    'undeclared:Foo': like a Turtle parser, the reader counts the line as malformed."""
    extra = tmp_path / f"extra{suffix}"
    extra.write_text("@prefix ex: <http://example.org/> .\n" if suffix == ".ttl" else "")
    with extra.open("a") as f:
        f.write(
            "undeclared:Foo schema:neighbors undeclared:Bar .\n"
            "ex:Foo schema:neighbors <http://yago-knowledge.org/resource/France> .\n"
            "<http://x/a> <http://x/p> <http://x/b> .\n"
        )
    r = run_cli(
        "build-dataset", TRIPLES, extra, "--name", "g", "--relations", EXAMPLE, "--max-malformed", "0.01"
    )
    assert r.exit_code == 0, r.output
    bad = 2 if suffix == ".nt" else 1  # ex: is declared only in the Turtle file
    line = 1 if suffix == ".nt" else 2
    assert (
        f"skipped {bad} malformed line(s) in extra{suffix} (line{'s' if bad > 1 else ''} {line}" in r.output
    ), r.output
    with open_store(db_path, read_only=True) as store:
        assert (
            store.scalar(
                "SELECT count(*) FROM entity WHERE uri LIKE 'undeclared:%' OR name LIKE '%undeclared%'"
            )
            == 0
        )
        assert store.scalar("SELECT count(*) FROM answer WHERE uri LIKE 'undeclared:%'") == 0
        n = store.scalar("SELECT n_malformed FROM dataset_source WHERE path = ?", [str(extra)])
    assert n == bad


def test_labels_that_are_not_usable_names_are_skipped(db_path, run_cli, tmp_path):
    """D7: a label over 100 characters, with NUL (raw or escaped), a control or a bidi control
    (U+202E) is skipped (the entity keeps another label, or is named after its IRI); a fact
    whose entity has no usable name at all is left out. Same limit as the fakes screening."""
    from ctxprior.fakes.parse import MAX_CHARS
    from ctxprior.ingest.kg_build import MAX_NAME_CHARS, name_problem

    assert MAX_NAME_CHARS == MAX_CHARS
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    lines = [l for l in TRIPLES.read_text().splitlines() if label not in l]  # the graph without labels
    countries = sorted({l.split()[0] for l in TRIPLES.read_text().splitlines() if "schema.org/Country>" in l})
    bad = [
        '"' + "x" * 101 + '"@en',
        '"Nul\\u0000Land"@en',
        '"Tab\\tLand"@en',
        '"\\u202EdnaL"@en',
        '"Bidi\u202eLand"@en',
        '"  "@en',
        '"Ctl\u0007Land"@en',
    ]
    extra = [f"{c} {label} {b} ." for c, b in zip(countries, bad)]
    extra.append(f'{countries[0]} <http://www.w3.org/2004/02/skos/core#prefLabel> "Goodname"@en .')
    long_iri = "<http://yago-knowledge.org/resource/" + "Z" * 150 + ">"
    extra += [
        f"{long_iri} <http://yago-knowledge.org/resource/capital> <http://yago-knowledge.org/resource/Paris> .",
        f"{long_iri} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Country> .",
    ]
    extra += [f"{long_iri} <http://x/p{i}> <http://x/o{i}> ." for i in range(300)]  # the top entity by degree
    p = tmp_path / "names.nt"
    p.write_text("\n".join(lines + extra) + "\n")
    # --require-label none: unlabelled entities are named after their IRI (the default drops them)
    r = run_cli("build-dataset", p, "--name", "n", "--relations", EXAMPLE, "--require-label", "none")
    assert r.exit_code == 0, r.output
    # the long IRI as capital entity and as capital_of answer
    assert "left out 2 chosen fact(s) whose entity or answer has no usable name" in r.output, r.output
    with open_store(db_path, read_only=True) as store:
        names = [n for (n,) in store.query("SELECT name FROM entity UNION ALL SELECT name FROM answer")]
        assert store.scalar("SELECT count(*) FROM entity WHERE uri = ?", [long_iri[1:-1]]) == 0
        assert store.scalar("SELECT name FROM entity WHERE uri = ?", [countries[0][1:-1]]) == "Goodname"
    assert names and all(name_problem(n) is None for n in names), [n for n in names if name_problem(n)][:3]
    assert max(map(len, names)) <= 100 and not any("\x00" in n or "\u202e" in n or "\t" in n for n in names)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_killed_build_leaves_no_temporary_folder(db_path, tmp_path, monkeypatch, sig):
    """A build stopped by SIGTERM removes its $TMPDIR/ctxprior-build-* folder at once (exit code 130,
    no warehouse); after SIGKILL the next build removes the dead build's folder."""
    import os
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    big = tmp_path / "big.nt"
    text = TRIPLES.read_text()
    with big.open("w") as f:
        for i in range(150):  # ~265,000 lines: a build of a few seconds
            f.write(
                text.replace(
                    "<http://yago-knowledge.org/resource/", f"<http://yago-knowledge.org/resource/r{i}_"
                )
            )
    env = {**os.environ, "TMPDIR": str(tmpdir), "OMP_NUM_THREADS": "1"}
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxprior",
            "--db",
            db_path,
            "build-dataset",
            str(big),
            "--name",
            "b",
            "--relations",
            EXAMPLE,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while not list(tmpdir.glob("ctxprior-build-*")) and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, p.communicate()
    time.sleep(0.3)  # inside pass 1
    p.send_signal(getattr(signal, sig))
    out, err = p.communicate(timeout=60)
    assert not Path(db_path).exists()
    if sig == "SIGTERM":
        assert p.returncode == 130, err.decode()[-2000:]
        assert not list(tmpdir.glob("ctxprior-build-*"))
        return
    assert list(tmpdir.glob("ctxprior-build-*"))  # SIGKILL: nothing could run
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    _build(db_path, "after")
    assert not list(tmpdir.glob("ctxprior-build-*"))


def test_entity_classes_come_from_rdf_type_without_class_filters(db_path):
    """Without an entity-side class filter, an entity's class is its rdf:type class that most of
    the relation's chosen entities have (the paper conditions fakes on the real entities' classes);
    relation_class holds their shares."""
    from ctxprior.ingest.kg_build import read_kg

    spec = read_relations(EXAMPLE)
    kg = read_kg([str(TRIPLES)], [], spec, BuildOptions(), progress=False)
    want = ref.build(
        [str(TRIPLES)],
        [(r.predicate, r.reverse, r.subject_classes, r.object_classes) for r in spec.relations],
    )
    for i, r in enumerate(spec.relations):
        got = [f["entity_class"] for f in kg.facts if f["rid"] == i]
        assert got == [f["entity_class"] for f in want[i]], r.short_name
    by_rel = {
        spec.relations[rid].short_name: (role, c, frac)
        for rid, role, c, frac in kg.classes
        if role == "entity"
    }
    assert by_rel["flows_into"] == ("entity", "http://schema.org/RiverBodyOfWater", 1.0)  # no filter: derived
    assert by_rel["capital_of"] == ("entity", "http://schema.org/Place", 1.0)  # cities are City and Place
    _build(db_path)
    with open_store(db_path, read_only=True) as store:
        rows = store.query(
            "SELECT r.short_name, c.class_name FROM relation_class c JOIN relation r USING (relation_id) "
            "WHERE c.role = 'entity' ORDER BY 1"
        )
    assert ("flows_into", "http://schema.org/RiverBodyOfWater") in rows and len(rows) == 6


def test_default_build_drops_unlabelled_facts_and_picks_a_random_answer(db_path):
    """The authors drop pairs whose entity or answer has no label (their notebook's URI filter)
    and pick one of an entity's answers at random; --require-label none and --answer-choice
    degree keep the earlier rules."""
    _build(db_path)
    f = {rel: {x["entity_name"]: x for x in xs} for rel, xs in _facts(db_path, "countries").items()}
    assert "Rio Negro (Amazon)" not in f["flows_into"]  # its answer has no label
    _build(db_path, name="kept", require_label="none")
    k = {rel: {x["entity_name"]: x for x in xs} for rel, xs in _facts(db_path, "kept").items()}
    assert k["flows_into"]["Rio Negro (Amazon)"]["answer"] == "Amazon River"  # no label: local name
    # an entity with several answers gets different ones under different seeds
    switz = "http://yago-knowledge.org/resource/Switzerland"
    picks = set()
    for seed in range(6):
        _build(db_path, name=f"s{seed}", seed=seed)
        picks |= {
            x["answer"] for x in _facts(db_path, f"s{seed}")["official_language"] if x["entity"] == switz
        }
    assert len(picks) > 1


def test_cli_answer_choice_and_require_label(db_path, run_cli):
    r = run_cli(
        "build-dataset",
        TRIPLES,
        "--name",
        "deg",
        "--relations",
        EXAMPLE,
        "--answer-choice",
        "degree",
        "--require-label",
        "none",
        "--entities-per-relation",
        "20",
    )
    assert r.exit_code == 0, r.output
    assert "flows_into: 20 of 32 entities (total degree 18..5); 1 named after their IRI" in r.output
    with open_store(db_path, read_only=True) as store:
        params = json.loads(store.scalar("SELECT params_json FROM dataset_build"))
    assert params["answer_choice"] == "degree" and params["require_label"] == "none"
