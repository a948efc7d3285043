"""The main job (`ctxprior demo`): the whole pipeline on the bundled demo data, with a summary."""

from __future__ import annotations

from typing import Callable

from .ingest.demo import ingest_demo
from .ingest.sampling import draw_sample, sample_summary
from .schema import open_warehouse


def run_demo(db: str, echo: Callable[[str], None], entities: int = 6, contexts: int = 36,
             seed: int = 11, model: str = "smollm2-135m", permutations: int = 10_000,
             friend_enemy: int = 12) -> dict:
    """Ingest the demo datasets, draw paper-design samples, score them, analyze, summarize."""
    from .queries.analyses import analyze, summary_lines
    from .scoring.runs import score_sample, top_bottom

    out: dict = {}
    with open_warehouse(db) as wh:
        stats = ingest_demo(wh)
        for s in stats:
            echo(f"[1/4] ingested '{s['dataset']}': {s['relations']} relations, {s['facts']} facts")
        if not stats:
            echo("[1/4] demo datasets already in the warehouse")
        samples = [draw_sample(wh, "demo", n_entities=entities, n_contexts=contexts, seed=seed)]
        if friend_enemy:
            samples.append(draw_sample(wh, "friend_enemy", n_entities=friend_enemy, n_contexts=3 * friend_enemy,
                                       context_types=["positive", "neutral", "negative"], seed=seed))
        for sid in samples:
            s = sample_summary(wh, sid)
            echo(f"[2/4] sample {sid} of '{s['dataset']}': {s['relations']} relations, {s['entities']} "
                 f"entities, {s['contexts']} contexts (seed {seed})")
        runs = []
        for sid in samples:
            r = score_sample(wh, sid, model, log=echo)
            rate = r.prompts / r.seconds if r.seconds else 0.0
            echo(f"[3/4] run {r.run_id}: {r.status}, {r.prompts} prompts in {r.seconds:.1f} s "
                 f"({rate:.0f} prompts/s)")
            runs.append(r.run_id)
        most, least = top_bottom(wh, runs[0], 5)
        echo("most susceptible (entity, relation, query form: chi in nats):")
        for rel, qf, ent, kind, chi in most:
            echo(f"  {chi:.3f}  {ent} [{kind}]  {rel}, {qf}")
        echo("least susceptible:")
        for rel, qf, ent, kind, chi in least:
            echo(f"  {chi:.3f}  {ent} [{kind}]  {rel}, {qf}")
        analyze(wh, runs, k=permutations, seed=0, log=lambda m: None)
        echo("[4/4] analyses (permutation t-tests, Benjamini-Hochberg, alpha 0.05):")
        for line in summary_lines(wh, runs):
            echo("  " + line)
        out.update(samples=samples, runs=runs)
    return out
