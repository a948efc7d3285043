"""Issue 40, the vocabulary and label-set half: with the defaults, the sources' columns are the
sources' definitions (over the vocabulary at the first answer token, whatever ``--estimator``),
checked against literal ports of the sources' code (``source_ports_helpers``) on committed real
rows; the answer-set variants keep their own names; a dataset's declared answer space is every
item's candidate set, and an item with fewer than two candidates is refused, never scored as 0."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scoring_helpers import tiny
from source_ports_helpers import port_row

import ctxprior
from ctxprior.scoring.estimators import answer_candidates
from ctxprior.scoring.texts import UnitTexts

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
PORTED = ("confidence_gain", "scaled_difference", "scaled_difference_memory", "ccu")
VARIANTS = ("shift", "jsd", "confidence_gain", "scaled_difference", "scaled_difference_memory")


def _compare(wh, run_id: int, lm) -> dict[str, float]:
    """The largest |stored − port| per measure over the run's rows (NaN-aware: both none)."""
    prompts = wh.runs.prompts(run_id)
    rows = wh.sql(
        "SELECT fact_id, query_form_id, context_id, context_answer, is_relevant, "
        + ", ".join(PORTED)
        + f" FROM v_reliance WHERE run_id = {run_id}"
    )
    assert len(rows)
    worst = dict.fromkeys(PORTED, 0.0)
    for r in rows.itertuples():
        of = prompts[(prompts.fact_id == r.fact_id) & (prompts.query_form_id == r.query_form_id)]
        with_ctx = of[of.context_id == r.context_id].prompt.iloc[0]
        without = of[of.context_id.isna()].prompt.iloc[0]
        answer = None if r.context_answer is None else r.context_answer.strip()
        want = port_row(lm, with_ctx, without, answer, bool(r.is_relevant))
        for k in PORTED:
            got, ref = getattr(r, k), want.get(k)
            if ref is None or got is None or (isinstance(got, float) and math.isnan(got)):
                assert (ref is None) == (got is None or math.isnan(got)), (k, got, ref)
                continue
            worst[k] = max(worst[k], abs(float(got) - ref))
    return worst


@pytest.fixture(scope="module")
def conflictqa(tmp_path_factory):
    """The 3 real ConflictQA (strategyQA) rows scored with the defaults (auto: answer-set) and first-token."""
    db = str(tmp_path_factory.mktemp("cqa") / "w.duckdb")
    wh = ctxprior.open(db, write=True)
    wh.datasets.ingest("conflictqa", str(FIXTURES / "conflictQA-strategyQA-chatgpt.json"))
    sid = wh.samples.draw("conflictqa", design="fixed")
    lm = tiny()
    auto = wh.runs.score(sid, model=lm, query_types=("open",), progress=False, log=None)
    first = wh.runs.score(
        sid, model=lm, query_types=("open",), estimator="first-token", progress=False, log=None
    )
    return wh, lm, auto.id, first.id


def test_defaults_store_ckplug_and_cub_on_real_conflictqa_rows(conflictqa):
    """Against the literal ports on the real rows: the default run (answer-set) stores the sources'
    values; the largest differences are float32 rounding (the port reads float32 logits)."""
    wh, lm, auto, _ = conflictqa
    assert wh.sql(f"SELECT estimator FROM run WHERE run_id = {auto}").estimator[0] == "answer-set"
    worst = _compare(wh, auto, lm)
    print("largest |stored - port| (answer-set default):", worst)
    assert all(v < 1e-4 for v in worst.values()), worst


def test_first_token_and_answer_set_agree_on_the_sources_columns(conflictqa):
    """`--estimator` changes what psi and chi are over, not the sources' columns; the answer-set
    variants are their own columns (NULL under first-token) and differ from the sources' values."""
    wh, _, auto, first = conflictqa
    cols = ", ".join(f"{k}, {k}_answer_set" for k in VARIANTS)
    q = f"SELECT fact_id, context_id, {cols} FROM reliance WHERE run_id = ? ORDER BY 1, 2"
    a, f = wh.sql(q, [auto]), wh.sql(q, [first])
    for k in VARIANTS:
        assert np.allclose(a[k], f[k], atol=1e-5, equal_nan=True), k
        assert f[f"{k}_answer_set"].isna().all()
    assert a["confidence_gain_answer_set"].notna().all()
    assert not np.allclose(a.confidence_gain, a.confidence_gain_answer_set)
    rates = wh.sql(
        f"SELECT mean_confidence_gain_answer_set, mean_ccu_answer_set FROM v_reliance_rates WHERE run_id = {auto}"
    )
    assert rates.notna().all().all()


# ---------------------------------------------------------------- answer spaces

DRUID_COLUMNS = ["id", "claim_id", "claim_source", "claim", "claimant", "claim_date", "evidence_source",
                 "evidence", "evidence_data", "factcheck_verdict", "is_gold", "relevant", "evidence_stance"]  # fmt: skip


def _druid(path: Path) -> Path:
    """The issue's reproduction: one False claim, two refuting passages and one not applicable."""

    def row(i, evidence, stance, relevant=True):
        return [f"politifact-9_{i}", "politifact-9", "https://politifact.example/9", "5G towers spread viruses.",
                "Viral post", "2021-03-01", f"https://example.org/{i}", evidence, "2021-02-01", "False",
                i == 0, relevant, stance]  # fmt: skip

    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(DRUID_COLUMNS)
        w.writerow(row(0, "Radio waves cannot carry viruses.", "refutes"))
        w.writerow(row(1, "Health agencies found no link between 5G and infections.", "refutes"))
        w.writerow(row(2, "A recipe for banana bread.", "not_applicable", relevant=False))
    return path


def test_druid_claim_whose_evidence_all_refutes_is_scored_over_true_false_none(tmp_path, run_cli, db_path):
    assert run_cli("ingest", "druid", _druid(tmp_path / "druid.tsv")).exit_code == 0
    assert run_cli("sample", "--dataset", "druid", "--design", "fixed").exit_code == 0
    wh = ctxprior.open(db_path, write=True)
    labels = wh.sql("SELECT label FROM answer_label ORDER BY ordinal").label.tolist()
    assert labels == ["True", "False", "None"]
    wh.runs.score(1, model=tiny(), progress=False, log=None)
    p = wh.sql("SELECT persuasion FROM persuasion").persuasion
    rel = wh.sql(
        "SELECT shift, jsd, confidence_gain, ccu, shift_answer_set, confidence_gain_answer_set, "
        "ccu_answer_set, p_gold_answer FROM v_reliance"
    )
    assert len(rel) == 3 and (p > 0).any()
    for k in ("shift", "jsd", "confidence_gain", "ccu", "shift_answer_set", "confidence_gain_answer_set"):
        assert (rel[k].abs() > 1e-9).any(), k
    assert (rel.p_gold_answer < 1).all()  # three candidates, not {False} alone
    chi = wh.sql("SELECT susceptibility FROM susceptibility").susceptibility
    assert (chi > 0).all()


@pytest.mark.quick
def test_candidates_are_the_declared_labels_and_closed_forms_yes_no():
    unit = UnitTexts(["c1", "c2"], ["False", "False"], ["q"], ["False"], "open", ("True", "False", "None"))
    assert answer_candidates(unit, "False") == ["True", "False", "None"]
    own = UnitTexts(["c1"], ["Rome"], ["q"], ["Paris"], "open")
    assert answer_candidates(own, "Paris") == ["Paris", "Rome"]
    closed = UnitTexts(["c1"], ["Rome"], ["q"], ["Paris"], "closed", ("True", "False"))
    assert answer_candidates(closed, "Paris") == ["Yes", "No"]


def _one_answer_table(path: Path) -> Path:
    path.write_text(
        "question,gold,ctx,ctx_answer\nWho wrote Hamlet?,Shakespeare,Shakespeare wrote Hamlet.,Shakespeare\n"
    )
    return path


def test_an_item_with_one_candidate_is_refused_for_answer_set(tmp_path, run_cli, db_path):
    src = _one_answer_table(tmp_path / "t.csv")
    args = ("ingest", "table", src, "--question", "question", "--gold", "gold")
    assert run_cli(*args, "--context", "gold=ctx:ctx_answer", "--closed-format", "").exit_code == 0
    assert run_cli("sample", "--dataset", "table", "--design", "fixed").exit_code == 0
    before = Path(db_path).read_bytes()
    r = run_cli("score", "--sample", "1", "--model", "smollm2-135m", "--estimator", "answer-set")
    assert r.exit_code == 2, r.output
    line = [x for x in r.output.splitlines() if x.startswith("Error:")]
    assert len(line) == 1 and "1 queries have fewer than two candidate answers" in line[0], r.output
    assert "['Shakespeare']" in line[0]
    assert Path(db_path).read_bytes() == before


def test_answer_labels_from_the_command_line_and_the_spec(tmp_path, run_cli, db_path):
    src = _one_answer_table(tmp_path / "t.csv")
    args = (
        "ingest",
        "table",
        src,
        "--question",
        "question",
        "--gold",
        "gold",
        "--context",
        "gold=ctx:ctx_answer",
    )
    r = run_cli(*args, "--answer-label", "Marlowe", "--answer-label", "Bacon")
    assert r.exit_code == 2 and "has the answer 'Shakespeare', which is not one of the declared" in r.output
    spec = tmp_path / "spec.yaml"
    spec.write_text("answer_labels: [Shakespeare, Marlowe, Bacon]\n")
    r = run_cli(*args, "--spec", spec, "--name", "mine")
    assert r.exit_code == 0, r.output
    got = ctxprior.open(db_path).sql("SELECT label FROM answer_label ORDER BY ordinal").label.tolist()
    assert got == ["Shakespeare", "Marlowe", "Bacon"]
    r = run_cli(*args, "--answer-label", "Shakespeare", "--name", "one")
    assert r.exit_code == 2 and "needs at least two different labels" in r.output


def test_migration_to_v4_moves_an_answer_set_runs_values_to_their_own_names(conflictqa, tmp_path, run_cli):
    """A v3 warehouse: an answer-set run stored its candidate-set values under the sources' names.
    The migration moves them to *_answer_set and leaves the sources' columns NULL there; the
    first-token run keeps its (the sources') values."""
    import shutil

    import duckdb

    from ctxprior.measures import RELIANCE_MEASURES

    wh, _, auto, first = conflictqa
    db = tmp_path / "v3.duckdb"
    shutil.copy(wh.path, db)
    want = wh.sql(
        "SELECT run_id, fact_id, context_id, shift, confidence_gain, confidence_gain_answer_set FROM reliance ORDER BY 1, 2, 3"
    )
    con = duckdb.connect(str(db))
    con.execute(  # as v3 wrote it: the answer-set run's candidate values under the sources' names
        "UPDATE reliance SET shift = shift_answer_set, jsd = jsd_answer_set, "
        "confidence_gain = confidence_gain_answer_set, scaled_difference = scaled_difference_answer_set, "
        "scaled_difference_memory = scaled_difference_memory_answer_set WHERE run_id = ?",
        [auto],
    )
    for m in RELIANCE_MEASURES:
        if m.since == 4:
            con.execute(f"ALTER TABLE reliance DROP COLUMN {m.name}")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    res = run_cli("migrate", db=str(db))
    assert res.exit_code == 0 and "migrated v3 -> v4" in res.output, res.output
    got = ctxprior.open(str(db)).sql(
        "SELECT run_id, fact_id, context_id, shift, confidence_gain, confidence_gain_answer_set FROM reliance ORDER BY 1, 2, 3"
    )
    a, w = got[got.run_id == auto], want[want.run_id == auto]
    assert a["shift"].isna().all() and a.confidence_gain.isna().all()
    assert np.allclose(a.confidence_gain_answer_set, w.confidence_gain_answer_set)
    f, wf = got[got.run_id == first], want[want.run_id == first]
    assert np.allclose(f.confidence_gain, wf.confidence_gain) and f.confidence_gain_answer_set.isna().all()


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2_real_rows")  # the session's SmolLM2 runs (conftest.py)
def test_smollm2_defaults_are_the_sources_on_real_conflictqa_rows(smollm2_real_rows):
    """The real model on the real rows: what ctxprior stores under the defaults equals the literal
    ports of CK-PLUG's and the DRUID code's computation (float32 logits on both sides)."""
    wh, lm, runs = smollm2_real_rows
    worst = _compare(wh, runs["conflictqa"], lm)
    print("largest |stored - port| (SmolLM2, defaults):", worst)
    assert all(v < 1e-4 for v in worst.values()), worst
