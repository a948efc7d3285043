"""The options of ``ctxprior covariates cooccurrence`` / ``kg-degree`` / ``known`` / ``add`` and of
their API methods (``wh.covariates.cooccurrence`` / ``kg_degree`` / ``known`` / ``add``), each
declared once (``ctxprior.options.Option``): the command's click arguments and options and the
method's checks are made from them."""

from __future__ import annotations

from ..options import ID_MAX, Option, seed_option
from .triples import FORMATS
from .user import KEYS

PUNCTUATION = ("delete", "space")
MATCH = ("name", "uri")


def _name(example: str) -> Option:
    return Option("name", "--name", f"Covariate name (view cov_<name>), e.g. {example}.", required=True)


_DESCRIPTION = Option("description", "--description", "Free text stored in the catalog.")
_REPLACE = Option(
    "replace", "--replace", "Replace an existing covariate of this name.", default=False, kind=bool
)

COOCCURRENCE_OPTIONS = (
    Option(
        "corpus",
        None,
        "Corpus files or folders.",
        argument=True,
        required=True,
        multiple=True,
        metavar="CORPUS...",
    ),
    _name("pile_cooc"),
    Option(
        "window",
        "--window",
        "Co-occur when the later name starts at most this many words after the earlier one ends.",
        default=50,
        kind=int,
        maximum=10**6,
        minimum=1,
    ),
    Option("dataset", "--dataset", "Count the facts of this dataset only (default: all datasets)."),
    Option(
        "executor",
        "--executor",
        "local: worker processes on this machine; ray: Ray tasks (one per shard file).",
        default="local",
        choices=("local", "ray"),
    ),
    Option(
        "workers",
        "--workers",
        "Parallel worker processes (local) or CPUs of the local Ray instance. Default: all CPUs.",
        kind=int,
        maximum=1024,
        minimum=1,
    ),
    Option(
        "address",
        "--address",
        "Ray cluster address (e.g. ray://head:10001 or auto); default: start a local Ray instance.",
    ),
    Option(
        "ignore_case", "--ignore-case", "Lower-case names and text before matching.", default=False, kind=bool
    ),
    Option(
        "punctuation",
        "--punctuation",
        "Remove punctuation (the paper's rule: U.S. -> US) or replace it by a space (Hilton's -> Hilton s).",
        default="delete",
        choices=PUNCTUATION,
    ),
    Option("text_field", "--text-field", "JSON field holding the document text.", default="text"),
    Option(
        "restart",
        "--restart",
        "Drop the counts already stored under this name and count from scratch.",
        default=False,
        kind=bool,
    ),
    _DESCRIPTION,
)

TRIPLES = Option(
    "triples",
    None,
    "Triple files or folders.",
    argument=True,
    required=True,
    multiple=True,
    metavar="TRIPLES...",
)
"""The triple files a KG dump is read from (``covariates kg-degree`` and ``build-dataset``)."""

KG_DEGREE_OPTIONS = (
    TRIPLES,
    _name("yago_degree"),
    Option(
        "fmt",
        "--format",
        "Triple format: N-Triples, Turtle with one triple per line, or TSV (subject, predicate, object).",
        default="auto",
        choices=("auto", *FORMATS),
    ),
    Option("dataset", "--dataset", "Attach degrees to this dataset's facts only (default: all)."),
    _REPLACE,
    _DESCRIPTION,
)

RULES = ("ferrando", "ctxprior-samples", "greedy-majority")
SAMPLE_BATCH = 16  # ctxprior-samples: prompts per batch by default (the samples depend on it)
"""The known / unknown rules of ``covariates known`` (``covariates/known.py`` describes them)."""
MAX_NEW_TOKENS = {"ferrando": 32, "ctxprior-samples": 16, "greedy-majority": 16}
"""Each rule's default answer length (ferrando: the released code's ``--max_new_tokens`` 32)."""

KNOWN_OPTIONS = (
    Option(
        "run",
        "--run",
        "Persuasion run whose model answers (its open queries).",
        kind=int,
        maximum=ID_MAX,
        minimum=1,
        required=True,
    ),
    Option("name", "--name", "Covariate name (view cov_<name>); default known_r<run>."),
    Option(
        "rule",
        "--rule",
        "ferrando: Ferrando et al.'s released code (one greedy answer per attribute, judged by its "
        "checks: fuzzy names, numbers within 2, refusals; known with at least max(2, n-1) of n "
        "attributes correct and no refusal, unknown with none correct); ctxprior-samples: --samples "
        "answers sampled per attribute, correct when at least --min-correct match, known with at "
        "least --min-attributes correct attributes; greedy-majority: one greedy answer per open "
        "query form, known when at least half are correct. Unknown: none correct.",
        default="ferrando",
        choices=RULES,
    ),
    Option(
        "samples",
        "--samples",
        "ctxprior-samples: answers sampled per attribute.",
        default=10,
        kind=int,
        minimum=1,
        maximum=100,
    ),
    Option(
        "temperature",
        "--temperature",
        "ctxprior-samples: sampling temperature (full vocabulary, no top-k / top-p).",
        default=1.0,
        kind=float,
        above=0.0,
        maximum=10.0,
    ),
    Option(
        "min_correct",
        "--min-correct",
        "ctxprior-samples: an attribute is correct when at least this many of its samples match a "
        "gold answer (at most --samples).",
        default=3,
        kind=int,
        minimum=1,
        maximum=100,
    ),
    Option(
        "min_attributes",
        "--min-attributes",
        "ctxprior-samples: an entity is known with at least this many correct attributes.",
        default=2,
        kind=int,
        minimum=1,
        maximum=100,
    ),
    seed_option(0, "ctxprior-samples: random seed of the sampling (recorded with the covariate)."),
    Option(
        "max_new_tokens",
        "--max-new-tokens",
        "Length of each closed-book answer, in tokens (default: 32 for ferrando, as its released "
        "code; 16 for the others).",
        kind=int,
        minimum=1,
        maximum=256,
    ),
    Option("device", "--device", "Where the model runs: auto, cpu, cuda, mps.", default="auto"),
    Option(
        "batch_size",
        "--batch-size",
        "Prompts per batch (ferrando, greedy-majority default: from the model size; "
        f"ctxprior-samples default: {SAMPLE_BATCH}, each with its --samples rows; the samples depend on it).",
        kind=int,
        minimum=1,
        maximum=4096,
    ),
    Option(
        "replace",
        "--replace",
        "Replace an existing covariate of this name (answers asked again).",
        default=False,
        kind=bool,
    ),
)

ADD_OPTIONS = (
    Option("data", None, "CSV or Parquet file.", argument=True, required=True, metavar="FILE", file=True),
    _name("my_table"),
    Option(
        "on",
        "--on",
        f"Key columns of FILE, comma-separated, from {','.join(KEYS)} (e.g. entity,answer).",
        choices=KEYS,
        listed=True,
        required=True,
    ),
    Option(
        "match",
        "--match",
        "Match entity/answer/relation values against names or URIs.",
        default="name",
        choices=MATCH,
    ),
    _REPLACE,
    _DESCRIPTION,
)
