"""KG degrees (DuckDB over triple files), user tables (`covariates add`), the catalog, fact degrees."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
from covariates_helpers import FACTS, YAGO, build_warehouse

from ctxprior.covariates.catalog import register_fact_degrees
from ctxprior.storage import open_store

Y = f"<{YAGO}"
NT = f"""{Y}France> {Y}capital> {Y}Paris> .
{Y}France> {Y}capital> {Y}Lyon> .
{Y}Lyon> {Y}capital> {Y}France> .
{Y}France> {Y}capital> {Y}Paris> .
{Y}Paris> {Y}capital> {Y}France> .
{Y}France> <http://schema.org/name> "France \\"FR\\", la \\t République"@fr .
{Y}Paris_Hilton> {Y}birthPlace> {Y}New_York> .
{Y}Paris_Hilton> {Y}birthPlace> {Y}New_York> .
# a comment line

this line is not a triple
"""
TTL = f"""@prefix y: <{YAGO}> .
y:France y:capital y:Paris .
y:France y:capital y:Lyon .
y:Lyon y:capital y:France .
y:Paris y:capital y:France .
y:France schema:name "France"@en .
y:France a schema:Country .
PREFIX s: <http://schema.org/>
y:Paris_Hilton y:birthPlace <{YAGO}New_York> .
"""
TSV = f"""{YAGO}France\t{YAGO}capital\t{YAGO}Paris
yago:France\tyago:capital\tyago:Lyon
<{YAGO}Lyon>\t<{YAGO}capital>\t<{YAGO}France>\t.
{YAGO}Paris_Hilton\t{YAGO}birthPlace\t{YAGO}New_York\textra\tcolumns
"""


@pytest.fixture
def wh_path(db_path):
    build_warehouse(db_path)
    return db_path


def degrees(db_path, name):
    with open_store(db_path, read_only=True) as store:
        return {
            (r[0], r[1]): (r[2], r[3])
            for r in store.query(f"SELECT relation, entity, degree, total_degree FROM cov_{name}")
        }


@pytest.mark.parametrize("fname, text", [("g.nt", NT), ("g.nt.gz", NT), ("g.ttl", TTL), ("g.tsv.gz", TSV)])
def test_kg_degree_formats(wh_path, run_cli, tmp_path, fname, text):
    p = tmp_path / fname
    if fname.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    r = run_cli("covariates", "kg-degree", p, "--name", "yago_degree")
    assert r.exit_code == 0, r.output
    d = degrees(wh_path, "yago_degree")
    # delta(France, capital) = |{Paris, Lyon} U {Lyon, Paris}| = 2 (duplicates and direction collapse)
    assert d[("capital", "France")][0] == 2
    # reverse-capital uses the same (direction-free) degree: delta(Paris, capital) = |{} U {France}| = 1
    assert d[("reverse-capital", "Paris")][0] == 1
    assert d[("birthPlace", "Paris Hilton")] == (1, 1)
    assert d[("capital", "Zorbania")] == (None, None)  # fake entity: no URI
    assert d[("headquarters", "Apple")] == (None, None)  # URI not in the graph
    total_france = {"g.nt": 5, "g.nt.gz": 5, "g.ttl": 6, "g.tsv.gz": 3}[fname]
    assert d[("capital", "France")][1] == total_france
    if fname.startswith("g.nt"):
        assert "skipped 1 line(s) that are not nt triples" in r.output


def test_kg_degree_is_idempotent_and_replace(wh_path, run_cli, tmp_path):
    p = tmp_path / "g.nt"
    p.write_text(NT)
    assert run_cli("covariates", "kg-degree", p, "--name", "kg").exit_code == 0
    r = run_cli("covariates", "kg-degree", p, "--name", "kg")
    assert r.exit_code == 0 and "nothing to do" in r.output
    p2 = tmp_path / "h.nt"
    p2.write_text(
        NT.replace(f"{Y}Lyon> {Y}capital> {Y}France> .\n", "").replace(
            f"{Y}France> {Y}capital> {Y}Lyon> .\n", ""
        )
    )
    r = run_cli("covariates", "kg-degree", p2, "--name", "kg")
    assert r.exit_code == 2 and "--replace" in r.output
    r = run_cli("covariates", "kg-degree", p2, "--name", "kg", "--replace")
    assert r.exit_code == 0, r.output
    assert degrees(wh_path, "kg")[("capital", "France")] == (1, 3)
    with open_store(wh_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM covariate") == 1


def test_kg_degree_bad_input(wh_path, run_cli, tmp_path):
    p = tmp_path / "g.xml"
    p.write_text("<rdf/>")
    r = run_cli("covariates", "kg-degree", p, "--name", "kg")
    assert r.exit_code == 2 and "--format nt|ttl|tsv" in r.output
    p = tmp_path / "g.nt"
    p.write_text("nothing here\nat all\n")
    r = run_cli("covariates", "kg-degree", p, "--name", "kg")
    assert r.exit_code == 2 and "no line parsed as a nt triple" in r.output
    p = tmp_path / "g2.nt.gz"
    p.write_bytes(b"not gzip")
    r = run_cli("covariates", "kg-degree", p, "--name", "kg")
    assert r.exit_code == 2 and "cannot read the triples" in r.output
    with open_store(wh_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM covariate") == 0


# -- user tables --------------------------------------------------------------------------------
def test_add_csv_reports_matches_and_unmatched(wh_path, run_cli, tmp_path):
    p = tmp_path / "pop.csv"
    pd.DataFrame(
        {
            "entity": ["France", "Paris Hilton", "Atlantis"],
            "answer": ["Paris", "New York", "Poseidonia"],
            "popularity": [0.9, 0.7, 0.1],
        }
    ).to_csv(p, index=False)
    r = run_cli("covariates", "add", p, "--name", "pop", "--on", "entity,answer")
    assert r.exit_code == 0, r.output
    assert "cov_pop: 2 of 3 rows matched warehouse keys (2 facts); value columns: popularity" in r.output
    assert "1 unmatched key(s):" in r.output and "entity='Atlantis', answer='Poseidonia'" in r.output
    with open_store(wh_path, read_only=True) as store:
        rows = store.query(
            "SELECT dataset, relation, entity, answer, popularity FROM cov_pop ORDER BY entity"
        )
        assert rows == [
            ("toy", "capital", "France", "Paris", 0.9),
            ("toy", "birthPlace", "Paris Hilton", "New York", 0.7),
        ]
        cat = store.query(
            "SELECT kind, key_columns, value_columns, n_rows, n_matched, data_table, length(source_sha256) "
            "FROM covariate WHERE name = 'pop'"
        )
        assert cat == [("user", "entity,answer", "popularity", 3, 2, "covdata_pop", 64)]
    r = run_cli("covariates", "add", p, "--name", "pop", "--on", "entity,answer")
    assert r.exit_code == 0 and "nothing to do" in r.output


def test_add_parquet_by_uri_and_relation(wh_path, run_cli, tmp_path):
    p = tmp_path / "deg.parquet"
    pd.DataFrame(
        {
            "entity": [YAGO + "France", YAGO + "Paris"],
            "relation": ["capital", f"reverse-{YAGO}capital"],
            "score": [1, 2],
        }
    ).to_parquet(p)
    r = run_cli("covariates", "add", p, "--name", "deg", "--on", "entity,relation", "--match", "uri")
    assert r.exit_code == 0, r.output
    with open_store(wh_path, read_only=True) as store:
        assert store.query("SELECT relation, entity, score FROM cov_deg ORDER BY score") == [
            ("capital", "France", 1),
            ("reverse-capital", "Paris", 2),
        ]


def test_add_key_column_absent_is_one_clear_line_and_changes_nothing(wh_path, run_cli, tmp_path):
    p = tmp_path / "x.csv"
    pd.DataFrame({"entity": ["France"], "value": [1]}).to_csv(p, index=False)
    with open_store(wh_path, read_only=True) as store:
        before = store.query("SELECT * FROM covariate")
        tables = store.table_names()
    r = run_cli("covariates", "add", p, "--name", "x", "--on", "entity,answer")
    assert r.exit_code == 2
    assert r.output == (
        f"Error: {p}: no column answer (it has entity, value); rename the column or change --on\n"
    )
    with open_store(wh_path, read_only=True) as store:
        assert store.query("SELECT * FROM covariate") == before
        assert store.table_names() == tables


@pytest.mark.parametrize(
    "frame, on, message",
    [
        ({"entity": ["France", "France"], "v": [1, 2]}, "entity", "keys (entity) are not unique"),
        ({"entity": ["France"]}, "entity", "no value columns"),
        ({"entity": ["Nowhere"], "v": [1]}, "entity", "none of its 1 rows matches"),
        ({"entity": ["France"], "fact_id": [1]}, "entity", "clashes with the view's key columns"),
        (
            {"entity": ["France"], "v": [1]},
            "entity,colour",
            "--on colour: use dataset, relation, entity or answer",
        ),
    ],
)
def test_add_bad_tables(wh_path, run_cli, tmp_path, frame, on, message):
    p = tmp_path / "x.csv"
    pd.DataFrame(frame).to_csv(p, index=False)
    r = run_cli("covariates", "add", p, "--name", "x", "--on", on)
    assert r.exit_code == 2 and message in r.output, r.output
    with open_store(wh_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM covariate") == 0


@pytest.mark.quick
def test_list(wh_path, run_cli, tmp_path):
    r = run_cli("covariates", "list")
    assert r.exit_code == 0 and "no covariates yet" in r.output
    p = tmp_path / "pop.csv"
    pd.DataFrame({"entity": ["France"], "v": [1]}).to_csv(p, index=False)
    run_cli("covariates", "add", p, "--name", "pop", "--on", "entity", "--description", "my numbers")
    r = run_cli("covariates", "list")
    assert r.exit_code == 0
    assert "pop" in r.output and "cov_pop" in r.output and "user" in r.output


# -- degrees stored on fact rows ----------------------------------------------------------------
@pytest.mark.quick
def test_register_fact_degrees(wh_path):
    with open_store(wh_path) as store:
        did = store.scalar("SELECT dataset_id FROM dataset")
        assert register_fact_degrees(store, did) is None  # no degrees yet: no-op
        assert store.scalar("SELECT count(*) FROM covariate") == 0
        store.execute(
            "UPDATE fact SET predicate_degree = fact_id * 10, uri_degree = 100 WHERE entity_kind = 'real'"
        )
        with store.transaction():  # as the ingest calls it
            assert register_fact_degrees(store, did) == "toy_degree"
        assert register_fact_degrees(store, did) == "toy_degree"  # idempotent
        assert store.scalar("SELECT count(*) FROM covariate") == 1
        rows = store.query("SELECT entity, predicate_degree, uri_degree FROM cov_toy_degree ORDER BY fact_id")
        assert len(rows) == len(FACTS)
        assert rows[0] == ("France", 10, 100)
        assert store.scalar("SELECT kind FROM covariate WHERE name = 'toy_degree'") == "fact_degree"
        assert register_fact_degrees(store, 999) is None


def test_yago_qec_ingest_registers_degrees_and_cooccurrence_joins(run_cli, db_path, tmp_path):
    """With the lead's yago-qec ingest: degrees become cov_<dataset>_degree; co-occurrence joins
    the readable keys (names repeat in this fixture, the cov view stays one row per key)."""
    from covariates_helpers import write_jsonl
    from fixtures.make_yago_qec import make_yago_qec

    path = tmp_path / "yago_qec.json"
    make_yago_qec(path, n_relations=3, n_facts=12, seed=0, with_degrees=True)
    r = run_cli("ingest", "yago-qec", path)
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        assert store.query("SELECT name, kind FROM covariate") == [("yago_qec_degree", "fact_degree")]
        assert store.scalar("SELECT count(*) FROM cov_yago_qec_degree WHERE predicate_degree IS NOT NULL") > 0
        ents = store.query("SELECT entity, answer FROM v_entity WHERE answer IS NOT NULL LIMIT 5")
    docs = [{"text": f"{e} and {a}. {a}, {e}!"} for e, a in ents]
    corpus = write_jsonl(tmp_path / "c" / "x.jsonl.zst", docs)
    r = run_cli("covariates", "cooccurrence", corpus, "--name", "yago_cooc", "--workers", "1")
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        n_keys = store.scalar(
            "SELECT count(*) FROM (SELECT DISTINCT dataset, relation, entity, answer FROM v_entity)"
        )
        assert store.scalar("SELECT count(*) FROM cov_yago_cooc") == n_keys
        e, a = ents[0]
        assert (
            store.scalar(
                "SELECT max(cooccurrence) FROM cov_yago_cooc WHERE entity = ? AND answer = ?", [e, a]
            )
            >= 3
        )


@pytest.mark.parametrize("name", ["pop[1].csv", "pop*.csv", "p?p.csv"])
def test_add_reads_exactly_the_named_file_despite_glob_characters(wh_path, run_cli, tmp_path, name):
    """Issue 19 D4: `covariates add "pop[1].csv"` reads that file (not pop1.csv) and records its sha256."""
    import hashlib

    good = tmp_path / name
    pd.DataFrame({"entity": ["France"], "popularity": [0.9]}).to_csv(good, index=False)
    for decoy in ("pop1.csv", "popx.csv", "pap.csv"):
        pd.DataFrame({"entity": ["France"], "popularity": [0.1]}).to_csv(tmp_path / decoy, index=False)
    r = run_cli("covariates", "add", good, "--name", "pop", "--on", "entity")
    assert r.exit_code == 0, r.output
    with open_store(wh_path, read_only=True) as store:
        assert store.query("SELECT DISTINCT popularity FROM cov_pop") == [(0.9,)]
        sha = store.scalar("SELECT source_sha256 FROM covariate WHERE name = 'pop'")
    assert sha == hashlib.sha256(good.read_bytes()).hexdigest()


def test_kg_degree_counts_a_non_utf8_line_as_unparsed(wh_path, run_cli, tmp_path):
    """Issue 19 D5, the shared reader in `covariates kg-degree`: a Latin-1 line is skipped and counted."""
    p = tmp_path / "g.nt"
    p.write_bytes(NT.encode() + b'<http://x/a> <http://x/p> "caf\xe9" .\n')
    r = run_cli("covariates", "kg-degree", p, "--name", "kg")
    assert r.exit_code == 0, r.output
    assert "skipped 2 line(s) that are not nt triples" in r.output, r.output
    assert degrees(wh_path, "kg")[("capital", "France")] == (2, 5)
