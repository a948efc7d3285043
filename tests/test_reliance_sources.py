"""The field's measures checked against their sources' formulas, written here independently, and
the outcomes right whatever the tokenizer (issue: answers that share a first token).

- CK-PLUG's Confidence Gain (Bi et al. 2025; ``relative_top_filter`` + ``_ck_decoding`` of their
  transformers fork): both distributions restricted to the tokens plausible in either (p >= 1 % of
  the top token's, or among the 10 most probable) and renormalized; CG = H(no context) − H(context).
- CUB's CCU (Hagström et al. 2025, App. C, eq. 1): the scaled difference of the context's token
  for a relevant context, of the model's own no-context top token for an irrelevant one.
- Collisions: a byte-level BPE that has never seen "1977" splits " 1977" and " 1967" into the
  same first token; the pair is flagged, and where that token is on top the outcome comes from
  the two full answers' sequence probabilities, here recomputed with a plain forward pass.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest
import torch
from scoring_helpers import tiny
from vocab_pass_helpers import one_query

import ctxprior
from ctxprior.measures import RELIANCE_MEASURES
from ctxprior.schema.versions import SCHEMA_VERSION
from ctxprior.scoring.metrics import reliance_np
from ctxprior.storage import open_store

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
N_ITEMS = 3  # the NQ-Swap fixture's questions


# ---------------------------------------------------------------- the sources' formulas


def _ckplug_cg(p_ctx: list[float], p_none: list[float], relative_top=0.01, keep_min=10) -> float:
    """CK-PLUG's confidence gain in plain Python: a token is filtered out only when it is below
    both distributions' thresholds (max p × relative_top, lowered to the keep_min-th largest p)."""

    def thresh(p):
        return min(max(p) * relative_top, sorted(p, reverse=True)[min(keep_min, len(p)) - 1])

    tc, t0 = thresh(p_ctx), thresh(p_none)
    kept = [i for i in range(len(p_ctx)) if p_ctx[i] >= tc or p_none[i] >= t0]

    def entropy(p):
        z = sum(p[i] for i in kept)
        return -sum((p[i] / z) * math.log(p[i] / z) for i in kept if p[i] > 0)

    return entropy(p_none) - entropy(p_ctx)


def _ccu(p_with: float, p_without: float) -> float:
    """CUB App. C, eq. 1."""
    if p_with >= p_without:
        return 0.0 if p_without == 1 else (p_with - p_without) / (1 - p_without)
    return (p_with - p_without) / p_without


def _random_rows(rng, n: int, v: int, peaked: float) -> np.ndarray:
    logits = rng.normal(size=(n, v)) * peaked
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


@pytest.mark.quick
@pytest.mark.parametrize("vocab, peaked", [(5, 1.0), (40, 3.0), (300, 6.0)])
def test_confidence_gain_is_ckpluggs_filtered_one_and_ccu_cubs(vocab, peaked):
    rng = np.random.default_rng(vocab)
    lp = _random_rows(rng, 4, vocab, peaked)
    l0 = _random_rows(rng, 1, vocab, peaked)[0]
    out = reliance_np(lp, l0, np.array([0, 1, -1, 2]), gold_answer=1)
    p, p0 = np.exp(lp), np.exp(l0)
    want = [_ckplug_cg(list(p[c]), list(p0)) for c in range(4)]
    assert np.allclose(out["confidence_gain"], want, atol=1e-12)
    vocab_cg = [-(p0 * l0).sum() + (p[c] * lp[c]).sum() for c in range(4)]
    assert np.allclose(out["confidence_gain_vocab"], vocab_cg, atol=1e-12)
    top0 = int(np.argmax(l0))
    assert np.allclose(out["scaled_difference_memory"], [_ccu(p[c, top0], p0[top0]) for c in range(4)])
    ctx = [0, 1, None, 2]
    sd = [np.nan if a is None else _ccu(p[c, a], p0[a]) for c, a in enumerate(ctx)]
    assert np.allclose(out["scaled_difference"], sd, equal_nan=True)
    # the device version gives the same
    dev = one_query(lp, l0, [0, 1, -1, 2], 1, dtype=torch.float32)
    for k in ("confidence_gain", "confidence_gain_vocab", "scaled_difference_memory"):
        assert np.allclose(dev[k], out[k], atol=1e-5), k


@pytest.mark.quick
def test_filter_keeps_ten_tokens_and_the_union_of_both():
    # a long tail below 1 % of the top: only the top 10 of each side stay, and their union counts
    tail = 0.7 ** np.arange(60)
    p = np.concatenate([[0.9], 0.1 * tail / tail.sum()])
    q = np.roll(p, 5)
    cg = reliance_np(np.log(p)[None], np.log(q), np.array([-1]))["confidence_gain"][0]
    assert math.isclose(cg, _ckplug_cg(list(p), list(q)), abs_tol=1e-12)
    assert not math.isclose(cg, -(q * np.log(q)).sum() + (p * np.log(p)).sum(), abs_tol=1e-3)


# ---------------------------------------------------------------- collisions, end to end


def _nq_swap(tmp_path: Path) -> Path:
    """The NQ-Swap fixture folder (years 1977 / 1967, New York / New Delhi)."""
    dst = tmp_path / "nq"
    shutil.copytree(FIXTURES / "nq-swap", dst)
    return dst


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """An NQ-Swap warehouse scored by a tiny model twice: the default (auto) and first-token."""
    tmp = tmp_path_factory.mktemp("rel")
    db = str(tmp / "w.duckdb")
    wh = ctxprior.open(db, write=True)
    wh.datasets.ingest("nq-swap", str(_nq_swap(tmp)))
    sid = wh.samples.draw("nq_swap", design="fixed")
    lm = tiny()
    lines: list[str] = []
    few = {"max_new_tokens": 4}  # outcomes labelled as by default, from 4 tokens (a tiny model never stops)
    auto = wh.runs.score(sid, model=lm, query_types=("open",), progress=False, log=lines.append, **few)
    first = wh.runs.score(
        sid, model=lm, query_types=("open",), estimator="first-token", progress=False, log=lines.append, **few
    )
    return wh, lm, auto.id, first.id, lines


def _full_answer_logprob(lm, prompt: str, answer: str) -> float:
    """log p(answer | prompt) by teacher forcing, with a space before it as the engine adds one."""
    tok = lm.tokenizer
    ids = tok(prompt + " " + answer, add_special_tokens=False)["input_ids"]
    n = len(tok(prompt, add_special_tokens=False)["input_ids"])
    with torch.no_grad():
        lp = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].double(), -1)
    return float(sum(lp[i - 1, ids[i]] for i in range(n, len(ids))))


def test_default_estimator_of_a_fixed_sample_reads_full_answers(scored):
    wh, lm, auto, _, _ = scored
    assert wh.sql(f"SELECT estimator FROM run WHERE run_id = {auto}").estimator[0] == "answer-set"
    prompts = wh.runs.prompts(auto)
    rel = wh.sql(
        "SELECT fact_id, context_id, choice, choice_source, collision, answer, context_answer "
        f"FROM v_reliance WHERE run_id = {auto}"
    )
    assert len(rel) == 2 * N_ITEMS and not rel.collision.any() and set(rel.choice_source) == {"argmax"}
    for r in rel.itertuples():
        prompt = prompts[(prompts.fact_id == r.fact_id) & (prompts.context_id == r.context_id)].prompt.iloc[0]
        # the answer set: the gold answer and the answers of the item's passages
        cands = list(dict.fromkeys([r.answer, *rel[rel.fact_id == r.fact_id].context_answer]))
        best = max(cands, key=lambda a: _full_answer_logprob(lm, prompt, a))
        want = "ORIGINAL" if best == r.answer else "CONTEXT" if best == r.context_answer else "OTHER"
        assert r.choice == want


def test_first_token_flags_shared_first_tokens_and_decides_them_from_full_answers(scored):
    wh, lm, _, first, lines = scored
    rel = wh.sql(
        f"SELECT answer, context_answer, conflict, collision, choice, choice_source, answer_top, "
        f"answer_gold FROM v_reliance WHERE run_id = {first} ORDER BY answer, context_answer"
    )
    years = rel[rel.answer == "1977"]
    assert years[years.conflict].collision.all()  # ' 1977' / ' 1967': one byte-level first token
    assert not rel[~rel.conflict].collision.fillna(False).any()
    for r in rel[rel.collision.fillna(False)].itertuples():
        # on top: decided from the full answers; elsewhere: OTHER, decided by the argmax itself
        if r.answer_top == r.answer_gold:
            assert r.choice_source == "full-answer" and r.choice in ("ORIGINAL", "CONTEXT")
        else:
            assert (r.choice_source, r.choice) == ("argmax", "OTHER")
    n = int(rel.collision.fillna(False).sum())
    rates = wh.sql(
        f"SELECT sum(n_collision) AS c FROM v_reliance_rates WHERE run_id = {first} AND scope = 'all relations'"
    )
    assert int(rates.c[0]) == n
    assert any(f"run {first}: {n} gold/context answer pairs share their first token" in m for m in lines)
    assert not any(f"run {scored[2]}:" in m and "share their first token" in m for m in lines)


@pytest.mark.quick
def test_full_answer_choice_matches_a_plain_forward_pass():
    from ctxprior.scoring.engine import Engine
    from ctxprior.scoring.estimators import full_answer_choice

    lm = tiny()
    prompts = ["The capital of France is Rome.\nQ: What is the capital of Spain?\nA:"] * 3
    pairs = [("1977", "1967"), ("Paris", "Madrid"), ("New York", "New Delhi")]
    got = full_answer_choice(Engine(lm), prompts, pairs)
    want = [
        int(_full_answer_logprob(lm, p, b) > _full_answer_logprob(lm, p, a))
        for p, (a, b) in zip(prompts, pairs)
    ]
    assert got.tolist() == want


# ---------------------------------------------------------------- prompts and the separator


def test_runs_prompts_show_the_separator_and_join_the_score_rows(scored, run_cli):
    wh, _, auto, _, _ = scored
    prompts = wh.runs.prompts(auto)
    assert len(prompts) == N_ITEMS * (2 + 1)  # each item: its gold and conflicting passage, and none
    with_ctx = prompts[prompts.context_id.notna()]
    assert all("</P>\nQ: " in p for p in with_ctx.prompt)  # passage, newline, question
    none = prompts[prompts.context_id.isna()]
    assert set(none.context_type) == {"none"} and all(p.startswith("Q: ") for p in none.prompt)
    keys = wh.sql(f"SELECT query_form_id, fact_id, context_id FROM persuasion WHERE run_id = {auto}")
    joined = with_ctx.merge(keys, on=["query_form_id", "fact_id", "context_id"])
    assert len(joined) == len(with_ctx) == len(keys)
    res = run_cli("runs", "prompts", auto, "--json", "--limit", "2", db=wh.path)
    assert res.exit_code == 0 and len(res.output.strip().splitlines()) == 2
    assert wh.sql("SELECT separator FROM dataset WHERE name = 'nq_swap'").separator[0] == "\n"


def test_separator_is_set_at_ingest_and_yago_keeps_its_own_newline(tmp_path, run_cli, db_path):
    nq = _nq_swap(tmp_path)
    assert run_cli("ingest", "nq-swap", nq, "--name", "a", "--separator", "\\n\\n").exit_code == 0
    assert run_cli("ingest", "nq-swap", nq, "--name", "b", "--separator", "").exit_code == 0
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    wh = ctxprior.open(db_path)
    got = dict(wh.sql("SELECT name, separator FROM dataset").itertuples(index=False))
    assert got == {"a": "\n\n", "b": "", "demo": ""}


V3_MEASURES = [m.name for m in RELIANCE_MEASURES if m.since == 3]
LATER_MEASURES = [m.name for m in RELIANCE_MEASURES if m.since >= 3]


def test_migration_v2_to_v3_moves_the_whole_vocabulary_gain(db_path, run_cli):
    open_store(db_path).close()
    con = duckdb.connect(db_path)
    con.execute("ALTER TABLE dataset DROP COLUMN separator")
    for col in LATER_MEASURES:  # the migration adds them from their declaration
        con.execute(f"ALTER TABLE reliance DROP COLUMN {col}")
    con.execute(
        "INSERT INTO dataset (dataset_id, name, source_format, ctxprior_version, created_at) VALUES (1, 'd', 't', '0', now())"
    )
    con.execute(
        "INSERT INTO reliance (run_id, query_form_id, fact_id, context_id, shift, jsd, confidence_gain, "
        "p_prior_answer, answer_top, answer_prior, outcome, keeps_prior) VALUES (1, 1, 1, 1, 0, 0, 0.25, 0.5, 1, 1, 'OTHER', true)"
    )
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()
    res = run_cli("migrate")
    steps = [f"migrated v{v} -> v{v + 1}" for v in range(2, SCHEMA_VERSION)]
    assert res.exit_code == 0 and all(s in res.output for s in steps), res.output
    wh = ctxprior.open(db_path)
    r = wh.sql("SELECT confidence_gain, confidence_gain_vocab, outcome_source, collision FROM reliance")
    assert r.iloc[0].tolist()[1:3] == [0.25, "argmax"] and r.confidence_gain.isna().all()
    assert wh.sql("SELECT separator FROM dataset").separator.tolist() == [""]
    # v3 -> v4: the forced choice that decided the old outcome is copied into its own columns
    assert wh.sql("SELECT outcome, choice, choice_source FROM reliance").iloc[0].tolist() == [
        "OTHER",
        "OTHER",
        "argmax",
    ]
    rates = wh.sql("SELECT outcome_rule, n_undecided, n_unlabelled FROM v_reliance_rates")
    assert len(rates) == 0  # no persuasion row joins this bare reliance row


# ---------------------------------------------------------------- Parquet round trips


def test_parquet_round_trip_keeps_the_new_columns_and_upgrades_a_v2_export(scored, tmp_path, run_cli):
    import hashlib
    import json

    import pyarrow.parquet as pq

    wh = scored[0]
    cols = "run_id, fact_id, context_id, confidence_gain, confidence_gain_vocab, outcome_source, collision"
    want = wh.sql(f"SELECT {cols} FROM reliance ORDER BY 1, 2, 3")
    out = tmp_path / "x"
    wh.parquet.export(str(out))
    back = ctxprior.open(str(tmp_path / "back.duckdb"), write=True)
    back.parquet.load(str(out))
    assert back.sql(f"SELECT {cols} FROM reliance ORDER BY 1, 2, 3").equals(want)
    assert back.sql("SELECT separator FROM dataset").separator.tolist() == ["\n"]
    # the same folder as schema v2 wrote it: no new columns, the whole-vocabulary gain in confidence_gain
    m = json.loads((out / "manifest.json").read_text())
    m["schema_version"] = 2
    drop = {
        "dataset": ["separator"],
        "reliance": LATER_MEASURES,
    }
    for e in m["tables"]:
        if e["name"] not in drop:
            continue
        e["columns"] = [c for c in e["columns"] if c["name"] not in drop[e["name"]]]
        for f in e["files"]:
            path = out / f["path"]
            t = pq.read_table(path)
            if e["name"] == "reliance":  # v2 stored the whole-vocabulary value under this name
                t = t.set_column(
                    t.schema.get_field_index("confidence_gain"), "confidence_gain", t["confidence_gain_vocab"]
                )
            pq.write_table(t.drop(drop[e["name"]]), path)
            f["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
            f.update({k: path.stat().st_size for k in ("bytes", "size") if k in f})
    (out / "manifest.json").write_text(json.dumps(m))
    old = tmp_path / "old.duckdb"
    res = run_cli("import", "parquet", out, db=str(old))
    assert res.exit_code == 0, res.output
    got = ctxprior.open(str(old)).sql(f"SELECT {cols} FROM reliance ORDER BY 1, 2, 3")
    assert got.confidence_gain.isna().all() and set(got.outcome_source) == {"argmax"}
    # first-token rows keep the whole-vocabulary value; an answer-set run's older rows held its
    # candidate-set values, which the v4 step moves out of the sources' columns (NULL there)
    first = scored[3]
    ft, wt = got.run_id == first, want.run_id == first
    assert np.allclose(got.confidence_gain_vocab[ft], want.confidence_gain_vocab[wt])
    assert got.confidence_gain_vocab[~ft].isna().all()
    assert ctxprior.open(str(old)).sql("SELECT separator FROM dataset").separator.tolist() == [""]


def test_rates_are_the_sources_rates_of_the_rows(scored):
    """v_reliance_rates against the papers' definitions, computed here from v_reliance's rows:
    ConR / MemR / MR over conflicts (Longpre et al. 2021), accuracy, ClashEval's context
    preference, CUB's BCU and mean CCU; undecided rows left out."""
    wh, _, auto, first, _ = scored
    for run in (auto, first):
        rows = wh.sql(f"SELECT * FROM v_reliance WHERE run_id = {run}")
        rates = wh.sql(
            f"SELECT * FROM v_reliance_rates WHERE run_id = {run} AND scope = 'all relations'"
        ).set_index("context_type")
        for ctype, g in rows.groupby("context_type"):
            r = rates.loc[ctype]
            c = g[g.conflict & g.outcome.notna()]
            if len(c):
                assert math.isclose(r.conr, (c.outcome == "CONTEXT").mean())
                assert math.isclose(r.memr, (c.outcome == "ORIGINAL").mean())
                decided = c[c.outcome != "OTHER"]
                mr = (decided.outcome == "ORIGINAL").mean() if len(decided) else None
                assert (
                    (r.memorization_ratio is None or np.isnan(r.memorization_ratio))
                    if mr is None
                    else math.isclose(r.memorization_ratio, mr)
                )
            assert math.isclose(r.accuracy, (g.outcome.dropna() == "ORIGINAL").mean())
            pref = g[g.answer_context.notna() & (g.answer_context != g.answer_prior)]
            if len(pref):
                assert math.isclose(r.context_preference, (pref.answer_top == pref.answer_context).mean())
            bcu = [
                row.keeps_prior
                if not row.is_relevant
                else (row.outcome == "CONTEXT" or (not row.conflict and row.outcome == "ORIGINAL"))
                for row in g.itertuples()
                if not row.is_relevant
                or (row.answer_context == row.answer_context and row.outcome is not None)
            ]
            assert math.isclose(r.bcu, float(np.mean(bcu)))
            ccu = np.where(g.is_relevant, g.scaled_difference, g.scaled_difference_memory)
            assert math.isclose(r.mean_ccu, float(np.nanmean(ccu)))
            assert r.n_collision == int(g.collision.fillna(False).sum())


@pytest.mark.parametrize(
    "preset, path, joint",
    [
        ("nq-swap", "nq-swap", "</P>\nQ: "),
        ("conflictqa", "conflictQA-popQA-chatgpt.json", "\nQ: "),
        ("counterfact", "counterfact.json", ".\nThe "),
        ("druid", "druid.tsv", '"\nIs the following claim'),
    ],
)
def test_every_preset_joins_passage_and_query_with_the_separator(tmp_path, preset, path, joint):
    src = FIXTURES / path
    if src.is_dir():
        src = _nq_swap(tmp_path)
    wh = ctxprior.open(str(tmp_path / "w.duckdb"), write=True)
    wh.datasets.ingest(preset, str(src))
    sid = wh.samples.draw(preset.replace("-", "_"), design="fixed", items=1)
    run = wh.runs.score(sid, model=tiny(), query_types=("open",), progress=False, log=None)
    prompts = wh.runs.prompts(run.id)
    with_ctx = prompts[prompts.context_id.notna()].prompt
    assert len(with_ctx) and all(joint in p for p in with_ctx), with_ctx.tolist()
