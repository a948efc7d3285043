"""Which model families the engine's shared-prefix key/value reuse is exact for.

The engine computes a prefix group's common token prefix once, keeps its key/value cache, and
runs each prompt's suffix on it: a batch of prefixes is computed right-padded, then shifted into
one left-padded key/value block (every prefix ends at the same column, its pad slots zeroed and
masked), and each row's position ids start after its own prefix (engine.py's module docstring has
the details). That is exact (equal to running each
prompt alone, to float rounding) whenever a layer's output at a position depends only on the
unmasked keys and values before it and on that position's id. ``tests/test_architectures.py``
checks it for every family in ``EXACT`` on a tiny random config; ``families()`` is ``EXACT`` with
the families other packages declare (entry points ``ctxprior.model_families``, a module that calls
``register_family``; see ``ctxprior.plugins``), verified by those packages.

It is not exact, or not known to be, for
- **sliding-window layers whose window is shorter than the prompt, in a cache built from the
  model's config**: that cache keeps only the last ``window - 1`` keys of a sliding layer, so a
  longer prefix no longer fits. A cache that keeps every key (``transformers.DynamicCache()``
  without a config) makes them exact again, because the window is applied by the mask. The
  engine computes its prefixes that way and asks with ``full_prefix_cache=True``, so for it a
  window of any length is exact;
- **chunked attention** (Llama 4): chunk boundaries are absolute token indices, which left
  padding moves;
- **recurrent or state-space layers** (Mamba, RWKV, Jamba, ...): a state, not a key/value cache;
- **any model type not in the table**: not verified, so not trusted.

For these the engine runs every prompt in full (``Engine(share_prefix=False)``: no prefix cache;
whole prompts sorted by length, right-padded and masked in batches), which is exact for every
causal LM. The table with the
reasons is in docs/architectures.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plugins import Registry

# model_type -> (family, transformers class): prefix reuse verified exact (tests/test_architectures.py)
EXACT: dict[str, tuple[str, str]] = {
    "gpt_neox": ("GPT-NeoX (Pythia), partial rotary", "GPTNeoXForCausalLM"),
    "llama": ("Llama (Llama 2/3, SmolLM2)", "LlamaForCausalLM"),
    "mistral": ("Mistral", "MistralForCausalLM"),
    "qwen2": ("Qwen2 / Qwen2.5, attention biases", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3, q/k norms", "Qwen3ForCausalLM"),
    "gemma": ("Gemma", "GemmaForCausalLM"),
    "gemma2": ("Gemma 2, sliding + global layers, logit soft-capping", "Gemma2ForCausalLM"),
    "gemma3_text": ("Gemma 3 (text), sliding + global layers", "Gemma3ForCausalLM"),
    "phi3": ("Phi-3", "Phi3ForCausalLM"),
    "olmo": ("OLMo", "OlmoForCausalLM"),
    "olmo2": ("OLMo 2", "Olmo2ForCausalLM"),
    "olmo3": ("OLMo 3, sliding + global layers", "Olmo3ForCausalLM"),
    "gpt2": ("GPT-2, absolute positions", "GPT2LMHeadModel"),
    "bloom": ("BLOOM, ALiBi", "BloomForCausalLM"),
    "mpt": ("MPT, ALiBi", "MptForCausalLM"),
    "falcon": ("Falcon, rotary or ALiBi (alibi=True)", "FalconForCausalLM"),
    "opt": ("OPT, learned positions", "OPTForCausalLM"),
    "gptj": ("GPT-J, partial rotary", "GPTJForCausalLM"),
    "codegen": ("CodeGen, partial rotary", "CodeGenForCausalLM"),
    "gpt_neo": ("GPT-Neo, local + global layers", "GPTNeoForCausalLM"),
    "gpt_bigcode": ("GPTBigCode (StarCoder), multi-query", "GPTBigCodeForCausalLM"),
    "starcoder2": ("StarCoder2", "Starcoder2ForCausalLM"),
    "phi": ("Phi-1/1.5/2, partial rotary", "PhiForCausalLM"),
    "stablelm": ("StableLM, partial rotary", "StableLmForCausalLM"),
    "cohere": ("Cohere Command-R", "CohereForCausalLM"),
    "cohere2": ("Cohere Command-R7B / A, sliding + global layers", "Cohere2ForCausalLM"),
    "granite": ("Granite", "GraniteForCausalLM"),
    "smollm3": ("SmolLM3, NoPE layers", "SmolLM3ForCausalLM"),
}


# EXACT with the families other packages declare (entry points ``ctxprior.model_families``)
FAMILIES: Registry[tuple[str, str]] = Registry(
    "model_families", "model family", declared=lambda: EXACT.items()
)


def register_family(model_type: str, family: str, cls: str) -> None:
    """Declare prefix reuse exact for ``model_type`` (a plug-in module calls it once it has checked
    it as ``tests/test_architectures.py`` does); a type already declared otherwise is a mistake."""
    FAMILIES.add(model_type, (family, cls))


def families() -> dict[str, tuple[str, str]]:
    """``EXACT`` with the plug-ins' families (loaded on first use): model_type -> (family, class)."""
    return FAMILIES.all()


# model types whose layers keep a recurrent state instead of (or beside) a key/value cache
RECURRENT: frozenset[str] = frozenset(
    {
        "mamba",
        "mamba2",
        "falcon_mamba",
        "rwkv",
        "recurrent_gemma",
        "jamba",
        "zamba",
        "zamba2",
        "bamba",
        "falcon_h1",
        "granitemoehybrid",
        "nemotron_h",
        "lfm2",
        "qwen3_next",
        "xlstm",
    }
)


# model types whose activations overflow float16 (Gemma-3-270M in float16 gives NaN/inf log-probs,
# tests/test_gemma.py): dtype "auto" on CUDA picks bfloat16 for them instead of float16
FLOAT16_OVERFLOW: frozenset[str] = frozenset({"gemma3", "gemma3_text"})


def float16_safe(config: Any) -> bool:
    """False for model families whose activations overflow float16 (see ``FLOAT16_OVERFLOW``)."""
    types = {getattr(config, "model_type", None), getattr(text_config(config), "model_type", None)}
    return not (types & FLOAT16_OVERFLOW)


def text_config(config: Any) -> Any:
    """The language model's config (the text part of a multimodal config)."""
    get = getattr(config, "get_text_config", None)
    return get() if callable(get) else config


@dataclass(frozen=True)
class Dims:
    """The sizes the engine's memory estimates need, read once from a config."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int


def dims(config: Any) -> Dims:
    """``Dims`` of a config, under the names the families use (Llama's and GPT-2's)."""
    cfg = text_config(config)
    # 0 (not None) when a name is absent: falsy for `or` alike, and typed as the ints they are
    layers = getattr(cfg, "num_hidden_layers", 0) or getattr(cfg, "n_layer", 12)
    heads = getattr(cfg, "num_attention_heads", 0) or getattr(cfg, "n_head", 12)
    hidden = getattr(cfg, "hidden_size", 0) or getattr(cfg, "n_embd", 768)
    return Dims(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=getattr(cfg, "num_key_value_heads", 0) or heads,
        head_dim=getattr(cfg, "head_dim", 0) or hidden // heads,
        intermediate=getattr(cfg, "intermediate_size", 0) or 4 * hidden,
    )


def sliding_window(config: Any) -> int | None:
    """The smallest attention window of any layer (sliding windows), or None when every layer
    attends to the whole prefix."""
    cfg = text_config(config)
    window = getattr(cfg, "sliding_window", None)
    if not window or getattr(cfg, "use_sliding_window", True) is False:
        return None
    layer_types = getattr(cfg, "layer_types", None)
    if layer_types is not None and "sliding_attention" not in layer_types:
        return None
    return int(window)


def prefix_reuse(
    model_config: Any, max_len: int | None = None, *, full_prefix_cache: bool = False
) -> tuple[bool, str]:
    """Whether shared-prefix KV reuse is exact for this model, and why (one line).

    ``max_len``: the longest prompt (in tokens, continuation included) the engine will run;
    None means any length. ``full_prefix_cache``: the engine computes prefix caches with a cache
    that keeps every key (``DynamicCache()`` without a config), so sliding windows of any length
    are exact. When the answer is False, run full prompts (``share_prefix=False``).
    """
    cfg = text_config(model_config)
    mtype = getattr(model_config, "model_type", None) or "unknown"
    text_type = getattr(cfg, "model_type", None) or mtype
    if mtype in RECURRENT or text_type in RECURRENT:
        return False, (
            f"{mtype}: recurrent/state-space layers keep a state, not a key/value cache; running full prompts"
        )
    if "chunked_attention" in (getattr(cfg, "layer_types", None) or ()):
        return False, (
            f"{mtype}: chunked attention (chunks of {getattr(cfg, 'attention_chunk_size', '?')} "
            "tokens at absolute indices, moved by left padding); running full prompts"
        )
    if mtype not in families():
        return False, (
            f"{mtype}: prefix reuse not verified for this model type "
            "(see docs/architectures.md); running full prompts"
        )
    family = families()[mtype][0]
    window = sliding_window(cfg)
    if window is not None and not full_prefix_cache:
        if max_len is None:
            return False, (
                f"{mtype}: sliding-window layers ({window} tokens) and prompt lengths "
                "unknown; running full prompts"
            )
        if max_len > window:
            return False, (
                f"{mtype}: sliding-window layers ({window} tokens) are shorter than the "
                f"longest prompt ({max_len} tokens), so the prefix cache would drop keys; "
                "running full prompts"
            )
    return True, f"{mtype}: {family}; prefix reuse is exact (tests/test_architectures.py)"
