"""Synthetic warehouses that docs pages build in a hidden setup step (scripts/docs_examples.py):

    python tests/docs_warehouses.py analyses ctxprior.duckdb   # docs/analyses.md
    python tests/docs_warehouses.py dynamic ctxprior.duckdb    # one score-dynamic run only

Rows are inserted directly by tests/analysis_fixtures.py (no model), so a page builds one in about
a second; the effects are planted (see that module)."""

from __future__ import annotations

import sys

from analysis_fixtures import add_cooccurrence, add_dynamic, add_friend_enemy, add_gender, clone_run, make_yago_like

from ctxprior.schema import open_warehouse


def analyses(wh) -> None:
    """Runs 1-4: models m-small, m-big x sample seeds 11, 12 (relation rel2 holds a NaN score, rel3
    constant scores); 5 friend-enemy, 6 gender; 7 is run 3 rescored in bfloat16 on a sample with
    seed 13, 8 run 3 scored again on the same sample. A co-occurrence covariate view."""
    make_yago_like(wh, models=("m-small", "m-big"), seeds=(11, 12), nan_relation=2, constant_relation=3)
    add_friend_enemy(wh)
    add_gender(wh)
    add_cooccurrence(wh, seen_fakes=["fake0_1"])
    wh.execute("UPDATE run SET dtype = 'float32'")
    clone_run(wh, 3, sample={"seed": 13}, dtype="bfloat16")
    clone_run(wh, 3)


def dynamic(wh) -> None:
    """One finished score-dynamic run (m-dyn) and nothing else."""
    add_dynamic(wh)


if __name__ == "__main__":
    kind, path = sys.argv[1:]
    w = open_warehouse(path)
    {"analyses": analyses, "dynamic": dynamic}[kind](w)
    w.close()
