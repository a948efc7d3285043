"""A dynamic run's configuration (``ctxprior score-dynamic``'s options), the prompts and the
conditions; docs in ``run.py``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UserError
from . import semantic as sem
from .sample import parse_partitions

CONDITIONS = ("none", "original", "counter")
PROMPT_NONE = "Answer the following question with a short answer.\nQuestion: {question}"
PROMPT_CTX = "Answer the following question with a short answer, based on the context.\nContext: {context}\nQuestion: {question}"
RAW_SUFFIX = "\nAnswer:"
CP_TOKENS = ("generated", "answer")
LABEL_RULES = ("rouge", "alias")
# options added after the first dynamic runs, with the rule those runs used (resume keeps them)
LEGACY_OPTIONS = {"se_form": "sum", "cp_tokens": "answer", "labels": "alias", "kl_zeros": "inf"}
RUN_KIND = "dynamic"
PKG = "ctxprior.dynamicqa"


@dataclass
class DynamicConfig:
    dataset: str = "dynamicqa"
    partitions: list[str] = field(default_factory=lambda: ["static", "temporal", "disputable"])
    limit: int | None = None
    model: str = "smollm2-135m"
    samples: int = 10
    temperature: float = 0.5
    max_new_tokens: int = 20
    equivalence: str = "embedding:minilm"
    threshold: float | None = None
    chat_template: str = "auto"
    seed: int = 0
    dist_topk: int = 50
    device: str = "auto"
    dtype: str = "auto"
    se_form: str = "sum"
    cp_tokens: str = "generated"
    labels: str = "rouge"
    kl_zeros: str = "inf"

    def validate(self) -> None:
        self.partitions = parse_partitions(self.partitions)
        if self.samples < 1:
            raise UserError(f"--samples {self.samples}: must be at least 1")
        if not (self.temperature > 0):
            raise UserError(f"--temperature {self.temperature}: must be positive")
        if self.max_new_tokens < 1:
            raise UserError(f"--max-new-tokens {self.max_new_tokens}: must be at least 1")
        if self.chat_template not in ("auto", "none"):
            raise UserError(f"--chat-template {self.chat_template}: expected auto or none")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit {self.limit}: must be positive")
        if self.threshold is not None and not (-1.0 <= self.threshold <= 1.0):
            raise UserError(f"--threshold {self.threshold}: a cosine similarity lies in [-1, 1]")
        for opt, val, ok in (
            ("--se-form", self.se_form, sem.SE_FORMS),
            ("--cp-tokens", self.cp_tokens, CP_TOKENS),
            ("--labels", self.labels, LABEL_RULES),
            ("--kl-zeros", self.kl_zeros, sem.KL_ZEROS),
        ):
            if val not in ok:
                raise UserError(f"{opt} {val}: expected {' or '.join(ok)}")
        kind = self.equivalence.partition(":")[0]
        if kind not in ("nli", "embedding") or not self.equivalence.partition(":")[2]:
            raise UserError(f"--equivalence {self.equivalence}: expected nli:MODEL or embedding:minilm")
