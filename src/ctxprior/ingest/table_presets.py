"""Presets of ``ingest table`` for public knowledge-conflict datasets, one ``IngestSource`` each.

Each preset is a fixed column mapping (``table.Mapping``) of a published format, declared once as
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
  ``claim_date``, ``evidence_source``, ``evidence``, ``evidence_data`` (sic: its date), ``factcheck_verdict`` (True,
  Half True, False), ``is_gold``, ``relevant``, ``evidence_stance`` (supports, insufficient-supports,
  insufficient-neutral, insufficient-contradictory, insufficient-refutes, refutes; not_applicable for
  irrelevant evidence). An item per claim (gold: the fact-check verdict), a passage per evidence
  labelled with its stance; its type as CUB (Hagström et al. 2025, App. B.3) maps DRUID: irrelevant
  when not relevant, gold when the stance agrees with the verdict (supports / True, refutes /
  False), else conflicting (every insufficient-* stance, and any stance on a Half True claim). The
  answer a passage supports, in the words of DRUID's prompts: True (supports), False (refutes),
  None (insufficient-*: "not sure or cannot answer"), none for irrelevant evidence. Claims without
  a verdict (DRUID's borderlines claims) have no gold answer and are left out (the ingest says how
  many rows). The passage reads ``Evidence: "..."`` and the query form ``Claim: "..."`` with
  DRUID's 0-shot question; the context comes before the query, as in every ctxprior prompt.
"""

from __future__ import annotations

from dataclasses import replace

from .registry import IngestSource, ingest_source
from .table import (
    SEPARATOR_PARAM,
    SOURCE_PARAMS,
    Bad,
    Mapping,
    prepare_table,
    separator_value,
    table_lines,
    text,
    write_table,
)
from .table_read import read_table


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


DRUID_ANSWER = {
    "supports": "True",
    "insufficient-supports": "None",
    "insufficient-neutral": "None",
    "insufficient-contradictory": "None",
    "insufficient-refutes": "None",
    "refutes": "False",
    "not_applicable": "",
}
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
    """A DRUID row as a flat record: the claim, its verdict, the evidence with stance and type."""
    stance = text(rec, "evidence_stance").strip()
    if stance not in DRUID_ANSWER:
        raise Bad("evidence_stance", f"stance {stance!r} is not one of DRUID's ({', '.join(DRUID_ANSWER)})")
    verdict = text(rec, "factcheck_verdict").strip()
    irrelevant = stance == "not_applicable" or not _flag(rec, "relevant")
    return {
        "claim_id": text(rec, "claim_id", key=True),
        "claim": text(rec, "claim"),
        "verdict": verdict,
        "evidence": f'Evidence: "{text(rec, "evidence").strip()}"\n',
        "stance": stance,
        "type": "irrelevant" if irrelevant else "gold" if _AGREES.get(stance) == verdict else "conflicting",
        "says": "" if irrelevant else DRUID_ANSWER[stance],
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
        "its fact-check verdict), a passage per retrieved evidence labelled with its stance, typed as CUB "
        "maps it (gold: agrees with the verdict; conflicting; irrelevant); claims without a verdict are left "
        "out. Score with `ctxprior sample --design fixed`.",
        Mapping(
            item="claim_id",
            question="claim",
            gold="verdict",
            derive=_druid,
            skip=_no_verdict,
            skip_note="claims without a factcheck_verdict (no gold answer)",
            context_text="evidence",
            context_label="stance",
            context_answer="says",
            context_type="type",
            labels={s: s for s in DRUID_ANSWER},
            query_format='Claim: "{question}"\nIs the claim True or False? If you are not sure or cannot '
            "answer, say None.\nAnswer:",
            closed_format=None,
            source_format="druid",
            description="DRUID (Hagström et al. 2025): claims with real retrieved evidence, by stance",
        ),
    )
)
