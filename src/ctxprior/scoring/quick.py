"""Quick scoring without a warehouse (the authors' quickstart use case)."""

from __future__ import annotations

from .engine import Engine
from .estimators import first_token
from .models import LoadedModel, load_model
from .prompts import prompt_format as make_format


def quick_scores(
    model: str | LoadedModel,
    query: str,
    entities: list[str],
    contexts: list[str],
    *,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
    batch_size: int | None = None,
    prompt_format: str = "raw",
    per_layer: str | None = None,
) -> dict:
    """{"model": ..., "entities": [{"entity", "susceptibility", "persuasion": [per context, in order]}]};
    ``per_layer`` adds "layers" (χ per layer) and, for "psi", "layer_persuasion" ([layer][context])."""
    lm = (
        model
        if isinstance(model, LoadedModel)
        else load_model(model, device=device, dtype=dtype, quantization=quantization)
    )
    fmt = make_format(lm.tokenizer, prompt_format)
    engine = Engine(lm, batch_size=batch_size)
    queries = [query.replace("{entity}", e) for e in entities]
    res = first_token(
        engine, contexts, queries, prior_topk=0, with_prior=False, prompt=fmt, per_layer=per_layer
    )
    out = []
    for e, r in zip(entities, res):
        d = {"entity": e, "susceptibility": r.susceptibility, "persuasion": [float(x) for x in r.persuasion]}
        if r.by_layer is not None:
            d["layers"] = r.by_layer["susceptibility"].tolist()
            if "persuasion" in r.by_layer:
                d["layer_persuasion"] = r.by_layer["persuasion"].tolist()
        out.append(d)
    return {"model": lm.model_id, "entities": out}


def wrap_model(model, tokenizer) -> LoadedModel:
    """A transformers causal LM and its tokenizer, already loaded by the caller, as a LoadedModel."""
    config = getattr(model, "config", None)
    name = getattr(config, "_name_or_path", None) or type(model).__name__
    dtype = str(getattr(model, "dtype", "float32")).removeprefix("torch.")
    if tokenizer.pad_token_id is None:  # the engine pads batches (masked): any token will do
        tokenizer.pad_token = tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.unk_token
    return LoadedModel(
        model=model.eval(),
        tokenizer=tokenizer,
        model_id=name,
        revision=getattr(config, "_commit_hash", None),
        dtype=dtype,
        device=str(getattr(model, "device", "cpu")),
    )
