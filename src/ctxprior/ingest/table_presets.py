"""Presets of ``ingest table`` for public knowledge-conflict datasets, one ``IngestSource`` each.

Each preset is a fixed column mapping (``table_spec.Mapping``) of a published format, declared once as
its own source (``ctxprior ingest nq-swap FILE``, ``wh.datasets.ingest("nq-swap", FILE)``), so its help
names the format and its options are only the ones that vary (path, name, sha256, file). Field
names as published:

- NQ-Swap (Longpre et al. 2021; Hub ``pminervini/NQ-Swap``, Parquet ``data/dev-*``): ``question``,
  ``org_context``, ``org_answer`` (list), ``sub_context``, ``sub_answer`` (list). Passages: gold
  (``org_context``, supports ``org_answer[0]``) and conflicting (``sub_context``, ``sub_answer[0]``).
- ConflictQA (Xie et al. 2024; Hub ``osunlp/ConflictQA``, JSON lines, e.g.
  ``conflictQA-popQA-chatgpt.json``): ``question``, ``popularity``, ``ground_truth`` (list),
  ``memory_answer``, ``parametric_memory``, ``counter_answer``, ``counter_memory``,
  ``parametric_memory_aligned_evidence``, ``counter_memory_aligned_evidence``. Passages: parametric
  (the aligned evidence of the model's own answer, supports ``memory_answer``) and counter
  (supports ``counter_answer``); gold ``ground_truth[0]``.
- CounterFact (Meng et al. 2022, ROME's ``counterfact.json``; Hub ``azhx/counterfact``): a list of
  ``{case_id, requested_rewrite: {prompt ('The mother tongue of {} is'), subject, relation_id,
  target_true: {str, id}, target_new: {str, id}}, paraphrase_prompts, ...}``. An item per case:
  the cloze prompt with the subject as its query form (open only), gold ``target_true.str``, and
  two passages as CUB builds them: the prompt completed with the true object (gold) and with the
  new one (conflicting).
- DRUID (Hagström et al., ACL 2025, "A Reality Check on Context Utilisation for Retrieval-Augmented
  Generation"; Hub ``copenlu/druid``, ``druid.tsv``, the annotated DRUID, not DRUID+): a row per
  (claim, retrieved evidence): ``id``, ``claim_id``, ``claim_source``, ``claim``, ``claimant``,
  ``claim_date``, ``evidence_source``, ``evidence``, ``evidence_data`` (sic: its date),
  ``factcheck_verdict`` (True, Half True, False), ``is_gold``, ``relevant``, ``evidence_stance``
  (supports, insufficient-supports, insufficient-neutral, insufficient-contradictory,
  insufficient-refutes, refutes; not_applicable for irrelevant evidence). An item per claim, a
  passage per evidence labelled with its stance. Claims without a verdict (DRUID's borderlines
  claims) have no gold answer and are left out (the ingest says how many rows).

  Followed: the authors' code, github.com/copenlu/context-utilisation-for-RAG (commit c3068a1):
  the prompt of ``src/get_model_predictions/prompts.py`` (``PYTHIA_CLAIM_PROMPT_0_SHOT``, and
  ``PYTHIA_EVIDENCE_PROMPT_0_SHOT`` for its evidence line) filled by ``get_prompt`` of
  ``get_model_predictions.py``; answers and verdicts as ``src/get_model_predictions/
  notebook_utils.py`` maps them. Its answers are True, False and None: ``PREDS_STANCE_MAP``
  pairs True with supports, False with refutes, None with insufficient; ``is_pred_aligned_*`` of
  ``src/prepare_data.ipynb`` counts None as agreeing with every insufficient-* stance. So a passage
  supports True (supports), False (refutes) or None (insufficient-*), and none when irrelevant
  (not relevant, or not_applicable). The gold answer is the verdict as the prompt's options name
  it: True -> True, False -> False (``PREDS_MAP``'s verdict spellings "Pants on Fire" / "Pants on
  Fire!" -> False), and Half True -> None, which is ctxprior's choice, not the authors': their code
  gives Half True no answer (``PREDS_MAP`` has no entry for it; ``VERDICT_NUM_MAP`` puts it at 4 on
  the stance scale, where ``STANCE_NUM_MAP`` has supports 5, insufficient-supports 4, refutes 1 and
  ``PREDS_STANCE_MAP`` puts the answer None at insufficient-neutral, 3), so the gold answer is
  always one of the prompt's options (docs/departures.md). The answer space is the prompt's three
  options, True / False / None, for every claim (``answer_labels``: the answer-set estimator scores
  each claim over all three, whatever its evidence says). A passage's type is CUB's (Hagström et al. 2025,
  App. B.3, Tables 12-13): gold when the evidence is relevant and its stance aligns with the
  verdict (supports a True claim, refutes a False one), conflicting for every other relevant
  passage (each insufficient-* stance, and any stance on a Half True claim), irrelevant as above.
  So insufficient-* evidence on a Half True claim is conflicting by type while its answer (None)
  equals the gold one: ``v_reliance.conflict`` (answers differ) is false there.

  The prompt, with the passage ``Evidence: "<evidence>"`` (no newline at its end: the dataset's
  separator joins it to the query) and the query form (the claim prompt, the same with and
  without evidence, as every ctxprior query form)::

      Evidence: "<evidence>"
      Is the following claim True or False? If you are not sure or cannot answer, say None.

      Claimant: <claimant>
      Claim: "<claim>"
      Answer:

  Departures from the authors' evidence prompt, which reads ``Based on the provided evidence, is
  the claim True or False? ...`` and puts the ``Evidence:`` line between ``Claim:`` and
  ``Answer:``: ctxprior's context comes before one query form shared by the prompts with and
  without context, so the evidence line leads and the instruction is the claim prompt's. A claim
  without a claimant gets no ``Claimant:`` line (as the authors' ``*_NO_CLAIMANT`` prompts).
"""

from __future__ import annotations

from dataclasses import replace

from .registry import IngestSource, ingest_source
from .table import SOURCE_PARAMS, Bad, optional_text, prepare_table, table_lines, text, write_table
from .table_read import read_table
from .table_spec import SEPARATOR_PARAM, Mapping, separator_value


def preset(name: str, help: str, m: Mapping) -> IngestSource:
    """The source of a preset: ``ingest table`` with mapping ``m`` (and ``name`` as default name)."""

    def prepare(path, name, sha256=None, file=None, separator=None) -> dict:
        mm = m if separator is None else replace(m, separator=separator_value(separator))
        return {"prepared": prepare_table(read_table(str(path), sha256, file), mm, name)}

    params = tuple(
        p if p.name != "name" else replace(p, default=name.replace("-", "_")) for p in SOURCE_PARAMS
    ) + (SEPARATOR_PARAM,)
    return IngestSource(
        name=name,
        help=help,
        params=params,
        prepare=prepare,
        load=lambda store, prepared: write_table(store, prepared),
        lines=table_lines,
    )


DRUID_ANSWER = {  # the answer a passage supports, by its stance (notebook_utils.PREDS_STANCE_MAP)
    "supports": "True",
    "insufficient-supports": "None",
    "insufficient-neutral": "None",
    "insufficient-contradictory": "None",
    "insufficient-refutes": "None",
    "refutes": "False",
    "not_applicable": "",
}
DRUID_VERDICT = {  # the gold answer, by the fact-check verdict (notebook_utils.VERDICT_NUM_MAP, PREDS_MAP)
    "True": "True",
    "Half True": "None",
    "False": "False",
    "Pants on Fire": "False",
    "Pants on Fire!": "False",
}
DRUID_QUERY = "Is the following claim True or False? If you are not sure or cannot answer, say None.\n\n{question}\nAnswer:"
_AGREES = {"supports": "True", "refutes": "False"}
_FLAGS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _flag(rec: dict, column: str) -> bool:
    if column not in rec:
        raise Bad(column, "no such column")
    v = rec[column]
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    flag = _FLAGS.get(str(v).strip().lower())
    if flag is None:
        raise Bad(column, f"expected True or False, got {v!r}")
    return flag


def _druid(rec: dict) -> dict:
    """A DRUID row as a flat record: the claim block, its gold answer, the evidence with stance and type."""
    stance = text(rec, "evidence_stance").strip()
    if stance not in DRUID_ANSWER:
        raise Bad("evidence_stance", f"stance {stance!r} is not one of DRUID's ({', '.join(DRUID_ANSWER)})")
    verdict = text(rec, "factcheck_verdict").strip()
    if verdict not in DRUID_VERDICT:
        raise Bad("factcheck_verdict", f"verdict {verdict!r} is not one of DRUID's (True, Half True, False)")
    gold = DRUID_VERDICT[verdict]
    irrelevant = stance == "not_applicable" or not _flag(rec, "relevant")
    says = "" if irrelevant else DRUID_ANSWER[stance]
    claim = text(rec, "claim").strip()
    claimant = (optional_text(rec, "claimant") or "").strip()
    return {
        "claim_id": text(rec, "claim_id", key=True),
        "claim": claim,
        "query": (f"Claimant: {claimant}\n" if claimant else "") + f'Claim: "{claim}"',
        "verdict": verdict,
        "gold": gold,
        "evidence": f'Evidence: "{text(rec, "evidence").strip()}"',
        "stance": stance,
        # CUB's types (App. B.3): gold = relevant evidence whose stance aligns with the verdict
        # (supports a True claim, refutes a False one); every other relevant passage conflicts
        "type": "irrelevant" if irrelevant else "gold" if _AGREES.get(stance) == gold else "conflicting",
        "says": says,
    }


def _no_verdict(rec: dict) -> bool:
    v = rec.get("factcheck_verdict", "-")  # a missing column is not skipped: _druid names it
    return v is None or (isinstance(v, str) and not v.strip())


def _counterfact(rec: dict) -> dict:
    """A CounterFact case as a flat record: question, entity, gold and the two passages."""
    rw = "requested_rewrite."
    prompt, subject = text(rec, rw + "prompt"), text(rec, rw + "subject")
    if "{}" not in prompt:
        raise Bad(rw + "prompt", f"{prompt!r} has no {{}} for the subject")
    q = prompt.replace("{}", subject)
    true, new = text(rec, rw + "target_true.str"), text(rec, rw + "target_new.str")
    return {
        "case_id": text(rec, "case_id", key=True),
        "question": q,
        "subject": subject,
        "true": true,
        "new": new,
        "gold_passage": f"{q} {true}.",
        "new_passage": f"{q} {new}.",
    }


NQ_SWAP = ingest_source(
    preset(
        "nq-swap",
        "Load NQ-Swap (Longpre et al. 2021; hf://datasets/pminervini/NQ-Swap, a Parquet file or the "
        "downloaded folder): per question a gold passage (org_context, org_answer) and a conflicting one "
        "(sub_context, sub_answer) with the answer swapped. Score with `ctxprior sample --design fixed`.",
        Mapping(
            question="question",
            gold="org_answer",
            source_format="nq-swap",
            contexts=[("gold", "org_context", "org_answer"), ("conflicting", "sub_context", "sub_answer")],
            description="NQ-Swap (Longpre et al. 2021): gold and entity-swapped passages",
        ),
    )
)

CONFLICTQA = ingest_source(
    preset(
        "conflictqa",
        "Load ConflictQA (Xie et al. 2024; hf://datasets/osunlp/ConflictQA/<file>.json, JSON lines): per "
        "question the evidence aligned with the model's parametric answer (memory_answer) and the "
        "counter-memory evidence (counter_answer); gold ground_truth. Score with `ctxprior sample --design fixed`.",
        Mapping(
            question="question",
            gold="ground_truth",
            source_format="conflictqa",
            contexts=[
                ("parametric", "parametric_memory_aligned_evidence", "memory_answer"),
                ("counter", "counter_memory_aligned_evidence", "counter_answer"),
            ],
            description="ConflictQA (Xie et al. 2024): parametric-memory vs counter-memory evidence",
        ),
    )
)

COUNTERFACT = ingest_source(
    preset(
        "counterfact",
        "Load CounterFact (Meng et al. 2022: ROME's counterfact.json, or hf://datasets/azhx/counterfact): "
        "per case the cloze prompt with its subject, gold target_true, and two passages: the prompt completed "
        "with target_true (gold) and with target_new (conflicting). Score with `ctxprior sample --design fixed`.",
        Mapping(
            item="case_id",
            question="question",
            entity="subject",
            gold="true",
            derive=_counterfact,
            contexts=[("gold", "gold_passage", "true"), ("conflicting", "new_passage", "new")],
            query_format="{question}",
            closed_format=None,
            source_format="counterfact",
            description="CounterFact (Meng et al. 2022): true vs rewritten object as passages",
        ),
    )
)

DRUID = ingest_source(
    preset(
        "druid",
        "Load DRUID (Hagström et al. 2025; hf://datasets/copenlu/druid/druid.tsv): an item per claim (gold: "
        "its fact-check verdict as the authors' prompt answers it: True, False, None for Half True), a passage "
        "per retrieved evidence labelled with its stance, typed by the answer it supports (gold, conflicting; "
        "irrelevant); the prompt is the authors' 0-shot claim prompt with its Claimant line; claims without a "
        "verdict are left out. Score with `ctxprior sample --design fixed`.",
        Mapping(
            item="claim_id",
            question="query",
            entity="claim",
            gold="gold",
            derive=_druid,
            skip=_no_verdict,
            skip_note="claims without a factcheck_verdict (no gold answer)",
            context_text="evidence",
            context_label="stance",
            context_answer="says",
            context_type="type",
            labels={s: s for s in DRUID_ANSWER},
            answer_labels=["True", "False", "None"],
            query_format=DRUID_QUERY,
            closed_format=None,
            source_format="druid",
            description="DRUID (Hagström et al. 2025): claims with real retrieved evidence, by stance",
        ),
    )
)
