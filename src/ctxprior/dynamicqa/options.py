"""The options of ``ctxprior sample-dynamic`` / ``score-dynamic`` / ``analyze-dynamic`` and of
their API methods, each declared once (``ctxprior.options.Option``); ``DynamicConfig`` takes its
defaults from them and checks itself with them."""

from __future__ import annotations

from typing import Any

from ..options import ID_MAX, Option, by_name, seed_option
from ..scoring.models import DEFAULT_MODEL
from .ingest import PARTITIONS
from .semantic import KL_ZEROS, SE_FORMS

CP_TOKENS = ("generated", "answer")
LABEL_RULES = ("rouge", "alias")
CHAT_TEMPLATES = ("auto", "none")

_DATASET = Option("dataset", "--dataset", "DynamicQA dataset name.", default="dynamicqa")
PARTITIONS_OPTION = Option(
    "partitions",
    "--partition",
    "Comma list of partitions.",
    default=PARTITIONS,
    choices=PARTITIONS,
    listed=True,
)
_LIMIT = Option(
    "limit",
    "--limit",
    "First N facts per partition (file order). Default: all.",
    kind=int,
    maximum=10**9,
    minimum=1,
    metavar="N",
)

SAMPLE_DYNAMIC_OPTIONS = (_DATASET, PARTITIONS_OPTION, _LIMIT)

SCORE_DYNAMIC_OPTIONS = (
    _DATASET,
    PARTITIONS_OPTION,
    _LIMIT,
    Option(
        "model",
        "--model",
        "Model alias, GGUF file, local Hugging Face folder or cached hub id.",
        default=DEFAULT_MODEL,
    ),
    Option(
        "samples",
        "--samples",
        "Sampled answers per fact and condition.",
        default=10,
        kind=int,
        maximum=1000,
        minimum=1,
    ),
    Option(
        "temperature",
        "--temperature",
        "Sampling temperature.",
        default=0.5,
        kind=float,
        maximum=10.0,
        above=0.0,
    ),
    Option(
        "max_new_tokens",
        "--max-new-tokens",
        "Longest answer in tokens.",
        default=20,
        kind=int,
        maximum=4096,
        minimum=1,
    ),
    Option(
        "equivalence",
        "--equivalence",
        "Semantic equivalence: embedding:minilm (cosine >= calibrated threshold) or "
        "nli:MODEL (mutual entailment; a local folder or cached hub id).",
        default="embedding:minilm",
    ),
    Option(
        "threshold",
        "--threshold",
        "Cosine threshold for embedding equivalence (a cosine similarity, from -1 to 1). "
        "Default: calibrated on this dataset.",
        kind=float,
        minimum=-1.0,
        maximum=1.0,
    ),
    Option(
        "chat_template",
        "--chat-template",
        "auto: wrap prompts in the tokenizer's chat template when it has one.",
        default="auto",
        choices=CHAT_TEMPLATES,
    ),
    seed_option(0, "Sampling seed (per fact: seed, fact id)."),
    Option("device", "--device", "cpu | cuda | cuda:N | mps | auto.", default="auto"),
    Option(
        "se_form",
        "--se-form",
        "Per-sample log-likelihood in the Monte-Carlo SE: sum over the answer tokens (the "
        "paper's sequence probability) or authors (per-token mean, the released code's; "
        "with the +5 shift of analyze-dynamic it is the paper's Table 2 scale).",
        default="sum",
        choices=SE_FORMS,
    ),
    Option(
        "cp_tokens",
        "--cp-tokens",
        "Steps each sample's mean token distribution (the CP input) averages: every generated "
        "step, end of sequence included (the released code), or the answer tokens only.",
        default="generated",
        choices=CP_TOKENS,
    ),
    Option(
        "labels",
        "--labels",
        "Greedy-answer matching for accuracy and persuaded / stubborn: rouge (the released code's "
        "ROUGE-L F1 > 0.3 with obj / replace_name / the no-context answer) or alias (whole-word "
        "aliases; stubborn by the equivalence test).",
        default="rouge",
        choices=LABEL_RULES,
    ),
    Option(
        "kl_zeros",
        "--kl-zeros",
        "KL terms where the context-side distribution is positive and the no-context one is 0: "
        "inf (the true KL) or drop (left out, as the released code).",
        default="inf",
        choices=KL_ZEROS,
    ),
    Option(
        "resume",
        "--resume",
        "Continue this run with its stored options (a rerun with the same options also continues).",
        kind=int,
        maximum=ID_MAX,
        minimum=1,
        metavar="RUN",
    ),
)

ANALYZE_DYNAMIC_OPTIONS = (
    Option(
        "runs",
        "--run",
        "Dynamic run id; repeatable. Default: every dynamic run with scores.",
        kind=int,
        maximum=ID_MAX,
        minimum=1,
        multiple=True,
        metavar="R",
    ),
)

_SCORE = by_name(SCORE_DYNAMIC_OPTIONS)


def default(name: str) -> Any:
    """The declared default of the score-dynamic option ``name``."""
    return _SCORE[name].default
