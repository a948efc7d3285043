"""`ctxprior score` (warehouse scoring runs) and `ctxprior quick` (no warehouse)."""

from __future__ import annotations

import json

import click

from ..api import command_options, read_input_text, score_options
from ..errors import UserError
from .app import pass_app, quiet_keywords
from .options import declared_options
from .runs import echo_run, interrupted

SCORE_OPTIONS = score_options()  # each declared once, with the API's checks (scoring/options.py)
QUICK_OPTIONS = command_options("quick")


def _quant(load_in_8bit: bool, load_in_4bit: bool) -> str | None:
    if load_in_8bit and load_in_4bit:
        raise UserError("--load-in-8bit and --load-in-4bit: choose one")
    return "8bit" if load_in_8bit else "4bit" if load_in_4bit else None


def _load_in(f):
    """--load-in-8bit / --load-in-4bit: the command line's spelling of the API's ``quantization``."""
    f = click.option(
        "--load-in-4bit", is_flag=True, help="Load the model in 4-bit (bitsandbytes; needs CUDA)."
    )(f)
    return click.option(
        "--load-in-8bit", is_flag=True, help="Load the model in 8-bit (bitsandbytes; needs CUDA)."
    )(f)


@click.command("score")
@declared_options(SCORE_OPTIONS, spelled={"quantization": _load_in})
@click.option(
    "--quiet",
    is_flag=True,
    help="No bar, status lines or top entities (warnings still print); the run's line and id print.",
)
@pass_app
def score_cmd(app, load_in_8bit, load_in_4bit, quiet, **options) -> None:
    """Score a sample with a causal LM: persuasion (KL) per context and susceptibility (MI) per
    entity and query form. Prints the run id alone on the last line."""
    quantization = _quant(load_in_8bit, load_in_4bit)
    wh = app.api(write=True)
    try:
        run = wh.runs.score(**options, quantization=quantization, **quiet_keywords(quiet))
    except KeyboardInterrupt:
        interrupted("rerun the command (or --resume) to continue")
    if not quiet and run.status == "done":
        for title, least in (("most susceptible:", False), ("least susceptible:", True)):
            rows = wh.runs.most_susceptible(run.id, 5, least=least)
            if len(rows):
                click.echo(title)
            for r in rows.itertuples():
                click.echo(
                    f"  {r.susceptibility:.4f}  {r.entity} ({r.entity_kind}; {r.relation}, {r.query_form})"
                )
    echo_run(run, "rerun to retry the failed units")


def _read_lines(path: str, what: str, escapes: bool) -> list[str]:
    text = read_input_text(path, what)  # never a FIFO, a device, the warehouse: ctxprior/inputs.py
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise UserError(f"{what} {path}: no non-empty lines")
    if escapes:
        lines = [ln.replace("\\n", "\n").replace("\\t", "\t") for ln in lines]
    return lines


@click.command("quick")
@declared_options(QUICK_OPTIONS, spelled={"quantization": _load_in})
@click.option(
    "--entities-file", required=True, type=click.Path(dir_okay=False), help="Entities, one per line."
)
@click.option(
    "--contexts-file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Contexts, one per line; \\n escapes allowed (a context should end with \\n).",
)
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
    per_layer,
    as_json,
) -> None:
    """Score entities against a list of contexts without a warehouse: susceptibility per entity
    and persuasion per context (nats), from the next-token distribution (the first-token
    estimator)."""
    from ..api import quick

    query = query.replace("\\n", "\n").replace("\\t", "\t")
    entities = [e.strip() for e in _read_lines(entities_file, "--entities-file", escapes=False)]
    contexts = _read_lines(contexts_file, "--contexts-file", escapes=True)
    kw = dict(
        device=device,
        dtype=dtype,
        quantization=_quant(load_in_8bit, load_in_4bit),
        batch_size=batch_size,
        prompt_format=prompt_format,
    )
    if per_layer:
        return _quick_layers(model, query, entities, contexts, per_layer, as_json, **kw)
    df = quick(model, query, entities, contexts, **kw)
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
