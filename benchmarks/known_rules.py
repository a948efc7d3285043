"""How often ``covariates known``'s rules disagree on the demo (issue 40, item 5).

Builds a warehouse from the bundled demo dataset (``--entities`` real entities per relation of
the five demo relations, no fakes' contexts needed), scores it with ``--model`` (outcomes off:
only the run's open queries are used), then labels every entity with each rule of
``covariates known`` (``ferrando``, Ferrando et al.'s released code; ``ctxprior-samples`` and
``greedy-majority``, ctxprior's own) and prints, for ``ferrando`` against each other rule, the
table of familiarity (known / unknown / left out) and the number of entities on which they differ.

    python benchmarks/known_rules.py [--model smollm2-135m] [--entities 10] [--db known.duckdb]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import ctxprior

RELATIONS = ["capital", "officialLanguage", "author", "reverse-author", "reverse-capital"]
RULES = ["ferrando", "ctxprior-samples", "greedy-majority"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--entities", type=int, default=10)
    ap.add_argument("--db", default=None, help="warehouse file (default: a temporary one)")
    a = ap.parse_args(argv)
    db = Path(a.db or Path(tempfile.mkdtemp()) / "known.duckdb")
    wh = ctxprior.open(db, write=True)
    wh.datasets.ingest_demo()
    sid = wh.samples.draw("demo", entities=a.entities, contexts=3 * a.entities, relations=RELATIONS)
    run = wh.runs.score(sid, model=a.model, query_types=["open"], outcome_rule="none", progress=False)
    for rule in RULES:
        print(wh.covariates.known(run.id, rule=rule, name=_view(rule)[4:], progress=False))
    for other in RULES[1:]:
        t = wh.sql(
            f"WITH f AS (SELECT DISTINCT entity_id, familiarity FROM {_view(RULES[0])}), "
            f"o AS (SELECT DISTINCT entity_id, familiarity FROM {_view(other)}) "
            f'SELECT f.familiarity AS ferrando, o.familiarity AS "{other}", count(*) AS entities '
            "FROM f JOIN o USING (entity_id) GROUP BY ALL ORDER BY ALL"
        )
        differ = int(t.loc[t["ferrando"] != t[other], "entities"].sum())
        print(f"\nferrando vs {other}: {differ} of {int(t['entities'].sum())} entities differ")
        print(t.to_string(index=False))


def _view(rule: str) -> str:
    return "cov_" + rule.replace("-", "_")


if __name__ == "__main__":
    main()
