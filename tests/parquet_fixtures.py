"""Test data for the Parquet/publish tests: a small real warehouse with a fake scoring run.

``build_warehouse(path)`` uses the lead's ``ingest_demo`` + ``draw_sample`` when they exist and
falls back to inserting a few core rows directly, so the publish tests keep working either way.
A fake run (status done) gets persuasion, susceptibility, prior_topk, prompt_topk, generation and
run_unit rows, plus a second run (status failed) with a few rows, for --runs filtering.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ctxprior.storage import open_store

T0 = datetime(2026, 11, 21, 12, 0, 0)


def _manual_core(wh) -> None:
    wh.insert_arrow(
        "dataset",
        {
            "dataset_id": [1],
            "name": ["tiny"],
            "source_format": ["demo"],
            "source_path": [None],
            "source_sha256": [None],
            "description": ["tiny test dataset"],
            "ctxprior_version": ["0.1.0"],
            "created_at": [T0],
        },
    )
    wh.insert_arrow(
        "relation",
        {
            "relation_id": [1],
            "dataset_id": [1],
            "name": ["http://schema.org/capital"],
            "short_name": ["capital"],
            "is_reverse": [False],
            "position": [0],
        },
    )
    wh.insert_arrow(
        "entity",
        {
            "entity_id": [1, 2, 3],
            "dataset_id": [1, 1, 1],
            "name": ["France", "Germany", "Zorblania"],
            "kind": ["real", "real", "fake"],
            "uri": ["u:fr", "u:de", None],
            "entity_class": ["country"] * 3,
        },
    )
    wh.insert_arrow(
        "answer",
        {
            "answer_id": [1, 2],
            "dataset_id": [1, 1],
            "name": ["Paris", "Berlin"],
            "uri": ["u:paris", "u:berlin"],
        },
    )
    wh.insert_arrow(
        "fact",
        {
            "fact_id": [1, 2, 3],
            "relation_id": [1, 1, 1],
            "position": [0, 1, 0],
            "entity_id": [1, 2, 3],
            "answer_id": [1, 2, 1],
            "entity_kind": ["real", "real", "fake"],
            "label": [None] * 3,
            "category": [None] * 3,
            "uri_degree": [10, 8, None],
            "namesake_degree": [None] * 3,
            "namesake_num_uris": [None] * 3,
            "predicate_degree": [None] * 3,
        },
    )
    wh.insert_arrow(
        "query_form",
        {
            "query_form_id": [1, 2],
            "relation_id": [1, 1],
            "query_type": ["open", "closed"],
            "ordinal": [0, 0],
            "name": ["open_0", "closed_0"],
            "template": ["The capital of {entity} is", "Is {answer} the capital of {entity}?"],
        },
    )
    wh.insert_arrow(
        "context_template",
        {
            "context_template_id": [1, 2],
            "relation_id": [1, 1],
            "context_type": ["base", "negation"],
            "ordinal": [0, 0],
            "template": [
                "The capital of {entity} is {answer}.\n",
                "The capital of {entity} is not {answer}.\n",
            ],
        },
    )
    wh.insert_arrow(
        "sample",
        {
            "sample_id": [1],
            "dataset_id": [1],
            "design": ["paper"],
            "seed": [11],
            "n_entities": [3],
            "n_contexts": [4],
            "context_types": ["base,negation"],
            "params_json": ["{}"],
            "ctxprior_version": ["0.1.0"],
            "created_at": [T0],
        },
    )
    wh.insert_arrow(
        "sample_fact",
        {"sample_id": [1, 1, 1], "fact_id": [1, 2, 3], "relation_id": [1, 1, 1], "ordinal": [0, 1, 2]},
    )
    wh.insert_arrow(
        "context",
        {
            "context_id": [1, 2, 3, 4],
            "sample_id": [1] * 4,
            "relation_id": [1] * 4,
            "ordinal": [0, 1, 2, 3],
            "context_template_id": [1, 2, 1, 2],
            "context_type": ["base", "negation", "base", "negation"],
            "entity_id": [1, 2, 3, 1],
            "answer_id": [2, 1, 1, 2],
            "text": [
                "The capital of France is Berlin.\n",
                "The capital of Germany is not Paris.\n",
                "The capital of Zorblania is Paris.\n",
                "The capital of France is not Berlin.\n",
            ],
        },
    )


def _fake_run(wh, run_id: int, status: str, sample_id: int, n_facts: int, n_ctx: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    facts = [
        r[0]
        for r in wh.query(
            "SELECT fact_id FROM sample_fact WHERE sample_id=? ORDER BY relation_id, ordinal LIMIT ?",
            [sample_id, n_facts],
        )
    ]
    rel = wh.scalar(
        "SELECT relation_id FROM sample_fact WHERE sample_id=? AND fact_id=?", [sample_id, facts[0]]
    )
    facts = [f for f in facts if wh.scalar("SELECT relation_id FROM fact WHERE fact_id=?", [f]) == rel]
    ctxs = [
        r[0]
        for r in wh.query(
            "SELECT context_id FROM context WHERE sample_id=? AND relation_id=? ORDER BY ordinal LIMIT ?",
            [sample_id, rel, n_ctx],
        )
    ]
    qfs = [
        r[0]
        for r in wh.query(
            "SELECT query_form_id FROM query_form WHERE relation_id=? ORDER BY 1 LIMIT 2", [rel]
        )
    ]
    wh.insert_arrow(
        "run",
        {
            "run_id": [run_id],
            "kind": ["persuasion"],
            "sample_id": [sample_id],
            "dataset_id": [None],
            "model": ["smollm2-135m"],
            "model_revision": ["sha256:" + "ab" * 32],
            "dtype": ["float32"],
            "quantization": ["none"],
            "device": ["cpu"],
            "estimator": ["first-token"],
            "batch_size": [8],
            "seed": [seed],
            "config_json": ['{"estimator": "first-token"}'],
            "ctxprior_version": ["0.1.0"],
            "host": ["testhost"],
            "pid": [1],
            "status": [status],
            "error": [None],
            "units_total": [len(qfs)],
            "units_done": [len(qfs)],
            "prompts_done": [len(qfs) * len(facts) * len(ctxs)],
            "started_at": [T0],
            "ended_at": [T0],
        },
    )
    P, S, PT, QT, G, U = [], [], [], [], [], []
    for ui, q in enumerate(qfs):
        U.append(
            {
                "run_id": run_id,
                "unit_id": ui,
                "relation_id": rel,
                "query_form_id": q,
                "shard": 0,
                "status": "done",
                "n_prompts": len(facts) * len(ctxs),
                "attempts": 1,
                "worker": "h:1",
                "error": None,
                "seconds": 0.5,
                "finished_at": T0,
            }
        )
        for f in facts:
            psis = rng.gamma(1.0, 0.3, size=len(ctxs))
            for c, psi in zip(ctxs, psis):
                P.append(
                    {
                        "run_id": run_id,
                        "query_form_id": q,
                        "fact_id": f,
                        "context_id": c,
                        "persuasion": float(psi),
                        "entropy": float(rng.uniform(0, 3)),
                    }
                )
                for k in range(2):
                    PT.append(
                        {
                            "run_id": run_id,
                            "query_form_id": q,
                            "fact_id": f,
                            "context_id": c,
                            "rank": k + 1,
                            "token_id": int(rng.integers(0, 1000)),
                            "token": f" t{k}",
                            "prob": 0.5 / (k + 1),
                        }
                    )
                G.append(
                    {
                        "run_id": run_id,
                        "query_form_id": q,
                        "fact_id": f,
                        "context_id": c,
                        "text": " Paris",
                        "label": ["ORIGINAL", "CONTEXT", "OTHER"][int(rng.integers(0, 3))],
                    }
                )
            S.append(
                {
                    "run_id": run_id,
                    "query_form_id": q,
                    "fact_id": f,
                    "susceptibility": float(psis.mean()),
                    "mixture_entropy": 2.0,
                    "mean_conditional_entropy": 2.0 - float(psis.mean()),
                    "n_contexts": len(ctxs),
                    "prior_entropy": 1.5,
                    "prior_kl": 0.1,
                }
            )
            for k in range(3):
                QT.append(
                    {
                        "run_id": run_id,
                        "query_form_id": q,
                        "fact_id": f,
                        "rank": k + 1,
                        "token_id": 100 + k,
                        "token": f" a{k}",
                        "prob": 0.3 / (k + 1),
                    }
                )
    import pyarrow as pa

    for name, rows in (
        ("persuasion", P),
        ("susceptibility", S),
        ("prompt_topk", PT),
        ("prior_topk", QT),
        ("generation", G),
        ("run_unit", U),
    ):
        wh.insert_arrow(name, pa.Table.from_pylist(rows))


def build_warehouse(path: str, use_demo: bool = True) -> str:
    """A small warehouse at ``path``: core rows (demo data when available) and two runs."""
    store = open_store(path)
    try:
        with store.transaction():
            sample_id = None
            if use_demo:
                try:
                    from ctxprior.ingest.demo import ingest_demo
                    from ctxprior.sampling.draw import draw_sample
                except ImportError:
                    use_demo = False
            if use_demo:
                ingest_demo(store, only=["demo"])
                rel = store.scalar("SELECT short_name FROM relation ORDER BY relation_id LIMIT 1")
                sample_id = draw_sample(store, "demo", relations=[rel], n_entities=4, n_contexts=12, seed=11)
            else:
                _manual_core(store)
                sample_id = 1
            _fake_run(store, 1, "done", sample_id, n_facts=4, n_ctx=8, seed=1)
            _fake_run(store, 2, "failed", sample_id, n_facts=2, n_ctx=3, seed=2)
    finally:
        store.close()
    return path


def record_covariate_view(target, view: str) -> None:
    """A `covariate` catalog row (kind `user`) naming ``view``, written into ``target`` (a path,
    through plain DuckDB, or an open Store): ctxprior then counts the view as its own, as it does
    the views `ctxprior covariates ...` makes; a view the catalog does not record is foreign
    (dropped by a read-write open, refused by a read-only one: ctxprior.storage.trust)."""
    import duckdb

    now = datetime(2026, 1, 1)
    con = duckdb.connect(target) if isinstance(target, str) else None
    run = con.execute if con is not None else target.execute
    try:
        cid = run("SELECT coalesce(max(covariate_id), 0) + 1 FROM covariate").fetchone()[0]
        run(
            "INSERT INTO covariate (covariate_id, name, kind, view_name, key_columns, value_columns, "
            "params_json, status, ctxprior_version, added_at, updated_at) "
            "VALUES (?, ?, 'user', ?, 'entity', 'x', '{}', 'complete', '0', ?, ?)",
            [cid, view.removeprefix("cov_"), view, now, now],
        )
    finally:
        if con is not None:
            con.close()
