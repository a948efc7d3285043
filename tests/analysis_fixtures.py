"""Synthetic warehouses for the analysis tests: rows inserted directly, effects planted.

`make_yago_like(wh, ...)` builds relations with real + fake entities, base / assertive / negation
contexts (each entity mentioned in `per_type` contexts of each type), 2 open + 2 closed query
forms, one sample per seed and one done run per (model, seed), with persuasion ψ drawn as

    ψ = |noise| * scale + relevant_effect * [relevant] + assertive_effect * [assertive]
        + negation_effect * [negation] + fake_effect * [fake entity]

so the expected direction of each test is known; χ = mean ψ over the contexts (as in scoring),
generations are labelled CONTEXT with a probability rising with ψ.
`add_friend_enemy` and `add_gender` add the case-study datasets.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa
import pytest
from parquet_fixtures import record_covariate_view

NOW = datetime(2026, 1, 1)


def _dataset(wh, name, fmt):
    did = wh.next_id("dataset", "dataset_id")
    wh.insert_arrow(
        "dataset",
        {
            "dataset_id": [did],
            "name": [name],
            "source_format": [fmt],
            "ctxprior_version": ["test"],
            "created_at": [NOW],
        },
    )
    return did


def _sample(wh, did, seed, types):
    sid = wh.next_id("sample", "sample_id")
    wh.insert_arrow(
        "sample",
        {
            "sample_id": [sid],
            "dataset_id": [did],
            "design": ["paper"],
            "seed": [seed],
            "context_types": [types],
            "params_json": ["{}"],
            "ctxprior_version": ["test"],
            "created_at": [NOW],
        },
    )
    return sid


def _run(wh, sid, did, model, seed, kind="persuasion", **extra):
    """A done run row; `extra` sets more run columns (dtype, quantization, model_revision, config_json, ...)."""
    rid = wh.next_id("run", "run_id")
    row = {
        "run_id": rid,
        "kind": kind,
        "sample_id": sid,
        "dataset_id": did,
        "model": model,
        "estimator": "first-token" if kind == "persuasion" else "sampled",
        "seed": seed,
        "config_json": "{}",
        "ctxprior_version": "test",
        "status": "done",
        "started_at": NOW,
        **extra,
    }
    wh.insert_arrow("run", pa.table({k: pa.array([v]) for k, v in row.items()}))
    return rid


def _scores(wh, rid, psi_rows, rng, generations=True):
    """psi_rows: dict of arrays query_form_id, fact_id, context_id, persuasion, (context_answer_match)."""
    t = pa.table(
        {
            "run_id": np.full(len(psi_rows["fact_id"]), rid, dtype=np.int32),
            "query_form_id": psi_rows["query_form_id"],
            "fact_id": psi_rows["fact_id"],
            "context_id": psi_rows["context_id"],
            "persuasion": psi_rows["persuasion"],
            "entropy": np.ones(len(psi_rows["fact_id"])),
        }
    )
    wh.insert_arrow("persuasion", t)
    wh.execute(f"""INSERT INTO susceptibility
        SELECT run_id, query_form_id, fact_id, avg(persuasion), 1.0, 1.0, count(*), NULL, NULL
        FROM persuasion WHERE run_id = {rid} GROUP BY ALL""")
    if generations:
        psi = psi_rows["persuasion"]
        p_ctx = 1 / (1 + np.exp(-(psi - np.nanmedian(psi)) * 3))
        u = rng.random(len(psi))
        label = np.where(u < p_ctx * 0.9, "CONTEXT", np.where(u < 0.95, "ORIGINAL", "OTHER"))
        wh.insert_arrow(
            "generation",
            pa.table(
                {
                    "run_id": t["run_id"],
                    "query_form_id": t["query_form_id"],
                    "fact_id": t["fact_id"],
                    "context_id": t["context_id"],
                    "text": pa.array(["x"] * len(psi)),
                    "label": pa.array(label),
                }
            ),
        )


def make_yago_like(
    wh,
    n_relations=4,
    n_entities=8,
    per_type=1,
    models=("m-small",),
    seeds=(11,),
    relevant_effect=1.0,
    assertive_effect=0.5,
    negation_effect=0.0,
    fake_effect=0.5,
    scale=0.3,
    nan_relation: int | None = None,
    constant_relation: int | None = None,
    generations=True,
    rng_seed=0,
    dataset="synth",
):
    """Build the dataset, samples, runs and scores. Returns dict(run_ids=[...], relations=[...])."""
    rng = np.random.default_rng(rng_seed)
    with wh.transaction():
        did = _dataset(wh, dataset, "demo")
        rel0, ent0, ans0 = (
            wh.next_id("relation", "relation_id"),
            wh.next_id("entity", "entity_id"),
            wh.next_id("answer", "answer_id"),
        )
        fact0, qf0, ct0 = (
            wh.next_id("fact", "fact_id"),
            wh.next_id("query_form", "query_form_id"),
            wh.next_id("context_template", "context_template_id"),
        )
        rels, ents, answers, facts, qfs, cts = [], [], [], [], [], []
        eid, aid, fid, qid, tid = ent0, ans0, fact0, qf0, ct0
        layout = {}  # relation_id -> list of (fact_id, entity_id, answer_id, kind)
        for r in range(n_relations):
            rid = rel0 + r
            rels.append((rid, did, f"http://schema.org/rel{r}", f"rel{r}", False, r))
            layout[rid] = []
            rel_answers = []
            for i in range(n_entities):
                answers.append((aid, did, f"answer{r}_{i}"))
                rel_answers.append(aid)
                aid += 1
            for kind in ("real", "fake"):
                for i in range(n_entities):
                    ents.append((eid, did, f"{kind}{r}_{i}", kind, "Person"))
                    facts.append(
                        (fid, rid, i, eid, rel_answers[i], kind, 10 + 50 * i if kind == "real" else 1)
                    )
                    layout[rid].append((fid, eid, rel_answers[i], kind))
                    eid += 1
                    fid += 1
            for qt in ("open", "closed"):
                for o in range(2):
                    qfs.append((qid, rid, qt, o, f"{qt}_{o}", "Q {entity}?"))
                    qid += 1
            for o, ctype in enumerate(("base", "assertive", "negation")):
                cts.append((tid, rid, ctype, 0, f"{ctype} {{entity}} {{answer}}"))
                tid += 1
        wh.insert_arrow(
            "relation",
            pa.table(
                list(zip(*rels)),
                names=["relation_id", "dataset_id", "name", "short_name", "is_reverse", "position"],
            ),
        )
        wh.insert_arrow(
            "entity",
            pa.table(list(zip(*ents)), names=["entity_id", "dataset_id", "name", "kind", "entity_class"]),
        )
        wh.insert_arrow("answer", pa.table(list(zip(*answers)), names=["answer_id", "dataset_id", "name"]))
        wh.insert_arrow(
            "fact",
            pa.table(
                list(zip(*facts)),
                names=[
                    "fact_id",
                    "relation_id",
                    "position",
                    "entity_id",
                    "answer_id",
                    "entity_kind",
                    "predicate_degree",
                ],
            ),
        )
        wh.insert_arrow(
            "query_form",
            pa.table(
                list(zip(*qfs)),
                names=["query_form_id", "relation_id", "query_type", "ordinal", "name", "template"],
            ),
        )
        wh.insert_arrow(
            "context_template",
            pa.table(
                list(zip(*cts)),
                names=["context_template_id", "relation_id", "context_type", "ordinal", "template"],
            ),
        )
        ctype_tid = {(c[1], c[2]): c[0] for c in cts}
        run_ids = []
        for seed in seeds:
            sid = _sample(wh, did, seed, "base,assertive,negation")
            # contexts: each entity mentioned per_type times per type, answers from the pool
            srng = np.random.default_rng(seed)
            ctx_rows = []
            ctx_meta = {}
            cid = wh.next_id("context", "context_id")
            for rid, fl in layout.items():
                pool = [a for _, _, a, _ in fl]
                ordn = 0
                for f_, e_, a_, k_ in fl:
                    for ctype in ("base", "assertive", "negation"):
                        for _ in range(per_type):
                            ans = int(srng.choice(pool))
                            ctx_rows.append(
                                (
                                    cid,
                                    sid,
                                    rid,
                                    ordn,
                                    ctype_tid[(rid, ctype)],
                                    ctype,
                                    e_,
                                    ans,
                                    f"{ctype} {e_} {ans}",
                                )
                            )
                            ctx_meta.setdefault(rid, []).append((cid, ctype, e_))
                            cid += 1
                            ordn += 1
            wh.insert_arrow(
                "context",
                pa.table(
                    list(zip(*ctx_rows)),
                    names=[
                        "context_id",
                        "sample_id",
                        "relation_id",
                        "ordinal",
                        "context_template_id",
                        "context_type",
                        "entity_id",
                        "answer_id",
                        "text",
                    ],
                ),
            )
            wh.insert_arrow(
                "sample_fact",
                pa.table(
                    list(
                        zip(
                            *[
                                (sid, f_, rid, i)
                                for rid, fl in layout.items()
                                for i, (f_, _, _, _) in enumerate(fl)
                            ]
                        )
                    ),
                    names=["sample_id", "fact_id", "relation_id", "ordinal"],
                ),
            )
            for model in models:
                run_id = _run(wh, sid, did, model, seed)
                run_ids.append(run_id)
                cols = {k: [] for k in ("query_form_id", "fact_id", "context_id", "persuasion")}
                for r_i, (rid, fl) in enumerate(layout.items()):
                    rel_q = [q for q in qfs if q[1] == rid]
                    cm = ctx_meta[rid]
                    c_ids = np.array([c[0] for c in cm])
                    c_type = np.array([c[1] for c in cm])
                    c_ent = np.array([c[2] for c in cm])
                    for q in rel_q:
                        for f_, e_, a_, k_ in fl:
                            noise = np.abs(rng.normal(size=len(cm))) * scale
                            psi = (
                                noise
                                + relevant_effect * (c_ent == e_)
                                + assertive_effect * (c_type == "assertive")
                                + negation_effect * (c_type == "negation")
                                + fake_effect * (k_ == "fake")
                            )
                            if constant_relation == r_i:
                                psi = np.full(len(cm), 0.25)
                            if nan_relation == r_i and f_ == fl[0][0]:
                                psi = psi.copy()
                                psi[0] = np.nan
                            cols["query_form_id"].append(np.full(len(cm), q[0]))
                            cols["fact_id"].append(np.full(len(cm), f_))
                            cols["context_id"].append(c_ids)
                            cols["persuasion"].append(psi)
                _scores(wh, run_id, {k: np.concatenate(v) for k, v in cols.items()}, rng, generations)
                # per-layer χ (as `score --per-layer`): 5 layers growing to the final χ
                wh.execute(
                    """INSERT INTO susceptibility_layer SELECT run_id, query_form_id, fact_id, l,
                                     susceptibility * l / 4.0, mixture_entropy, mean_conditional_entropy
                              FROM susceptibility, range(5) t(l) WHERE run_id = ?""",
                    [run_id],
                )
    return {"run_ids": run_ids, "relations": [f"rel{r}" for r in range(n_relations)], "dataset_id": did}


def add_friend_enemy(wh, n_pairs=12, model="m-small", friend_effect=0.5, rng_seed=1):
    """friend_enemy dataset: one relation, 2 open query forms, loves/hates contexts; friends planted
    more susceptible."""
    rng = np.random.default_rng(rng_seed)
    with wh.transaction():
        did = _dataset(wh, "friend_enemy", "friend_enemy")
        rid = wh.next_id("relation", "relation_id")
        wh.insert_arrow(
            "relation",
            {
                "relation_id": [rid],
                "dataset_id": [did],
                "name": ["relationship"],
                "short_name": ["relationship"],
                "is_reverse": [False],
                "position": [0],
            },
        )
        e0, a0, f0 = (
            wh.next_id("entity", "entity_id"),
            wh.next_id("answer", "answer_id"),
            wh.next_id("fact", "fact_id"),
        )
        labels = ["friend" if i % 2 == 0 else "enemy" for i in range(n_pairs)]
        wh.insert_arrow(
            "entity",
            {
                "entity_id": [e0 + i for i in range(n_pairs)],
                "dataset_id": [did] * n_pairs,
                "name": [f"A{i}" for i in range(n_pairs)],
                "kind": ["real"] * n_pairs,
            },
        )
        wh.insert_arrow(
            "answer",
            {
                "answer_id": [a0 + i for i in range(n_pairs)],
                "dataset_id": [did] * n_pairs,
                "name": [f"B{i}" for i in range(n_pairs)],
            },
        )
        wh.insert_arrow(
            "fact",
            {
                "fact_id": [f0 + i for i in range(n_pairs)],
                "relation_id": [rid] * n_pairs,
                "position": list(range(n_pairs)),
                "entity_id": [e0 + i for i in range(n_pairs)],
                "answer_id": [a0 + i for i in range(n_pairs)],
                "entity_kind": ["real"] * n_pairs,
                "label": labels,
                "category": ["movie"] * n_pairs,
            },
        )
        q0 = wh.next_id("query_form", "query_form_id")
        wh.insert_arrow(
            "query_form",
            {
                "query_form_id": [q0, q0 + 1],
                "relation_id": [rid, rid],
                "query_type": ["open", "open"],
                "ordinal": [0, 1],
                "name": ["open_0", "open_1"],
                "template": ["The relationship between {} and {} is"] * 2,
            },
        )
        t0 = wh.next_id("context_template", "context_template_id")
        wh.insert_arrow(
            "context_template",
            {
                "context_template_id": [t0, t0 + 1],
                "relation_id": [rid, rid],
                "context_type": ["loves", "hates"],
                "ordinal": [0, 0],
                "template": ["{entity} loves {answer}", "{entity} hates {answer}"],
            },
        )
        sid = _sample(wh, did, 0, "loves,hates")
        c0 = wh.next_id("context", "context_id")
        ctx = [
            (
                c0 + 2 * i + j,
                sid,
                rid,
                2 * i + j,
                t0 + j,
                ("loves", "hates")[j],
                e0 + i,
                a0 + i,
                f"A{i} {('loves', 'hates')[j]} B{i}",
            )
            for i in range(n_pairs)
            for j in range(2)
        ]
        wh.insert_arrow(
            "context",
            pa.table(
                list(zip(*ctx)),
                names=[
                    "context_id",
                    "sample_id",
                    "relation_id",
                    "ordinal",
                    "context_template_id",
                    "context_type",
                    "entity_id",
                    "answer_id",
                    "text",
                ],
            ),
        )
        run_id = _run(wh, sid, did, model, 0)
        cols = {k: [] for k in ("query_form_id", "fact_id", "context_id", "persuasion")}
        for q in (q0, q0 + 1):
            for i in range(n_pairs):
                psi = np.abs(rng.normal(size=len(ctx))) * 0.2 + friend_effect * (labels[i] == "friend")
                cols["query_form_id"].append(np.full(len(ctx), q))
                cols["fact_id"].append(np.full(len(ctx), f0 + i))
                cols["context_id"].append(np.array([c[0] for c in ctx]))
                cols["persuasion"].append(psi)
        _scores(wh, run_id, {k: np.concatenate(v) for k, v in cols.items()}, rng, generations=False)
    return run_id


GENDER_TYPES = ("feminine_stereotype", "masculine_stereotype", "feminine_swapped", "masculine_swapped")


def add_gender(
    wh, n_names=6, n_queries=3, n_contexts=4, model="m-small", swapped_effect=0.6, rng_seed=2, split=False
):
    """gender dataset: names of both classes, 4 context collections in one sample; masculine names
    planted more susceptible to the feminine_swapped collection (M* in Fig. 11).
    split=True: one sample (and run) per collection instead, so ψ is measured against that
    collection alone; returns the list of the 4 run ids."""
    rng = np.random.default_rng(rng_seed)
    with wh.transaction():
        did = _dataset(wh, "gender", "gender")
        rid = wh.next_id("relation", "relation_id")
        wh.insert_arrow(
            "relation",
            {
                "relation_id": [rid],
                "dataset_id": [did],
                "name": ["gender"],
                "short_name": ["gender"],
                "is_reverse": [False],
                "position": [0],
            },
        )
        e0, f0 = wh.next_id("entity", "entity_id"), wh.next_id("fact", "fact_id")
        cls = ["feminine"] * n_names + ["masculine"] * n_names
        n = len(cls)
        wh.insert_arrow(
            "entity",
            {
                "entity_id": [e0 + i for i in range(n)],
                "dataset_id": [did] * n,
                "name": [f"name{i}" for i in range(n)],
                "kind": ["real"] * n,
                "entity_class": cls,
            },
        )
        wh.insert_arrow(
            "fact",
            pa.table(
                {
                    "fact_id": [f0 + i for i in range(n)],
                    "relation_id": [rid] * n,
                    "position": list(range(n)),
                    "entity_id": [e0 + i for i in range(n)],
                    "answer_id": pa.array([None] * n, pa.int32()),
                    "entity_kind": ["real"] * n,
                }
            ),
        )
        q0 = wh.next_id("query_form", "query_form_id")
        wh.insert_arrow(
            "query_form",
            {
                "query_form_id": [q0 + i for i in range(n_queries)],
                "relation_id": [rid] * n_queries,
                "query_type": ["open"] * n_queries,
                "ordinal": list(range(n_queries)),
                "name": [f"open_{i}" for i in range(n_queries)],
                "template": ["{entity} is good at"] * n_queries,
            },
        )
        t0 = wh.next_id("context_template", "context_template_id")
        wh.insert_arrow(
            "context_template",
            {
                "context_template_id": [t0 + j for j in range(4)],
                "relation_id": [rid] * 4,
                "context_type": list(GENDER_TYPES),
                "ordinal": [0] * 4,
                "template": ["x"] * 4,
            },
        )
        run_ids = []
        for types in [[t] for t in GENDER_TYPES] if split else [list(GENDER_TYPES)]:
            sid = _sample(wh, did, 0, ",".join(types))
            c0 = wh.next_id("context", "context_id")
            ctx = [
                (c0 + j * n_contexts + i, t0 + GENDER_TYPES.index(t), t, f"{t} sentence {i}")
                for j, t in enumerate(types)
                for i in range(n_contexts)
            ]
            wh.insert_arrow(
                "context",
                pa.table(
                    {
                        "context_id": [c[0] for c in ctx],
                        "sample_id": [sid] * len(ctx),
                        "relation_id": [rid] * len(ctx),
                        "ordinal": list(range(len(ctx))),
                        "context_template_id": [c[1] for c in ctx],
                        "context_type": [c[2] for c in ctx],
                        "entity_id": pa.array([None] * len(ctx), pa.int32()),
                        "answer_id": pa.array([None] * len(ctx), pa.int32()),
                        "text": [c[3] for c in ctx],
                    }
                ),
            )
            run_id = _run(wh, sid, did, model, 0)
            run_ids.append(run_id)
            ctype = np.array([c[2] for c in ctx])
            cols = {k: [] for k in ("query_form_id", "fact_id", "context_id", "persuasion")}
            for q in range(n_queries):
                for i in range(n):
                    psi = np.abs(rng.normal(size=len(ctx))) * 0.2 + swapped_effect * (
                        (ctype == "feminine_swapped") & (cls[i] == "masculine")
                    )
                    cols["query_form_id"].append(np.full(len(ctx), q0 + q))
                    cols["fact_id"].append(np.full(len(ctx), f0 + i))
                    cols["context_id"].append(np.array([c[0] for c in ctx]))
                    cols["persuasion"].append(psi)
            _scores(wh, run_id, {k: np.concatenate(v) for k, v in cols.items()}, rng, generations=False)
    return run_ids if split else run_ids[0]


def add_cooccurrence(wh, seen_fakes=()):
    """A covariate view cov_cooccurrence(dataset, relation, entity, answer, log_count): real entities get
    a count falling with susceptibility's planted noise order; fakes 0 except `seen_fakes` names."""
    seen = ", ".join(f"'{s}'" for s in seen_fakes) or "''"
    wh.execute(f"""CREATE OR REPLACE VIEW cov_cooccurrence AS
        SELECT dataset, relation, entity, answer,
               CASE WHEN entity_kind = 'real' THEN ln(1 + 10 * (position + 1))
                    WHEN entity IN ({seen}) THEN 1.0 ELSE 0.0 END AS log_count
        FROM v_entity""")
    if not wh.scalar("SELECT count(*) FROM covariate WHERE view_name = 'cov_cooccurrence'"):
        record_covariate_view(wh, "cov_cooccurrence")  # the catalog makes it ctxprior's own


ANALYZE_K = 200


@pytest.fixture(scope="session")
def analyzed_warehouse(tmp_path_factory) -> str:
    """Path of a warehouse with 2 models x 2 seeds (NaN relation rel2, constant relation rel3),
    friend-enemy and gender runs, a co-occurrence covariate, analyzed with k = ANALYZE_K.
    Import this fixture into a test module to use it (it is built once per session)."""
    from ctxprior.analyses.driver import analyze
    from ctxprior.storage import open_store

    path = str(tmp_path_factory.mktemp("analyzed") / "wh.duckdb")
    store = open_store(path, threads=1)  # analyze stores numbers on one thread (Store.one_thread)
    make_yago_like(store, models=("m-small", "m-big"), seeds=(11, 12), nan_relation=2, constant_relation=3)
    add_friend_enemy(store)
    add_gender(store)
    add_cooccurrence(store, seen_fakes=["fake0_1"])
    analyze(store, k=ANALYZE_K, log=lambda m: None)
    store.close()
    return path


def add_dynamic(wh, n_facts=6, model="m-dyn", rng_seed=3, **run_extra):
    """A DynamicQA-like dataset and one finished dynamic run with `dynamicqa_score` rows written
    directly (no model): facts in the three partitions, conditions none / original / counter with
    random SE, CP and persuaded / stubborn labels. Returns the run id."""
    rng = np.random.default_rng(rng_seed)
    parts = [("static", "temporal", "disputable")[i % 3] for i in range(n_facts)]
    with wh.transaction():
        did = _dataset(wh, "dynamicqa", "dynamicqa")
        rid = wh.next_id("relation", "relation_id")
        wh.insert_arrow(
            "relation",
            {
                "relation_id": [rid],
                "dataset_id": [did],
                "name": ["dynamicqa"],
                "short_name": ["dynamicqa"],
                "is_reverse": [False],
                "position": [0],
            },
        )
        e0, a0, f0 = (
            wh.next_id("entity", "entity_id"),
            wh.next_id("answer", "answer_id"),
            wh.next_id("fact", "fact_id"),
        )
        ids = list(range(n_facts))
        wh.insert_arrow(
            "entity",
            {
                "entity_id": [e0 + i for i in ids],
                "dataset_id": [did] * n_facts,
                "name": [f"subject{i}" for i in ids],
                "kind": ["real"] * n_facts,
            },
        )
        wh.insert_arrow(
            "answer",
            {
                "answer_id": [a0 + i for i in range(2 * n_facts)],
                "dataset_id": [did] * 2 * n_facts,
                "name": [f"object{i}" for i in range(2 * n_facts)],
            },
        )
        wh.insert_arrow(
            "fact",
            {
                "fact_id": [f0 + i for i in ids],
                "relation_id": [rid] * n_facts,
                "position": ids,
                "entity_id": [e0 + i for i in ids],
                "answer_id": [a0 + i for i in ids],
                "entity_kind": ["real"] * n_facts,
            },
        )
        wh.insert_arrow(
            "dynamicqa_fact",
            pa.table(
                {
                    "fact_id": [f0 + i for i in ids],
                    "dataset_id": [did] * n_facts,
                    "partition": parts,
                    "source_id": ids,
                    "source_row": ids,
                    "counter_answer_id": [a0 + n_facts + i for i in ids],
                    "num_edits": rng.integers(0, 50, n_facts).astype(float),
                    "s_pop": rng.random(n_facts) * 1e4,
                    "o_pop": [
                        None if p == "disputable" else float(v)
                        for p, v in zip(parts, rng.random(n_facts) * 1e4)
                    ],
                    "question": [f"Q{i}?" for i in ids],
                    "context": [f"C{i} [ENTITY]." for i in ids],
                    "context_template": [f"C{i} {{answer}}." for i in ids],
                    "mask_count": [1] * n_facts,
                    "mask_kind": ["entity_token"] * n_facts,
                }
            ),
        )
        run_id = _run(wh, None, did, model, 0, kind="dynamic", **run_extra)
        rows = []
        for i in ids:
            for cond in ("none", "original", "counter"):
                ctx = cond != "none"
                pers = bool(rng.random() < 0.5) if ctx else None
                rows.append(
                    {
                        "run_id": run_id,
                        "fact_id": f0 + i,
                        "condition": cond,
                        "n_samples": 3,
                        "n_clusters": int(rng.integers(1, 4)),
                        "semantic_entropy": float(rng.random()),
                        "semantic_entropy_mc": float(rng.random() * 2),
                        "cp": float(rng.random()) if ctx else None,
                        "context_answer": f"object{i}" if ctx else None,
                        "greedy_answer": f"object{i}",
                        "greedy_matches_gold": bool(rng.random() < 0.5),
                        "greedy_matches_context": pers,
                        "sample_accuracy": float(rng.random()),
                        "persuaded": pers,
                        "stubborn": (not pers) if ctx else None,
                    }
                )
        wh.insert_arrow("dynamicqa_score", pa.Table.from_pylist(rows))
    return run_id


def _copy_row(wh, table, key, value, changes: dict) -> None:
    """INSERT a copy of one row of `table` with some columns changed."""
    types = dict(
        wh.query(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]
        )
    )
    repl = ", ".join(f"?::{types[c]} AS {c}" for c in changes)
    wh.execute(
        f"INSERT INTO {table} BY NAME SELECT * REPLACE ({repl}) FROM {table} WHERE {key} = ?",
        [*changes.values(), value],
    )


def clone_run(wh, run_id, sample=None, jitter=0.1, **run_changes):
    """A copy of a done persuasion run with its scores multiplied by (1 + jitter * u), u in [0, 1)
    from a hash (so seeds differ a little). sample=None: same sample; a dict: a new sample row
    copied from the run's sample with these changes (e.g. {"seed": 13, "n_contexts": 7}); its
    contexts are the old ones (the across-seed match is on (relation, text)).
    run_changes: run columns to change (dtype, quantization, model_revision, config_json, status).
    Returns the new run id."""
    with wh.transaction():
        sid = wh.scalar("SELECT sample_id FROM run WHERE run_id = ?", [run_id])
        if sample is not None:
            new_sid = wh.next_id("sample", "sample_id")
            _copy_row(wh, "sample", "sample_id", sid, {"sample_id": new_sid, **sample})
            sid = new_sid
        new = wh.next_id("run", "run_id")
        _copy_row(wh, "run", "run_id", run_id, {"run_id": new, "sample_id": sid, **run_changes})
        wh.execute(f"""INSERT INTO persuasion BY NAME
            SELECT * REPLACE ({new} AS run_id,
                   persuasion * (1 + {jitter} * (hash(query_form_id, fact_id, context_id, {new}) % 1000) / 1000.0)
                   AS persuasion)
            FROM persuasion WHERE run_id = {run_id}""")
        wh.execute(f"""INSERT INTO susceptibility
            SELECT run_id, query_form_id, fact_id, avg(persuasion), 1.0, 1.0, count(*), NULL, NULL
            FROM persuasion WHERE run_id = {new} GROUP BY ALL""")
    return new
