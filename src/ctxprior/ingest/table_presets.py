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
"""

from __future__ import annotations

from dataclasses import replace

from .registry import IngestSource, ingest_source
from .table import SOURCE_PARAMS, Bad, Mapping, prepare_table, table_lines, text, write_table
from .table_read import read_table


def preset(name: str, help: str, m: Mapping) -> IngestSource:
    """The source of a preset: ``ingest table`` with mapping ``m`` (and ``name`` as default name)."""

    def prepare(path, name, sha256=None, file=None) -> dict:
        return {"prepared": prepare_table(read_table(str(path), sha256, file), m, name)}

    params = tuple(
        p if p.name != "name" else replace(p, default=name.replace("-", "_")) for p in SOURCE_PARAMS
    )
    return IngestSource(
        name=name,
        help=help,
        params=params,
        prepare=prepare,
        load=lambda store, prepared: write_table(store, prepared),
        lines=table_lines,
    )


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
