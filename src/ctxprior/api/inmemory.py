"""The no-warehouse path: scores in memory for a few prompts (:func:`quick`), and a model loaded once
(:func:`load_model`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..scoring.models import DEFAULT_MODEL
from ..scoring.options import QUICK_OPTIONS
from .core import _per_layer
from .typecheck import checked, declared_keywords

if TYPE_CHECKING:  # imported where used, so that the command line starts without them
    import pandas as pd


@checked
@declared_keywords(QUICK_OPTIONS, per_layer=str | bool | None)
def quick(
    model: Any,
    query: str,
    entities: Sequence[str],
    contexts: Sequence[str],
    *,
    tokenizer: Any = None,
    **options: Any,
) -> pd.DataFrame:
    """Persuasion and susceptibility in memory, no warehouse (the authors' quick-start use).

    ``model``: an alias / Hugging Face id / folder, a model from :func:`ctxprior.load_model`, or a
    transformers causal LM already in your notebook together with its ``tokenizer``. ``query`` has
    an ``{entity}`` placeholder; each context is prepended as is (end it with ``"\\n"``);
    ``prompt_format="chat"`` puts context + query in the user turn of the model's chat template.
    Returns one row per (entity, context): ``entity, context, persuasion, susceptibility`` (nats;
    ``susceptibility`` repeats per entity); ``df.attrs["model"]`` names the model. With
    ``per_layer`` ("chi" or True: χ; "psi": χ and ψ) every row is repeated per ``layer`` of the
    logit lens (0 = embeddings; the last layer holds the values without it), one row per (entity,
    layer) for "chi".

    >>> df = ctxprior.quick("smollm2-135m", "Q: What is the capital of {entity}?\\nA:",
    ...                     ["France"], ["The capital of France is Rome.\\n", "The capital of France is Oslo.\\n"])
    >>> list(df.columns)
    ['entity', 'context', 'persuasion', 'susceptibility']

    Command: ``ctxprior quick``.
    """
    import pandas as pd

    from ..options import check_options
    from ..scoring.quick import quick_scores

    per_layer = options["per_layer"] = _per_layer(options["per_layer"])
    check_options(QUICK_OPTIONS, {"model": model, "query": query, **options})  # the CLI's checks
    if "{entity}" not in query:
        raise UserError("query: the template needs an {entity} placeholder")
    out = quick_scores(
        _as_model(model, tokenizer, options["device"], options["dtype"], options["quantization"]),
        query,
        list(entities),
        list(contexts),
        batch_size=options["batch_size"],
        prompt_format=options["prompt_format"],
        per_layer=per_layer,
    )
    rows: list[tuple]  # one a (entity, [context,] [layer,] score...) row
    if per_layer == "chi":
        rows = [(e["entity"], layer, chi) for e in out["entities"] for layer, chi in enumerate(e["layers"])]
        df = pd.DataFrame(rows, columns=["entity", "layer", "susceptibility"])
    elif per_layer == "psi":
        rows = [
            (e["entity"], c, layer, p, chi)
            for e in out["entities"]
            for layer, (chi, psis) in enumerate(zip(e["layers"], e["layer_persuasion"]))
            for c, p in zip(contexts, psis)
        ]
        df = pd.DataFrame(rows, columns=["entity", "context", "layer", "persuasion", "susceptibility"])
    else:
        rows = [
            (e["entity"], c, p, e["susceptibility"])
            for e in out["entities"]
            for c, p in zip(contexts, e["persuasion"])
        ]
        df = pd.DataFrame(rows, columns=["entity", "context", "persuasion", "susceptibility"])
    df.attrs["model"] = out["model"]
    return df


@checked
def load_model(
    model: str | Path = DEFAULT_MODEL,
    *,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
):
    """Load a causal LM once and reuse it in :func:`quick` / :meth:`Runs.score`."""
    from ..scoring.models import load_model as _load

    return _load(str(model), device=device, dtype=dtype, quantization=quantization)


def _as_model(model: Any, tokenizer: Any, device: str, dtype: str, quantization: str | None):
    from ..scoring.models import LoadedModel
    from ..scoring.quick import wrap_model

    if isinstance(model, (str, Path)):
        return load_model(str(model), device=device, dtype=dtype, quantization=quantization)
    if isinstance(model, LoadedModel):
        return model
    if tokenizer is None:
        raise UserError("quick: a transformers model needs its tokenizer (tokenizer=...)")
    return wrap_model(model, tokenizer)
