"""How often ``covariates known``'s rules disagree on the demo (issue 40, item 5).

Builds a warehouse from the bundled demo dataset (``--entities`` real entities per relation of
the five demo relations, no fakes' contexts needed), scores it with ``--model`` (outcomes off:
only the run's open queries are used), then labels every entity with each rule of
``covariates known`` (``ferrando``, Ferrando et al.'s released code; ``ctxprior-samples`` and
``greedy-majority``, ctxprior's own) and prints, for ``ferrando`` against each other rule, the
table of familiarity (known / unknown / left out) and the number of entities on which they differ.

    python benchmarks/known_rules.py [--model smollm2-135m] [--entities 4] [--db known.duckdb [--run N]]
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
    ap.add_argument("--entities", type=int, default=4)
    ap.add_argument("--db", default=None, help="warehouse file (default: a temporary one)")
    ap.add_argument("--name", default="known_rules", help="the run's known covariate (each rule replaces it)")
    ap.add_argument(
        "--run", type=int, default=None, help="a finished run of --db to label (default: score a new one)"
    )
    a = ap.parse_args(argv)
    db = Path(a.db or Path(tempfile.mkdtemp()) / "known.duckdb")
    wh = ctxprior.open(db, write=True)
    run_id = a.run
    if run_id is None:
        wh.datasets.ingest_demo()
        sid = wh.samples.draw("demo", entities=a.entities, contexts=3 * a.entities, relations=RELATIONS)
        run_id = wh.runs.score(
            sid, model=a.model, query_types=["open"], outcome_rule="none", progress=False
        ).id
    labels = {}
    for rule in RULES:  # a run keeps one known covariate: each rule replaces the last one's labels
        print(wh.covariates.known(run_id, rule=rule, name=a.name, replace=True, progress=False))
        labels[rule] = wh.sql(f"SELECT DISTINCT entity_id, familiarity FROM cov_{a.name}").set_index(
            "entity_id"
        )
    first = labels[RULES[0]]["familiarity"]
    for other in RULES[1:]:
        both = first.to_frame(RULES[0]).join(labels[other]["familiarity"].rename(other), how="inner")
        t = both.value_counts().rename("entities").reset_index().sort_values([RULES[0], other])
        differ = int((both[RULES[0]] != both[other]).sum())
        print(f"\n{RULES[0]} vs {other}: {differ} of {len(both)} entities differ")
        print(t.to_string(index=False))


if __name__ == "__main__":
    main()
