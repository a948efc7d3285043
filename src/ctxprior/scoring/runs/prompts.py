"""``ctxprior runs prompts RUN``: the exact strings a persuasion run's model read.

Rebuilt from the run's stored plan and options by the code that builds the engine's inputs
(``plan.load_inputs`` -> ``units.unit_prompts``: the dataset's separator between context and
query, the run's ``PromptFormat``), not by a second renderer: one row per prompt, with the keys
that join it to the score rows (run_id, query_form_id, fact_id, context_id; context_id NULL and
context_type 'none' for the prompt without context).
"""

from __future__ import annotations

import json

import pandas as pd

from ...errors import UserError
from ...storage.store import Store
from ..options import ScoreConfig
from ..prompts import PromptFormat, format_for, prompt_format
from ..texts import unit_prompts
from .plan import load_inputs, plan_units
from .record import RUN_KIND

COLUMNS = ["run_id", "unit_id", "query_form_id", "fact_id", "context_id", "context_type", "prompt"]


def _run_format(model: str, config: ScoreConfig) -> PromptFormat:
    """The run's prompt format: raw needs no tokenizer; chat renders with the model's tokenizer
    (loaded alone) and must match the rendering the run stored."""
    if config.prompt_format == "raw":
        return prompt_format(None, "raw")
    from transformers import AutoTokenizer

    from ..models import _locate

    try:
        tok = AutoTokenizer.from_pretrained(_locate(model)[0])
    except (OSError, ValueError) as e:
        raise UserError(
            f"run's model {model}: its tokenizer cannot be loaded here ({e})".splitlines()[0]
        ) from None
    return format_for(tok, config)


def run_prompts(store: Store, run_id: int, limit: int | None = None) -> pd.DataFrame:
    """The prompts of persuasion run ``run_id`` in unit order (at most ``limit`` rows)."""
    row = store.query("SELECT kind, sample_id, model, config_json FROM run WHERE run_id = ?", [run_id])
    if not row:
        raise UserError(f"run {run_id}: no such run in {store.path}; see `ctxprior runs`")
    kind, sample_id, model, cfg = row[0]
    if kind != RUN_KIND:
        raise UserError(
            f"run {run_id}: a {kind} run; `runs prompts` shows the prompts of `ctxprior score` runs"
        )
    config = ScoreConfig.from_json_dict(json.loads(cfg)["identity"]["score"])
    fmt = _run_format(model, config)
    types = dict(store.query("SELECT context_id, context_type FROM context WHERE sample_id = ?", [sample_id]))
    rows: list[tuple] = []
    for inp in load_inputs(store, sample_id, run_id, plan_units(store, sample_id, config)):
        for fact_id, context_id, text in unit_prompts(inp, fmt):
            kind_ = "none" if context_id is None else types.get(context_id)
            rows.append((run_id, inp.spec.unit_id, inp.spec.query_form_id, fact_id, context_id, kind_, text))
            if limit is not None and len(rows) >= limit:
                return pd.DataFrame(rows, columns=COLUMNS).astype({"context_id": "Int64"})
    return pd.DataFrame(rows, columns=COLUMNS).astype({"context_id": "Int64"})
