"""Issue 28 item 3: one discovery mechanism (``ctxprior.plugins``) for the four plug-in kinds, so a
separate package adds an estimator, an analysis, a data source or a model family with one entry
point each; ``--help``, the generated CLI reference, the dataset card and the registries' readers
see it. The package here is a folder on ``sys.path`` with a ``*.dist-info/entry_points.txt``
(what ``pip install`` writes), so nothing is installed."""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import pytest
from conftest import ROOT

from ctxprior import api, plugins
from ctxprior.analyses import registry as analyses_registry
from ctxprior.ingest import registry as sources_registry
from ctxprior.scoring import architectures, estimators

ENTRY_POINTS = """\
[ctxprior.estimators]
first-token-again = ctxprior_extra_plugin:AGAIN

[ctxprior.analyses]
extra = ctxprior_extra_plugin

[ctxprior.ingest_sources]
pairs = ctxprior_extra_plugin:PAIRS

[ctxprior.model_families]
toy = ctxprior_extra_plugin
"""

MODULE = '''\
"""A separate package's plug-ins: one of each kind."""
from ctxprior.ingest.registry import IngestSource, Param
from ctxprior.scoring.architectures import register_family
from ctxprior.scoring.estimators import ESTIMATORS, Estimator

AGAIN = Estimator("first-token-again", ESTIMATORS["first-token"].run, help="the paper's, again",
                  card="A is the next token, computed again")
PAIRS = IngestSource(name="pairs", help="Load ENTITY=ANSWER pairs (a plug-in's source).",
                     params=(Param("pairs", metavar="ENTITY=ANSWER...", multiple=True),),
                     load=lambda store, pairs: {"facts": len(pairs)}, lines=lambda r: [str(r)])
register_family("toy_lm", "Toy LM (a plug-in's family)", "ToyForCausalLM")
'''

# no report-title / report / summary: the registry falls back to the name and the help
ANALYSIS = """\
-- analysis: extra-relevance
-- order: 999
-- help: relevant vs irrelevant contexts, again (a plug-in's analysis)
-- compare: relevant > irrelevant
-- unit: mean psi per (entity, query form)
SELECT 1 AS x
"""


@pytest.fixture
def fresh_registries(monkeypatch):
    """Each registry as if no plug-in had been discovered yet (copies of the built-ins, found first
    into the real registries, which stay as they are)."""
    api.ingest_sources(), api.analysis_names(), estimators.registry(), architectures.families()
    for module, name in (
        (estimators, "ESTIMATORS"),
        (sources_registry, "SOURCES"),
        (analyses_registry, "ANALYSES"),
        (architectures, "FAMILIES"),
    ):
        monkeypatch.setattr(module, name, getattr(module, name).copy(loaded=False))


@pytest.fixture
def plugin_package(tmp_path, monkeypatch, fresh_registries):
    """An 'installed' distribution declaring one plug-in of each kind."""
    site = tmp_path / "site"
    pkg = site / "ctxprior_extra_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(MODULE)
    (pkg / "extra_relevance.sql").write_text(ANALYSIS)
    info = site / "ctxprior_extra_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ctxprior-extra-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "ctxprior_extra_plugin", raising=False)
    yield
    sys.modules.pop("ctxprior_extra_plugin", None)


def _cli_reference() -> str:
    """docs/cli.md as mkdocs builds it (the mkdocs-click directive over ``ctxprior.cli``)."""
    from mkdocs_click._docs import make_command_docs

    from ctxprior.cli import cli

    return " ".join(make_command_docs("ctxprior", cli, depth=1, style="table", list_subcommands=True))


def test_the_groups_have_one_entry_point_each(plugin_package):
    assert {k: [ep.name for ep in plugins.entry_points(k)] for k in plugins.GROUPS} == {
        "estimators": ["first-token-again"],
        "analyses": ["extra"],
        "ingest_sources": ["pairs"],
        "model_families": ["toy"],
    }


def test_one_of_each_kind_from_another_package(plugin_package, run_cli):
    # an estimator: score's choices and help, the API's list, the run's checks, the card
    assert api.estimators()["first-token-again"] == "the paper's, again"
    shown = " ".join(run_cli("score", "--help").output.split())
    assert "[auto|first-token|answer-set|first-token-again]" in shown
    assert "first-token-again: the paper's, again." in shown
    from ctxprior.publish.card import _card_method

    card = "\n".join(_card_method([{"estimator": "first-token-again"}, {"estimator": "sampled"}]))
    assert "- `first-token-again`: A is the next token, computed again" in card
    assert "- `sampled`: A is the semantic cluster of sampled generations" in card
    # an analysis: --only's choices, the registry's fallbacks for the keys it leaves out
    assert "extra-relevance" in api.analysis_names()
    assert ",dynamicqa,extra-relevance." in "".join(run_cli("analyze", "--help").output.split())
    a = analyses_registry.get("extra-relevance")
    assert (a.report_title, a.report_text, a.summary) == ("extra-relevance", a.help, a.help)
    # a data source: its subcommand and the API's list
    assert "pairs" in api.ingest_sources()
    assert re.search(r"^\s+pairs\s+Load ENTITY=ANSWER pairs", run_cli("ingest", "--help").output, re.M)
    # a model family: prefix reuse trusts it
    exact, why = architectures.prefix_reuse(SimpleNamespace(model_type="toy_lm"))
    assert exact and "Toy LM" in why
    # the generated CLI reference (docs/cli.md) lists what --help lists
    ref = _cli_reference()
    for name in ("first-token-again: the paper's, again", "extra-relevance", "pairs"):
        assert name in ref, name


def test_a_broken_plugin_is_named(tmp_path, monkeypatch, fresh_registries):
    info = tmp_path / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ctxprior.estimators]\nbad = no_such_module_here:X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=r"ctxprior plug-in bad = no_such_module_here:X"):
        estimators.registry()


def test_builtins_are_found_in_the_package():
    assert plugins.children("ctxprior", "ingest", skip=("ingest", "commands")) == [
        "ctxprior.dynamicqa.ingest"
    ]
    assert "ctxprior.ingest.demo" in plugins.modules("ctxprior.ingest")
    assert all(not m.rsplit(".", 1)[1].startswith("_") for m in plugins.modules("ctxprior.analyses.steps"))


# -- "Where to add" (docs/architecture.md): each row's count is what the test above needed -------

WHERE_TO_ADD = {
    "an analysis": "one file",
    "an estimator": "one entry",
    "a data source": "one declaration",
    "a model family": "three places",
}


def test_where_to_add_names_the_four_kinds_with_their_counts():
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("## Where to add") :]
    rows = dict(re.findall(r"^\| (an? [a-z -]+?) \| (.+?) \|$", table, re.M))
    for kind, count in WHERE_TO_ADD.items():
        assert rows[kind].startswith(count), (kind, rows[kind][:60])
    assert "entry point" in rows["a plug-in package"]
