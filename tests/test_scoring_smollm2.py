"""Integration with the real SmolLM2-135M (alias smollm2-135m): fast path == naive reference."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pytest
from sources_helpers import ckplug_outcome

from ctxprior.scoring.models import load_model
from ctxprior.scoring.options import ScoreRequest
from ctxprior.scoring.runs.score import score_sample
from ctxprior.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from naive_scoring import naive_first_token

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


@functools.cache
def smollm2():
    """Loaded once per test session (the safetensors cache makes reloads fast anyway)."""
    return load_model("smollm2-135m", device="cpu")


def test_alias_loads_with_hash():
    lm = smollm2()
    assert lm.model_id == "smollm2-135m" and lm.revision.startswith("sha256:")
    assert lm.dtype == "float32" and lm.device == "cpu" and lm.quantization is None


def test_warehouse_run_matches_naive_reference(db_path):
    """Realistic workload: real and fake entities, base/assertive/negation contexts, an open and a
    closed query form; every persuasion and susceptibility value within 1e-4 nats of the naive
    prompt-by-prompt float64-numpy reference."""
    from ctxprior.ingest.demo import ingest_demo
    from ctxprior.sampling.draw import draw_sample

    lm = smollm2()
    with open_store(db_path) as store:
        ingest_demo(store, only=["demo"])
        sid = draw_sample(
            store,
            dataset="demo",
            relations=["capital"],
            n_entities=2,
            n_contexts=6,
            context_types=["base", "assertive", "negation"],
            seed=11,
        )
        s = score_sample(
            store,
            # ψ/χ against the reference: no outcome generation (64 tokens a prompt; tests/test_outcomes.py)
            ScoreRequest.of(
                sample=sid,
                model="smollm2-135m",
                batch_size=8,
                query_types=("open", "closed"),
                shard_size=2,
                outcome_rule="none",
            ),
            lm=lm,
            progress=False,
            log=lambda m: None,
        )
        assert s.status == "done"
        contexts = [
            r[0] for r in store.query("SELECT text FROM context WHERE sample_id = ? ORDER BY ordinal", [sid])
        ]
        ctx_ids = [
            r[0]
            for r in store.query("SELECT context_id FROM context WHERE sample_id = ? ORDER BY ordinal", [sid])
        ]
        facts = store.query(
            """SELECT f.fact_id, e.name, a.name, f.entity_kind FROM sample_fact sf
                            JOIN fact f USING (fact_id) JOIN entity e ON e.entity_id = f.entity_id
                            JOIN answer a ON a.answer_id = f.answer_id WHERE sf.sample_id = ? ORDER BY sf.ordinal""",
            [sid],
        )
        assert {k for *_, k in facts} == {"real", "fake"}
        forms = store.query("""SELECT query_form_id, template FROM query_form q JOIN relation r USING (relation_id)
                            WHERE r.short_name = 'capital' AND q.ordinal = 0 ORDER BY query_type DESC""")
        worst = 0.0
        for qf, template in forms:
            queries = [template.replace("{entity}", e).replace("{answer}", a) for _, e, a, _ in facts]
            naive = naive_first_token(lm.model, lm.tokenizer, contexts, queries)
            for (fid, *_), n in zip(facts, naive):
                got = dict(
                    store.query(
                        "SELECT context_id, persuasion FROM persuasion WHERE run_id = ? AND "
                        "query_form_id = ? AND fact_id = ?",
                        [s.run_id, qf, fid],
                    )
                )
                psi = np.array([got[c] for c in ctx_ids])
                chi, h, pe = store.query(
                    "SELECT susceptibility, mixture_entropy, prior_entropy FROM susceptibility "
                    "WHERE run_id = ? AND query_form_id = ? AND fact_id = ?",
                    [s.run_id, qf, fid],
                )[0]
                worst = max(
                    worst,
                    float(np.max(np.abs(psi - n["persuasion"]))),
                    abs(chi - n["susceptibility"]),
                    abs(h - n["mixture_entropy"]),
                    abs(pe - n["prior_entropy"]),
                )
        assert worst < 1e-4, worst
        print(f"max |fast - naive| = {worst:.2e} nats")


def test_quick_and_memorization_on_smollm2(db_path):
    from ctxprior.scoring.engine import Engine
    from ctxprior.scoring.outcomes import label
    from ctxprior.scoring.quick import quick_scores

    def label_generation(text, query_type, true, ctx):
        return label(text, "prefix", query_type, true, ctx)

    lm = smollm2()
    out = quick_scores(
        lm,
        "Q: What is the capital of {entity}?\nA:",
        ["France", "Zorblaxia"],
        ["The capital of France is Rome.\n", "The capital of Spain is Madrid.\n"],
    )
    assert out["model"] == "smollm2-135m" and len(out["entities"]) == 2
    assert all(len(e["persuasion"]) == 2 and e["susceptibility"] >= 0 for e in out["entities"])
    eng = Engine(lm, batch_size=4)
    gens = eng.greedy(
        eng.encode(["The capital of France is Paris.\nQ: What is the capital of France?\nA:"]), 4
    )
    assert gens[0].strip()
    # labels follow the generation's text, whatever SmolLM2 answers
    lab = label_generation(gens[0], "open", gens[0].strip().split("\n")[0][:2], "zzz")
    assert (
        lab == "ORIGINAL"
        and label_generation(gens[0], "open", "zzz", gens[0].strip().split("\n")[0][:2]) == "CONTEXT"
    )


def test_nq_swap_year_answers_are_decided_as_a_full_answer_comparison(tmp_path):
    """The issue's row: SmolLM2 splits numbers digit by digit, so ' 1977' and ' 1967' share their
    first token. With the defaults (a fixed sample: --estimator auto = answer-set) and with
    first-token (the pair flagged, decided from the full answers), the conflicting passage's
    forced choice agrees with comparing the two full answers' probabilities after it; its outcome
    is the label of SmolLM2's greedy generation by CK-PLUG's rule (OTHER when it gives neither
    year), the same generation in both runs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import ctxprior

    org = (
        "<P> The Lupus Foundation of America (LFA), founded in 1977 , is a national voluntary health "
        "organization based in Washington, D.C. with a network of chapters, offices and support groups "
        "located in communities throughout the United States . </P>"
    )
    row = {
        "question": "when was the lupus foundation of america founded",
        "org_context": org,
        "org_answer": ["1977"],
        "sub_context": org.replace("1977", "1967"),
        "sub_answer": ["1967"],
    }
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "nq.parquet")
    wh = ctxprior.open(str(tmp_path / "w.duckdb"), write=True)
    wh.datasets.ingest("nq-swap", str(tmp_path / "nq.parquet"))
    sid = wh.samples.draw("nq_swap", design="fixed")
    lm = smollm2()
    auto = wh.runs.score(sid, model=lm, query_types=("open",), progress=False, log=None)
    lines: list[str] = []
    first = wh.runs.score(
        sid, model=lm, query_types=("open",), estimator="first-token", progress=False, log=lines.append
    )
    got = wh.sql(
        "SELECT run_id, estimator, choice, choice_source, collision FROM v_reliance "
        "WHERE context_type = 'conflicting' ORDER BY run_id"
    )
    assert got.values.tolist() == [
        [auto.id, "answer-set", "CONTEXT", "argmax", False],
        [first.id, "first-token", "CONTEXT", "full-answer", True],
    ]
    gen = wh.sql(
        "SELECT g.text, r.outcome, r.outcome_source FROM v_reliance r JOIN generation g "
        "USING (run_id, query_form_id, fact_id, context_id) WHERE context_type = 'conflicting' ORDER BY run_id"
    )
    assert gen.text.nunique() == 1 and set(gen.outcome_source) == {"recall"}
    want = ckplug_outcome(gen.text[0], "1977", "1967")
    assert gen.outcome.tolist() == [want, want]
    print(f"SmolLM2 after the conflicting passage: {gen.text[0]!r} -> {want}")
    rates = wh.sql(
        f"SELECT conr, memr, other_rate, choice_conr, n_collision, n_full_answer FROM v_reliance_rates "
        f"WHERE run_id = {first.id} AND scope = 'all relations' AND context_type = 'conflicting'"
    )
    o = {"CONTEXT": [1.0, 0.0, 0.0], "ORIGINAL": [0.0, 1.0, 0.0], "OTHER": [0.0, 0.0, 1.0]}[want]
    assert rates.values.tolist() == [[*o, 1.0, 1, 1]]
    assert any("1 gold/context answer pairs share their first token" in m for m in lines)
