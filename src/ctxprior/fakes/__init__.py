"""Fake entities for a relation, as the paper made them with GPT-4 (Du et al. 2024, §4.1, App. C).

- ``generate_fakes``: ask a chat model (a local Hugging Face model or an OpenAI-compatible
  endpoint, see ``llm``) for plausible but non-existent names of the relation's entity class
  (prompts: ``prompts``), parse and screen the answer (``parse``; ``Screen``), and ask again
  (at most ``max_rounds`` times per class) until ``n`` names are accepted.
- ``add_fakes``: the same screening for a user's own list (e.g. GPT-4 output they already have).
- ``list_fakes`` / ``fakes_summary``: what is there.

A name is rejected (counted per reason) when it is empty, not a name (no letter, > 100
characters or > 12 words), or case-insensitively equal to a real entity, an answer or a fact
label of the dataset (any relation), a fake of this relation (``existing_fake``), a fake of
another relation (``fake_elsewhere``), or a name accepted earlier in the same call
(``duplicate``), or when one of its parts between ': ', ', ', ' - ' or '/' is a real entity,
answer or label (``contains_real``: 'France: Paris'). Accepted fakes are stored like ``ingest yago-qec`` stores ``gpt_fake_entities``:
an ``entity`` of kind ``fake`` and a ``fact`` at the position of the real entity whose answer it
borrows (placement rule: ``plan``), plus provenance in ``fake_generation`` /
``fake_generation_fact``. Everything is validated, then written in one transaction.

Import rules: the package table in docs/architecture.md. Modules: ``make`` (the functions
above), ``screen``, ``parse``, ``plan`` (where a fake goes), ``prompts``, ``llm`` (local or
OpenAI-compatible chat).
"""

from .make import add_fakes, fakes_summary, generate_fakes, list_fakes, read_names_file
from .screen import Accepted, FakesResult, Screen, rejected_text

__all__ = [
    "Accepted",
    "FakesResult",
    "Screen",
    "add_fakes",
    "fakes_summary",
    "generate_fakes",
    "list_fakes",
    "read_names_file",
    "rejected_text",
]
