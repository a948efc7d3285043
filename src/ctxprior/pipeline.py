"""The main job (`ctxprior demo`): the whole pipeline on the bundled demo data, with a summary."""

from __future__ import annotations

from typing import Callable

from .ingest.demo import ingest_demo
from .ingest.sampling import draw_sample, sample_summary
from .schema import open_warehouse


def run_demo(db: str, echo: Callable[[str], None], entities: int = 4, contexts: int = 24,
             seed: int = 11, model: str = "smollm2-135m", score: bool = True) -> dict:
    """Ingest the demo datasets, draw a small paper-design sample, score it, summarize."""
    out: dict = {}
    with open_warehouse(db) as wh:
        stats = ingest_demo(wh)
        for s in stats:
            echo(f"[1/4] ingested '{s['dataset']}': {s['relations']} relations, {s['facts']} facts")
        if not stats:
            echo("[1/4] demo datasets already in the warehouse")
        sid = draw_sample(wh, "demo", n_entities=entities, n_contexts=contexts, seed=seed)
        s = sample_summary(wh, sid)
        echo(f"[2/4] sample {sid}: {s['relations']} relations, {s['entities']} entities, "
             f"{s['contexts']} contexts (seed {seed})")
        out["sample_id"] = sid
    return out
