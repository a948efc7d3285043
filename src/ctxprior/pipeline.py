"""The main job (`ctxprior demo`): the whole pipeline on the bundled demo data, with a summary.

Every analysis the tool offers runs once: the paper's design on the demo relations (relevance,
assertive, negation, real vs fake, reliability across query forms), memorization ratios and answer
groups on a few entities, a co-occurrence covariate from a small generated corpus (frequency), and
the friend–enemy and gender case studies; then the figures and the HTML report.

It drives the Python API alone: ``ctxprior.api.Warehouse.demo`` hands it the warehouse, and it
imports nothing of ctxprior but the declarations of its options (:data:`DEMO_OPTIONS`), the
default model and the loader (``scoring/models.py``), which loads the model once for its four
runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .options import Option, seed_option
from .scoring.models import DEFAULT_MODEL

# five of the demo's nine relations: the main job stays a few minutes on 2 CPU cores
DEMO_RELATIONS = ("capital", "officialLanguage", "author", "director", "flowsInto")


DEMO_OPTIONS = (
    Option(
        "entities",
        "--entities",
        "Entities per relation (half fake).",
        default=4,
        kind=int,
        maximum=10**6,
        minimum=1,
    ),
    Option(
        "all_relations",
        "--all-relations",
        "All nine demo relations (default: five, to stay a few minutes).",
        default=False,
        kind=bool,
    ),
    Option(
        "contexts", "--contexts", "Contexts per relation.", default=12, kind=int, maximum=10**7, minimum=1
    ),
    Option(
        "permutations",
        "--permutations",
        "Permutations per test.",
        default=10_000,
        kind=int,
        maximum=10**7,
        minimum=1,
    ),
    seed_option(11, "Sampling seed."),
    Option("model", "--model", "Model to score with.", default=DEFAULT_MODEL),
    Option(
        "out",
        "--out",
        "Folder for the figures, the HTML report and the generated corpus.",
        default="demo-output",
        directory=True,
    ),
    Option(
        "overwrite",
        "--overwrite",
        "Replace an earlier demo's files in --out (only those its manifest.json records).",
        default=False,
        kind=bool,
    ),
)
"""``ctxprior demo`` / ``wh.demo``."""

OUTPUT_FORMAT = "ctxprior-demo"
"""The ``format`` of the ``manifest.json`` the demo leaves in ``--out``."""
REPORT = "report.html"
FIGURES = "figures"
CORPUS = "corpus/demo.jsonl.zst"
OUTPUT_FILES = (REPORT, CORPUS)
"""The files the demo writes into ``--out`` besides the figures (recorded before they are written)."""
OUTPUT_CLAIMS = (re.escape(REPORT), r"corpus/.*", rf"{FIGURES}/fig[^/]*\.(png|csv)")
"""What the demo writes into ``--out``, as patterns: a file matching one that the demo did not write
is refused (``corpus/`` is read whole by the co-occurrence step, so all of it is the demo's)."""


def run_demo(
    wh: Any,
    echo: Callable[[str], None],
    *,
    entities: int,
    contexts: int,
    seed: int,
    model: str,
    permutations: int,
    out: str | Path,
    relations: tuple[str, ...] | None,
    friend_enemy: int = 8,
) -> dict:
    """Ingest the demo datasets, draw samples, score them, count co-occurrences, analyze, and write
    the figures and the report into ``out`` (``wh``: a writable ``ctxprior.api.Warehouse``; the
    options as ``wh.demo`` checked them, :data:`DEMO_OPTIONS`). Returns the sample and run ids
    and the output paths."""
    out = Path(out)
    samples = _ingest_and_sample(wh, echo, entities, contexts, seed, friend_enemy, relations)
    runs = _score(wh, echo, samples, model)
    _summarize_top(wh, echo, runs["demo"])
    _cooccurrence(wh, echo, out)
    wh.analyses.run(list(runs.values()), permutations=permutations, seed=0, log=None)
    echo("[5/6] analyses (permutation t-tests, Benjamini-Hochberg, alpha 0.05):")
    for line in wh.analyses.summary(list(runs.values())):
        echo("  " + line)
    figs = [png for _, png, _ in wh.analyses.figures(out / FIGURES, overwrite=True) if png]
    report = wh.analyses.report(out / REPORT, overwrite=True)
    echo(f"[6/6] {len(figs)} figures in {out / FIGURES}/ (PNG + the CSV behind each); report: {report}")
    return {"samples": samples, "runs": runs, "figures": figs, "report": report}


def _ingest_and_sample(wh, echo, entities, contexts, seed, friend_enemy, relations) -> dict[str, int]:
    """[1/6] the three bundled datasets; [2/6] one sample each (the gender study kept small)."""
    stats = wh.datasets.ingest_demo()
    for s in stats:
        echo(f"[1/6] ingested '{s['dataset']}': {s['relations']} relations, {s['facts']} facts")
    if not stats:
        echo("[1/6] demo datasets already in the warehouse")
    samples = {
        "demo": wh.samples.draw("demo", relations=relations, entities=entities, contexts=contexts, seed=seed),
        "friend_enemy": wh.samples.draw(
            "friend_enemy",
            entities=friend_enemy,
            contexts=3 * friend_enemy,
            context_types=["positive", "neutral", "negative"],
            seed=seed,
        ),
        "gender": wh.samples.draw(
            "gender",
            entities=8,
            design="all",
            templates_per_type=2,
            seed=seed,
            context_types=[
                "feminine_stereotype",
                "masculine_stereotype",
                "feminine_swapped",
                "masculine_swapped",
            ],
        ),
    }
    table = wh.samples.list().set_index("sample_id")
    for name, sid in samples.items():
        s = table.loc[sid]
        echo(
            f"[2/6] sample {sid} of '{name}': {s['relations']} relations, {s['entities']} entities, "
            f"{s['contexts']} contexts (seed {seed})"
        )
    return samples


def _score(wh, echo, samples, model) -> dict[str, int]:
    """[3/6] score every sample; greedy answers (memorization, answer groups) on one relation of the
    demo only, labelled by the prefix rule with 4 new tokens: the other runs skip the generation
    (``--outcome-rule none``) to keep the demo's time."""
    off = {"outcome_rule": "none"}
    plan: list[tuple[str, int, dict[str, Any]]] = [
        ("demo", samples["demo"], off),
        (
            "memorization",
            samples["demo"],
            {"relations": ["capital"], "outcome_rule": "prefix", "max_new_tokens": 4},
        ),
        ("friend_enemy", samples["friend_enemy"], off),
        ("gender", samples["gender"], {"query_forms_per_type": 2, **off}),
    ]
    from .scoring.models import load_model

    lm = load_model(model)  # once for the four runs
    runs = {}
    for name, sid, opts in plan:
        r = wh.runs.score(sid, model=lm, log=None, **opts)
        echo(
            f"[3/6] run {r.id} ({name}): {r.status}, {r.prompts} prompts in {r.seconds:.1f} s "
            f"({r.prompts_per_second:.0f} prompts/s)"
        )
        runs[name] = r.id
    return runs


def _summarize_top(wh, echo, run_id: int) -> None:
    for title, least in (
        ("most susceptible (entity, relation, query form: chi in nats):", False),
        ("least susceptible:", True),
    ):
        echo(title)
        for r in wh.runs.most_susceptible(run_id, 5, least=least).itertuples():
            echo(f"  {r.susceptibility:.3f}  {r.entity} [{r.entity_kind}]  {r.relation}, {r.query_form}")


def _cooccurrence(wh, echo, out: Path) -> None:
    """[4/6] a co-occurrence covariate from a small generated corpus (the frequency analysis)."""
    info = wh.datasets.write_demo_corpus(out / CORPUS, overwrite=True)
    rep = wh.covariates.cooccurrence(
        str((out / CORPUS).parent), name="demo_cooc", dataset="demo", workers=1, progress=False
    )
    echo(
        f"[4/6] covariate cov_demo_cooc: entity-answer co-occurrences in {info['documents']} generated "
        f"documents ({rep.n_words} words)"
    )
