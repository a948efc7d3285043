"""The options of ``ctxprior fakes generate`` / ``add`` / ``list`` and of their API methods
(``wh.fakes.generate`` / ``add`` / ``list``), each declared once (``ctxprior.options.Option``):
the command's click options and the method's checks are made from them."""

from __future__ import annotations

from ..options import Option, seed_option
from ..scoring.models import DEFAULT_MODEL
from .prompts import PROMPT_STYLES

DATASET = Option("dataset", "--dataset", "Dataset name (see `ctxprior info`).", required=True)
RELATION = Option("relation", "--relation", "Relation (short name or full id).", required=True)

GENERATE_OPTIONS = (
    DATASET,
    RELATION,
    Option(
        "n",
        "--n",
        "Fakes to add (at most the relation's real entities without a fake).",
        default=50,
        kind=int,
        maximum=10**6,
        minimum=1,
    ),
    Option(
        "model",
        "--model",
        "smollm2-135m, a Hugging Face id or folder (local, chat template), or openai:MODEL "
        "for an OpenAI-compatible endpoint (the paper: openai:gpt-4-1106-preview).",
        default=DEFAULT_MODEL,
    ),
    Option(
        "base_url",
        "--base-url",
        "OpenAI-compatible endpoint for openai:MODEL, e.g. http://localhost:8000/v1 (vLLM) or "
        "http://localhost:11434/v1 (Ollama). Default: https://api.openai.com/v1.",
    ),
    Option(
        "api_key_env",
        "--api-key-env",
        "Environment variable holding the API key (default OPENAI_API_KEY; required for "
        "api.openai.com). The key is never printed or stored.",
        metavar="NAME",
    ),
    seed_option(0, "Sampling seed; model call k uses seed + k (reruns reproduce the same names)."),
    Option(
        "temperature",
        "--temperature",
        "Sampling temperature (0 = greedy for local models); the paper used the API default 1.",
        default=1.0,
        kind=float,
        maximum=10.0,
        minimum=0,
    ),
    Option("top_p", "--top-p", "Nucleus sampling top-p.", default=1.0, kind=float, above=0, maximum=1),
    Option(
        "prompt_style",
        "--prompt-style",
        "paper: the authors' GPT-4 prompts per entity class; relation: the same plus the "
        "relation, its query form and real examples.",
        default="relation",
        choices=PROMPT_STYLES,
    ),
    Option(
        "max_rounds",
        "--max-rounds",
        "Model calls per entity class at most, until --n names are accepted.",
        default=10,
        kind=int,
        maximum=1000,
        minimum=1,
    ),
    Option(
        "allow_partial",
        "--allow-partial",
        "Store what was accepted when fewer than --n names were (default: error, nothing stored).",
        default=False,
        kind=bool,
    ),
    Option(
        "timeout",
        "--timeout",
        "Seconds per HTTP request (openai:).",
        default=120.0,
        kind=float,
        maximum=86400.0,
        above=0,
    ),
    Option(
        "retries",
        "--retries",
        "Retries for HTTP 429 / 5xx / network errors, with exponential backoff (openai:).",
        default=4,
        kind=int,
        maximum=100,
        minimum=0,
    ),
)

ADD_OPTIONS = (
    Option("path", None, "File of names.", argument=True, required=True, metavar="PATH", file=True),
    DATASET,
    RELATION,
    Option(
        "n",
        "--n",
        "Add at most this many (default: as many as the relation has real entities without a fake).",
        kind=int,
        maximum=10**6,
        minimum=1,
    ),
    Option(
        "entity_class",
        "--entity-class",
        "Class to record for these fakes (default: the class of the real entity each one pairs with).",
    ),
)

LIST_OPTIONS = (
    DATASET,
    Option(
        "relation",
        "--relation",
        "List this relation's fakes one by one (default: a count per relation).",
    ),
)
