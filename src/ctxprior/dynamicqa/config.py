"""A dynamic run's configuration (``ctxprior score-dynamic``'s options), the prompts and the
conditions; docs in ``run.py``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..errors import UserError
from ..options import check_options
from .options import CP_TOKENS, LABEL_RULES, SCORE_DYNAMIC_OPTIONS, default  # noqa: F401  (re-exported)
from .sample import parse_partitions

CONDITIONS = ("none", "original", "counter")
PROMPT_NONE = "Answer the following question with a short answer.\nQuestion: {question}"
PROMPT_CTX = "Answer the following question with a short answer, based on the context.\nContext: {context}\nQuestion: {question}"
RAW_SUFFIX = "\nAnswer:"
# options added after the first dynamic runs, with the rule those runs used (resume keeps them)
LEGACY_OPTIONS = {"se_form": "sum", "cp_tokens": "answer", "labels": "alias", "kl_zeros": "inf"}
RUN_KIND = "dynamic"
PKG = "ctxprior.dynamicqa"


@dataclass
class DynamicConfig:
    """The options of a dynamic run (stored with it); defaults and checks from their
    declarations (``dynamicqa/options.py``)."""

    dataset: str = default("dataset")
    partitions: list[str] = field(default_factory=lambda: list(default("partitions")))
    limit: int | None = None
    model: str = default("model")
    samples: int = default("samples")
    temperature: float = default("temperature")
    max_new_tokens: int = default("max_new_tokens")
    equivalence: str = default("equivalence")
    threshold: float | None = None
    chat_template: str = default("chat_template")
    seed: int = default("seed")
    dist_topk: int = 50
    device: str = default("device")
    dtype: str = "auto"
    se_form: str = default("se_form")
    cp_tokens: str = default("cp_tokens")
    labels: str = default("labels")
    kl_zeros: str = default("kl_zeros")

    def validate(self) -> None:
        self.partitions = parse_partitions(self.partitions)
        check_options(SCORE_DYNAMIC_OPTIONS, {k: v for k, v in asdict(self).items() if k != "partitions"})
        kind = self.equivalence.partition(":")[0]
        if kind not in ("nli", "embedding") or not self.equivalence.partition(":")[2]:
            raise UserError(f"--equivalence {self.equivalence}: expected nli:MODEL or embedding:minilm")
