"""DynamicQA: ingest (real files and CSV edge cases), samples, semantic metrics, dynamic runs."""

from __future__ import annotations

import csv
import itertools
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxprior.ingest.dynamicqa import FILES
from ctxprior.schema import open_warehouse
from ctxprior.scoring import semantic as sem


def dq_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "dynamicqa"


def subset(shared_dir: Path, out: Path, rows: dict[str, list[int]] | int = 6) -> Path:
    """Copy selected data rows of the real files (re-written with a CSV writer, same quoting)."""
    out.mkdir(parents=True, exist_ok=True)
    for part, name in FILES.items():
        with open(dq_dir(shared_dir) / name, encoding="utf-8", newline="") as f:
            recs = list(csv.reader(f))
        header, data = recs[0], recs[1:]
        pick = rows[part] if isinstance(rows, dict) else list(range(rows))
        with open(out / name, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for i in pick:
                w.writerow(data[i])
    return out


def edge_rows(shared_dir: Path) -> dict[str, list[int]]:
    """Rows covering the edge cases: embedded newlines, duplicate stray index, blank popularity."""
    pick: dict[str, list[int]] = {}
    for part, name in FILES.items():
        with open(dq_dir(shared_dir) / name, encoding="utf-8", newline="") as f:
            rdr = csv.DictReader(f)
            data = list(rdr)
        idx = [0, 1]
        nl = [i for i, r in enumerate(data) if "\n" in r["context"]]
        if nl:  # static and temporal only (the disputable contexts are single sentences)
            idx.append(nl[0])
        if part == "disputable":
            seen: dict[str, int] = {}
            for i, r in enumerate(data):
                if r[""] in seen:
                    idx += [seen[r[""]], i]
                    break
                seen[r[""]] = i
        else:
            idx.append(next(i for i, r in enumerate(data) if r["s_pop_new"] == ""))
            idx.append(next(i for i, r in enumerate(data) if r["o_pop_new"] == ""))
        pick[part] = sorted(set(idx))
    return pick


# ---- ingest ---------------------------------------------------------------------------------

def test_ingest_real_files(shared_dir, run_cli, db_path):
    res = run_cli("ingest", "dynamicqa", dq_dir(shared_dir))
    assert res.exit_code == 0, res.output
    assert "5689 facts (static 2500, temporal 2495, disputable 694)" in res.output
    with open_warehouse(db_path, read_only=True) as wh:
        counts = dict(wh.query("SELECT partition, count(*) FROM v_dynamicqa_fact GROUP BY 1"))
        assert counts == {"static": 2500, "temporal": 2495, "disputable": 694}
        # 108 contexts with embedded newlines (README), kept verbatim
        assert wh.scalar("SELECT count(*) FROM dynamicqa_fact WHERE contains(context, chr(10))") == 108
        # blank popularity -> NULL: static 24/1, temporal 14/8
        nulls = {r[0]: (r[1], r[2]) for r in wh.query(
            "SELECT partition, count(*) FILTER (WHERE s_pop_new IS NULL), count(*) FILTER (WHERE o_pop_new IS NULL) "
            "FROM dynamicqa_fact WHERE partition <> 'disputable' GROUP BY 1")}
        assert nulls == {"static": (24, 1), "temporal": (14, 8)}
        # the stray index is not unique in the disputable file; (partition, id) is the key
        assert wh.scalar("SELECT count(DISTINCT source_index) FROM dynamicqa_fact WHERE partition='disputable'") == 551
        assert wh.scalar("SELECT count(*) FROM (SELECT DISTINCT partition, id FROM v_dynamicqa_fact)") == 5689
        # three disputable ids also occur in the static file
        assert wh.scalar("SELECT count(*) FROM (SELECT id FROM v_dynamicqa_fact GROUP BY id HAVING count(*) > 1)") >= 3
        # aliases: one row per alias, obj always among them
        assert wh.scalar("SELECT count(*) FROM v_dynamicqa_fact v WHERE NOT EXISTS (SELECT 1 FROM dynamicqa_alias a "
                         "WHERE a.fact_id = v.fact_id AND a.alias = v.object)") == 0
        row = wh.query("SELECT subject, relation, object, replace_name, num_edits, s_pop, o_pop, question "
                       "FROM v_dynamicqa_fact WHERE partition = 'temporal' AND id = 4222362")[0]
        assert row == ("George Rankin", "occupation", "politician", "judge", 4.0, 142.0, 25692.0,
                       "What is George Rankin's occupation?")
        # question templates per relation reproduce every question
        bad = wh.scalar("""SELECT count(*) FROM v_dynamicqa_fact v JOIN query_form q
                           ON q.relation_id = v.relation_id AND q.name = 'open_0'
                           WHERE replace(q.template, '{entity}', v.subject) <> 'Q: ' || v.question || chr(10) || 'A:'
                             AND v.partition <> 'disputable'""")
        assert bad == 0
        assert wh.scalar("SELECT count(DISTINCT relation_id) FROM v_dynamicqa_fact WHERE partition <> 'disputable'") == 16
    # ingesting again under the same name is a user error and changes nothing
    res2 = run_cli("ingest", "dynamicqa", dq_dir(shared_dir))
    assert res2.exit_code == 2 and "already exists" in res2.output


def test_ingest_edge_case_rows(shared_dir, tmp_path, run_cli, db_path):
    d = subset(shared_dir, tmp_path / "dq", edge_rows(shared_dir))
    res = run_cli("ingest", "dynamicqa", d, "--name", "dq_small")
    assert res.exit_code == 0, res.output
    with open_warehouse(db_path, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM dynamicqa_fact WHERE contains(context, chr(10))") == 2
        assert wh.scalar("SELECT count(*) FROM dynamicqa_fact WHERE partition='disputable'") == \
            wh.scalar("SELECT count(DISTINCT source_index) FROM dynamicqa_fact WHERE partition='disputable'") + 1
        assert wh.scalar("SELECT count(*) FROM dynamicqa_fact WHERE s_pop_new IS NULL AND partition <> 'disputable'") >= 2
        assert wh.scalar("SELECT count(*) FROM dynamicqa_fact WHERE o_pop_new IS NULL AND partition <> 'disputable'") >= 2
        # the masked template renders back to the context with obj (static/temporal)
        for ctx, tpl, obj in wh.query("SELECT v.context, df.context_template, v.object FROM v_dynamicqa_fact v "
                                      "JOIN dynamicqa_fact df USING (fact_id) WHERE v.partition <> 'disputable'"):
            assert tpl.format(answer=obj) == ctx.replace("[ENTITY]", obj).strip()
        # disputable: obj is swapped in the literal text, with the authors' "This article is about" prefix
        for ctx, tpl, obj, subj in wh.query("SELECT v.context, df.context_template, v.object, v.subject FROM "
                                            "v_dynamicqa_fact v JOIN dynamicqa_fact df USING (fact_id) "
                                            "WHERE v.partition = 'disputable'"):
            assert tpl.format(answer=obj) == f"This article is about {subj}. " + ctx.strip()


@pytest.mark.parametrize("problem, expect", [
    ("missing", "Temporal_final.csv: missing"),
    ("bad_number", "Static_final.csv: data row 2"),
    ("dup_id", "Disputable_final.csv: id"),
    ("no_mask", "no [ENTITY] mask"),
    ("bad_json", "possible_answers"),
    ("bad_header", "not a DynamicQA static file"),
])
def test_bad_input_is_one_line_and_leaves_warehouse_unchanged(shared_dir, tmp_path, run_cli, db_path, problem, expect):
    d = subset(shared_dir, tmp_path / "dq", 4)

    def edit(name, fn):
        p = d / name
        with open(p, encoding="utf-8", newline="") as f:
            recs = list(csv.reader(f))
        fn(recs)
        with open(p, "w", encoding="utf-8", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(recs)

    if problem == "missing":
        (d / "Temporal_final.csv").unlink()
    elif problem == "bad_number":
        edit("Static_final.csv", lambda r: r[2].__setitem__(12, "many"))
    elif problem == "dup_id":
        edit("Disputable_final.csv", lambda r: r[3].__setitem__(1, r[1][1]))
    elif problem == "no_mask":
        edit("Temporal_final.csv", lambda r: r[1].__setitem__(13, r[1][13].replace("[ENTITY]", "X")))
    elif problem == "bad_json":
        edit("Static_final.csv", lambda r: r[1].__setitem__(11, "['a', 'b']"))
    elif problem == "bad_header":
        edit("Static_final.csv", lambda r: r[0].__setitem__(3, "relation"))
    with open_warehouse(db_path):
        pass
    before = open_warehouse(db_path, read_only=True)
    n_before = {t: before.scalar(f'SELECT count(*) FROM "{t}"') for t in ("dataset", "fact", "dynamicqa_fact")}
    before.close()
    res = run_cli("ingest", "dynamicqa", d)
    assert res.exit_code == 2
    out = res.output.strip()
    assert out.startswith("Error: ") and "\n" not in out and expect in out, out
    with open_warehouse(db_path, read_only=True) as wh:
        assert {t: wh.scalar(f'SELECT count(*) FROM "{t}"') for t in n_before} == n_before


def test_sample_dynamic_contexts(shared_dir, tmp_path, run_cli, db_path):
    d = subset(shared_dir, tmp_path / "dq", 3)
    assert run_cli("ingest", "dynamicqa", d).exit_code == 0
    res = run_cli("sample-dynamic", "--limit", "2")
    assert res.exit_code == 0, res.output
    sid = int(res.output.strip().splitlines()[-1])
    assert int(run_cli("sample-dynamic", "--limit", "2").output.strip().splitlines()[-1]) == sid  # reused
    with open_warehouse(db_path, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM sample_fact WHERE sample_id = ?", [sid]) == 6
        rows = wh.query("""SELECT dc.condition, c.text, v.object, v.replace_name, v.context, v.partition,
                                  c.answer_id = v.answer_id, c.answer_id = v.counter_answer_id, c.entity_id = v.entity_id
                           FROM dynamicqa_context dc JOIN context c USING (context_id)
                           JOIN v_dynamicqa_fact v ON v.fact_id = dc.fact_id WHERE dc.sample_id = ?""", [sid])
        assert len(rows) == 12
        for cond, text, obj, rep, ctx, part, is_obj, is_rep, same_entity in rows:
            assert same_entity
            fill = obj if cond == "original" else rep
            assert (is_obj if cond == "original" else is_rep)
            assert text.endswith("\n") and fill in text
            if part != "disputable":
                assert text == ctx.replace("[ENTITY]", fill).strip() + "\n"
        # contexts belong to the fact's relation, so the persuasion scorer pairs them with the fact
        assert wh.scalar("""SELECT count(*) FROM dynamicqa_context dc JOIN context c USING (context_id)
                            JOIN fact f ON f.fact_id = dc.fact_id WHERE c.relation_id <> f.relation_id""") == 0


# ---- semantic metrics -----------------------------------------------------------------------

def test_semantic_entropy_zero_when_all_agree():
    lps = [-1.0, -2.5, -0.3, -4.0]
    assert sem.semantic_entropy(lps, [0, 0, 0, 0]) == 0.0
    assert sem.semantic_entropy_mc(lps, [0, 0, 0, 0]) == pytest.approx(-math.log(sum(math.exp(x) for x in lps)))
    # two equally likely clusters: ln 2
    assert sem.semantic_entropy([-1.0, -1.0], [0, 1]) == pytest.approx(math.log(2))
    assert sem.semantic_entropy_mc([-1.0, -1.0], [0, 1]) == pytest.approx(1.0)


def _logdist(rng, n, v):
    x = torch.tensor(rng.normal(size=(n, v)) * 3, dtype=torch.float64)
    return torch.log_softmax(x, -1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(2, 30), st.integers(0, 10_000))
def test_cp_nonnegative_and_zero_for_identical(na, nb, v, seed):
    rng = np.random.default_rng(seed)
    a, b = _logdist(rng, na, v), _logdist(rng, nb, v)
    la, lb = rng.integers(0, 3, na), rng.integers(0, 3, nb)
    assert sem.coherent_persuasion(a, la, b, lb) >= 0.0
    assert sem.coherent_persuasion(a, np.zeros(na), a, np.zeros(na)) == pytest.approx(0.0, abs=1e-12)


def test_cp_matches_direct_kl():
    p = torch.tensor([[0.7, 0.2, 0.1]], dtype=torch.float64)
    q = torch.tensor([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], dtype=torch.float64)
    cp = sem.coherent_persuasion(p.log(), [0], q.log(), [0, 1])
    kl = lambda x, y: float((x * (x / y).log()).sum())  # noqa: E731
    assert cp == pytest.approx((kl(p[0], q[0]) + kl(p[0], q[1])) / 2)
    # one no-context cluster holding both samples: its distribution is their mean
    cp1 = sem.coherent_persuasion(p.log(), [0], q.log(), [0, 0])
    assert cp1 == pytest.approx(kl(p[0], q.mean(0)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(0, 10_000))
def test_connected_components_order_invariant(n, seed):
    rng = np.random.default_rng(seed)
    adj = rng.random((n, n)) < 0.25
    adj = adj | adj.T
    base = sem.connected_components(adj)

    def partition(labels, order):
        groups: dict[int, set] = {}
        for pos, lab in enumerate(labels):
            groups.setdefault(int(lab), set()).add(order[pos])
        return {frozenset(g) for g in groups.values()}

    ref = partition(base, list(range(n)))
    perm = rng.permutation(n)
    lab = sem.connected_components(adj[np.ix_(perm, perm)])
    assert partition(lab, perm.tolist()) == ref
    # an equivalence relation: transitive closure of the edges
    for i, j in zip(*np.nonzero(adj)):
        assert base[i] == base[j]


@pytest.fixture(scope="module")
def minilm():
    return sem.EmbeddingEquivalence("minilm", threshold=0.89)


def test_embedding_clusters_independent_of_sample_order(minilm):
    q = "What is George Rankin's occupation?"
    answers = ["politician", "He was a politician.", "judge", "George Rankin was a judge", "soldier",
               "a politician", "Politician.", "army officer"]

    def partition(ans):
        lab = minilm.cluster(q, ans)
        groups: dict[int, set] = {}
        for a, l in zip(ans, lab):
            groups.setdefault(int(l), set()).add(a)
        return {frozenset(g) for g in groups.values()}

    ref = partition(answers)
    assert any({"politician", "a politician", "Politician."} <= g for g in ref)
    rng = np.random.default_rng(0)
    for _ in range(10):
        assert partition([answers[i] for i in rng.permutation(len(answers))]) == ref
    assert len(set(minilm.cluster(q, ["judge"] * 5).tolist())) == 1


def _tiny_nli(path: Path) -> str:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(
        {w for s in ["what is the occupation of george rankin politician judge soldier he was a"] for w in s.split()})
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = BertTokenizer(str(path / "vocab.txt"))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, num_labels=3,
                     id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
                     label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2})
    model = BertForSequenceClassification(cfg).eval()
    with torch.no_grad():  # bias towards entailment for some pairs, so clusters are non-trivial
        model.classifier.bias.copy_(torch.tensor([0.0, 0.0, 0.05]))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_nli_equivalence_local_tiny_model(tmp_path):
    path = _tiny_nli(tmp_path / "nli")
    eq = sem.load_equivalence(f"nli:{path}")
    q = "what is the occupation of george rankin"
    answers = ["politician", "judge", "he was a politician", "soldier", "judge", "he was a judge"]
    m = eq.equivalent(q, answers)
    assert (m == m.T).all() and m.diagonal().all() and m[1, 4]
    lab = eq.cluster(q, answers)
    ref = {frozenset(i for i in range(len(answers)) if lab[i] == k) for k in set(lab.tolist())}
    for perm in itertools.islice(itertools.permutations(range(len(answers))), 0, 720, 97):
        lab2 = eq.cluster(q, [answers[i] for i in perm])
        got = {frozenset(perm[i] for i in range(len(perm)) if lab2[i] == k) for k in set(lab2.tolist())}
        assert got == ref


def test_nli_bad_labels_is_user_error(tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    from ctxprior.errors import UserError

    path = Path(_tiny_nli(tmp_path / "nli"))
    cfg = BertConfig.from_pretrained(path)
    cfg.id2label = {0: "A", 1: "B", 2: "C"}
    cfg.label2id = {"A": 0, "B": 1, "C": 2}
    BertForSequenceClassification(cfg).save_pretrained(path)
    with pytest.raises(UserError, match="entailment"):
        sem.load_equivalence(f"nli:{path}")
    with pytest.raises(UserError):
        sem.load_equivalence("nli:/no/such/folder")


def test_contains_answer():
    assert sem.contains_answer("He was a Politician.", ["politician"])
    assert not sem.contains_answer("He was a politicians' aide", ["politician"])
    assert sem.contains_answer("The answer: Alzheimer's disease", ["alzheimer's"])


# ---- a dynamic run with a tiny random model -------------------------------------------------

@pytest.fixture(scope="module")
def tiny_lm():
    from transformers import AutoTokenizer

    from ctxprior.scoring.models import tiny_model

    tok = AutoTokenizer.from_pretrained(sem.resolve_encoder("minilm"))
    tok.eos_token = "[SEP]"
    return tiny_model(tok, seed=0, hidden=32)


def _run(db, shared_dir, tmp_path, tiny_lm, minilm, **kw):
    from ctxprior.ingest.dynamicqa import ingest_dynamicqa
    from ctxprior.scoring.dynamic import DynamicConfig, score_dynamic

    d = tmp_path / "dq"
    if not d.exists():
        subset(shared_dir, d, 3)
    wh = open_warehouse(db)
    if not wh.scalar("SELECT count(*) FROM dataset"):
        ingest_dynamicqa(wh, d)
    cfg = DynamicConfig(limit=1, samples=3, max_new_tokens=4, threshold=0.89, chat_template="none", seed=7)
    return wh, cfg, lambda **k: score_dynamic(wh, cfg, lm=tiny_lm, equivalence=minilm, progress=False, **{**kw, **k})


def test_dynamic_run_rows_and_resume(shared_dir, tmp_path, tiny_lm, minilm):
    wh, cfg, go = _run(str(tmp_path / "a.duckdb"), shared_dir, tmp_path, tiny_lm, minilm)
    rid = go(max_facts=1)  # interrupted after 1 of 3 facts
    assert wh.scalar("SELECT status FROM run WHERE run_id = ?", [rid]) == "running"
    assert wh.scalar("SELECT count(*) FROM dynamicqa_fact_done WHERE run_id = ?", [rid]) == 1
    rid2 = go()  # same configuration: continues the unfinished run
    assert rid2 == rid
    run = wh.query("SELECT kind, status, units_done, units_total, estimator, sample_id FROM run WHERE run_id = ?", [rid])[0]
    assert run[:5] == ("dynamic", "done", 3, 3, "sampled") and run[5] is not None
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE run_id = ?", [rid]) == 9
    assert wh.scalar("SELECT count(*) FROM dynamicqa_generation WHERE run_id = ?", [rid]) == 3 * 3 * 4
    assert wh.scalar("SELECT count(*) FROM dynamicqa_generation WHERE sample_index = -1 AND cluster IS NOT NULL") == 0
    assert wh.scalar("SELECT min(cp) FROM dynamicqa_score WHERE condition <> 'none'") >= 0
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE condition = 'none' AND cp IS NOT NULL") == 0
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE semantic_entropy < 0") == 0
    # SE is 0 exactly where all samples fall in one cluster
    assert wh.scalar("SELECT count(*) FROM dynamicqa_score WHERE (n_clusters = 1) <> (semantic_entropy = 0)") == 0
    # stored top-k of each sample's mean distribution: k <= 50, mass <= 1, ranks ordered
    assert wh.scalar("SELECT max(n) FROM (SELECT count(*) n FROM dynamicqa_token_dist "
                     "GROUP BY fact_id, condition, sample_index) t") == 50
    assert wh.scalar("SELECT max(dist_topk_mass) FROM dynamicqa_generation") <= 1 + 1e-9
    assert wh.scalar("""SELECT count(*) FROM (SELECT fact_id, condition, sample_index, sum(prob) s
                        FROM dynamicqa_token_dist GROUP BY ALL) t JOIN dynamicqa_generation g
                        USING (fact_id, condition, sample_index) WHERE abs(t.s - g.dist_topk_mass) > 1e-9""") == 0
    # a resumed run equals an uninterrupted one (sampling is seeded per fact)
    wh2, _, go2 = _run(str(tmp_path / "b.duckdb"), shared_dir, tmp_path, tiny_lm, minilm)
    rid_b = go2()
    q = ("SELECT fact_id, condition, sample_index, text, round(logprob_sum, 6), cluster FROM dynamicqa_generation "
         "WHERE run_id = ? ORDER BY ALL")
    assert wh.query(q, [rid]) == wh2.query(q, [rid_b])
    # analyses
    from ctxprior.queries.dynamicqa import analyze_dynamicqa

    text = analyze_dynamicqa(wh, [rid])
    assert "static" in text and "disputable" in text
    assert wh.scalar("SELECT count(*) FROM dynamicqa_summary WHERE run_id = ?", [rid]) == 3
    assert wh.scalar("SELECT accuracy_without_context FROM dynamicqa_summary WHERE partition = 'disputable'") is None
    analyze_dynamicqa(wh, [rid])  # idempotent: replaces its rows
    assert wh.scalar("SELECT count(*) FROM dynamicqa_summary WHERE run_id = ?", [rid]) == 3
    wh.close()
    wh2.close()


def test_score_dynamic_user_errors(shared_dir, tmp_path, tiny_lm, minilm):
    from ctxprior.errors import UserError
    from ctxprior.scoring.dynamic import DynamicConfig, score_dynamic

    wh, cfg, go = _run(str(tmp_path / "c.duckdb"), shared_dir, tmp_path, tiny_lm, minilm)
    for bad in (dict(partitions="static,fuzzy"), dict(samples=0), dict(temperature=0.0),
                dict(dataset="nope"), dict(equivalence="cosine")):
        with pytest.raises(UserError):
            score_dynamic(wh, DynamicConfig(**{**cfg.__dict__, **bad}), lm=tiny_lm, equivalence=minilm, progress=False)
    with pytest.raises(UserError, match="no such run"):
        score_dynamic(wh, resume=99, lm=tiny_lm, equivalence=minilm, progress=False)
    assert wh.scalar("SELECT count(*) FROM run") == 0
    wh.close()


def test_calibration_on_real_pairs(shared_dir, tmp_path, minilm):
    from ctxprior.ingest.dynamicqa import ingest_dynamicqa
    from ctxprior.scoring.dynamic import calibrate

    d = subset(shared_dir, tmp_path / "dq", 60)
    with open_warehouse(str(tmp_path / "cal.duckdb")) as wh:
        ingest_dynamicqa(wh, d)
        rec = calibrate(wh, "dynamicqa", minilm, n_facts=180)
        assert rec["n_pos"] > 20 and rec["n_neg"] > 60
        assert 0.5 < rec["threshold"] < 1.0
        assert rec["balanced_accuracy_fit"] > 0.55
        again = calibrate(wh, "dynamicqa", minilm, n_facts=180)
        assert again["calibration_id"] == rec["calibration_id"]  # cached per (dataset, encoder, seed)
