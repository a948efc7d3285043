"""Issue 22 item 7: a data source is one declaration (``ctxprior.ingest.registry``) beside its
loader; ``ctxprior ingest <name>`` and ``wh.datasets.ingest(name, ...)`` are made from it."""

from __future__ import annotations

import re

import pytest

import ctxprior
from ctxprior import api, plugins
from ctxprior.errors import UserError
from ctxprior.ingest import registry
from ctxprior.ingest.builder import DatasetBuilder
from ctxprior.ingest.registry import IngestSource, Param, ingest_source


def _pairs_source() -> IngestSource:
    """A test's source: entity/answer pairs given on the command line, as one relation."""

    def load(wh, pairs, name="pairs", relation="likes"):
        b = DatasetBuilder(name, "pairs")
        rel = b.add_relation(relation)
        for pos, pair in enumerate(pairs):
            entity, _, answer = pair.partition("=")
            rel.facts.append(
                {
                    "entity": b.entity(entity, "real"),
                    "answer": b.answer(answer),
                    "kind": "real",
                    "position": pos,
                }
            )
        rel.query_forms.append(("open", 0, "{entity} likes"))
        with wh.transaction():
            return b.write(wh)

    return IngestSource(
        name="pairs",
        help="Load ENTITY=ANSWER pairs as one relation (a test's source).",
        params=(
            Param("pairs", metavar="ENTITY=ANSWER...", multiple=True),
            Param("name", "--name", "Dataset name in the warehouse.", default="pairs"),
            Param("relation", "--relation", "The relation's name.", metavar="R", default="likes"),
        ),
        load=load,
        lines=lambda s: [f"ingested dataset '{s['dataset']}': {s['facts']} facts"],
    )


@pytest.fixture
def pairs(monkeypatch):
    """The test's source registered as a module declares one (in a copy of the registry)."""
    api.ingest_sources()
    monkeypatch.setattr(registry, "SOURCES", registry.SOURCES.copy())
    return ingest_source(_pairs_source())


def test_every_source_is_declared_beside_its_loader(run_cli):
    sources = api.ingest_sources()
    assert sources and list(sources) == sorted(sources)
    builtin = plugins.modules("ctxprior.ingest") + plugins.children("ctxprior", "ingest")
    listing = run_cli("ingest", "--help").output
    for name, s in sources.items():
        assert s.name == name and s.help and s.load.__module__ in builtin, name
        assert re.search(rf"^\s+{re.escape(name)}\s", listing, re.M), name


def test_a_new_source_is_one_declaration(pairs, run_cli, db_path):
    listing = run_cli("ingest", "--help").output
    assert [line.split()[:2] for line in listing.splitlines() if "pairs" in line] == [["pairs", "Load"]]
    help_ = run_cli("ingest", "pairs", "--help").output
    assert "ingest pairs [OPTIONS] ENTITY=ANSWER..." in help_
    assert "--relation R" in help_ and "[default: pairs]" in help_
    res = run_cli("ingest", "pairs", "Ada=tea", "Bo=coffee", "--name", "drinks")
    assert (res.exit_code, res.output) == (0, "ingested dataset 'drinks': 2 facts\n")
    wh = ctxprior.open(db_path, write=True)
    assert wh.datasets.ingest("pairs", ["Cy=milk"], relation="drinks")["facts"] == 1
    assert list(wh.sql("SELECT name FROM dataset ORDER BY name")["name"]) == ["drinks", "pairs"]


def test_ingest_binds_like_the_command(tmp_path):
    wh = ctxprior.open(tmp_path / "w.duckdb", write=True)
    assert [s["dataset"] for s in wh.datasets.ingest("demo", only=["gender"])] == ["gender"]
    assert wh.datasets.ingest("demo", ["gender"]) == []  # already there
    with pytest.raises(
        UserError, match="unknown data source 'nope'; choose from " + ", ".join(api.ingest_sources())
    ):
        wh.datasets.ingest("nope")
    with pytest.raises(TypeError, match="no parameter 'onl'"):
        wh.datasets.ingest("demo", onl=["gender"])
    with pytest.raises(TypeError, match="missing 'path'"):
        wh.datasets.ingest("yago-qec")
