"""Tiny random models of every family the engine knows, built from configs, and the naive
reference (each prompt alone, in full, no cache): shared by tests/test_architectures.py and
tests/test_flex.py."""

from __future__ import annotations

import functools

import torch
import transformers as T

from ctxprior.scoring.models import LoadedModel

ATOL = 1e-5
CORPUS = [
    "The capital of France is Paris.\n",
    "Definitely, the capital of Germany is Berlin.\n",
    "Q: What is the capital of Spain?\nA:",
    "Zorblax Quentaria Madrid Lima Cairo",
] * 5
CONTEXTS = [
    "The capital of France is Rome.\n",
    "Definitely, the capital of Spain is Paris, and that is all there is to it.\n",
    "Lima.\n",
    "The capital of Peru is Lima",
]  # the last merges with the query's tokens
QUERIES = [f"Q: What is the capital of {e}?\nA:" for e in ["France", "Spain", "Zorblax"]]
ANSWERS = [["Paris", "Rome", "Madrid Lima"]] * len(QUERIES)


@functools.cache
def tokenizer():
    """A small byte-level BPE trained in-test (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", pad_token="<eos>")


def _common(**kw) -> dict:
    base = dict(
        vocab_size=len(tokenizer()),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
    )
    base.update(kw)
    return base


def _v() -> int:
    return len(tokenizer())


SW3 = ["sliding_attention", "sliding_attention", "full_attention"]

# name -> (config factory taking the sliding window (None: the family's default), model class)
FAMILIES = {
    "gpt_neox": (lambda w: T.GPTNeoXConfig(**_common(), rotary_pct=0.25), T.GPTNeoXForCausalLM),
    "llama": (lambda w: T.LlamaConfig(**_common()), T.LlamaForCausalLM),
    "mistral": (lambda w: T.MistralConfig(**_common(), sliding_window=w), T.MistralForCausalLM),
    "qwen2": (lambda w: T.Qwen2Config(**_common(), attention_bias=True), T.Qwen2ForCausalLM),
    "qwen3": (lambda w: T.Qwen3Config(**_common(), head_dim=8), T.Qwen3ForCausalLM),
    "gemma": (lambda w: T.GemmaConfig(**_common(), head_dim=8), T.GemmaForCausalLM),
    "gemma2": (
        lambda w: T.Gemma2Config(
            **_common(num_hidden_layers=3),
            head_dim=8,
            sliding_window=w or 64,
            layer_types=SW3,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
        ),
        T.Gemma2ForCausalLM,
    ),
    "gemma3_text": (
        lambda w: T.Gemma3TextConfig(
            **_common(num_hidden_layers=3), head_dim=8, sliding_window=w or 64, layer_types=SW3
        ),
        T.Gemma3ForCausalLM,
    ),
    "phi3": (lambda w: T.Phi3Config(**_common(), sliding_window=w), T.Phi3ForCausalLM),
    "olmo": (lambda w: T.OlmoConfig(**_common()), T.OlmoForCausalLM),
    "olmo2": (lambda w: T.Olmo2Config(**_common()), T.Olmo2ForCausalLM),
    "olmo3": (
        lambda w: T.Olmo3Config(**_common(num_hidden_layers=3), sliding_window=w or 64, layer_types=SW3),
        T.Olmo3ForCausalLM,
    ),
    "gpt2": (
        lambda w: T.GPT2Config(
            vocab_size=_v(), n_embd=32, n_layer=2, n_head=4, n_positions=256, bos_token_id=0, eos_token_id=0
        ),
        T.GPT2LMHeadModel,
    ),
    "bloom": (
        lambda w: T.BloomConfig(vocab_size=_v(), hidden_size=32, n_layer=2, n_head=4),
        T.BloomForCausalLM,
    ),
    "mpt": (
        lambda w: T.MptConfig(vocab_size=_v(), d_model=32, n_layers=2, n_heads=4, max_seq_len=256),
        T.MptForCausalLM,
    ),
    "falcon": (
        lambda w: T.FalconConfig(
            vocab_size=_v(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, alibi=True
        ),
        T.FalconForCausalLM,
    ),
    "falcon-rotary": (
        lambda w: T.FalconConfig(
            vocab_size=_v(),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            alibi=False,
            new_decoder_architecture=True,
            num_kv_heads=2,
        ),
        T.FalconForCausalLM,
    ),
    "opt": (
        lambda w: T.OPTConfig(
            vocab_size=_v(),
            hidden_size=32,
            ffn_dim=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=256,
            word_embed_proj_dim=32,
            pad_token_id=1,
        ),
        T.OPTForCausalLM,
    ),
    "gptj": (
        lambda w: T.GPTJConfig(
            vocab_size=_v(), n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=256
        ),
        T.GPTJForCausalLM,
    ),
    "codegen": (
        lambda w: T.CodeGenConfig(
            vocab_size=_v(), n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=256
        ),
        T.CodeGenForCausalLM,
    ),
    # GPT-Neo's local layers (here an 8-token window) keep every key in the cache: exact
    "gpt_neo": (
        lambda w: T.GPTNeoConfig(
            vocab_size=_v(),
            hidden_size=32,
            num_layers=2,
            num_heads=4,
            attention_types=[[["global", "local"], 1]],
            window_size=8,
            max_position_embeddings=256,
        ),
        T.GPTNeoForCausalLM,
    ),
    "gpt_bigcode": (
        lambda w: T.GPTBigCodeConfig(
            vocab_size=_v(), n_embd=32, n_layer=2, n_head=4, n_positions=256, multi_query=True
        ),
        T.GPTBigCodeForCausalLM,
    ),
    "starcoder2": (lambda w: T.Starcoder2Config(**_common(), sliding_window=w), T.Starcoder2ForCausalLM),
    "phi": (lambda w: T.PhiConfig(**_common(), partial_rotary_factor=0.5), T.PhiForCausalLM),
    "stablelm": (lambda w: T.StableLmConfig(**_common(num_attention_heads=2)), T.StableLmForCausalLM),
    "cohere": (lambda w: T.CohereConfig(**_common()), T.CohereForCausalLM),
    "cohere2": (lambda w: T.Cohere2Config(**_common(), sliding_window=w or 64), T.Cohere2ForCausalLM),
    "granite": (lambda w: T.GraniteConfig(**_common()), T.GraniteForCausalLM),
    "smollm3": (
        lambda w: T.SmolLM3Config(**_common(num_hidden_layers=4)),
        T.SmolLM3ForCausalLM,
    ),  # layer 4: NoPE
}
SLIDING = ["mistral", "phi3", "gemma2", "gemma3_text", "olmo3", "starcoder2", "cohere2"]


def build(name: str, window: int | None = None, seed: int = 0) -> LoadedModel:
    make, cls = FAMILIES[name]
    torch.manual_seed(seed)
    model = cls(make(window)).eval()
    return LoadedModel(
        model=model,
        tokenizer=tokenizer(),
        model_id=f"tiny-{name}",
        revision=None,
        dtype="float32",
        device="cpu",
    )


def prompts() -> list[str]:
    return [c + q for q in QUERIES for c in CONTEXTS] + QUERIES


@torch.inference_mode()
def naive_last(lm: LoadedModel, seqs) -> torch.Tensor:
    """Each sequence alone, in full, no cache: next-token log-probs [n, V] (float64)."""
    return torch.stack(
        [torch.log_softmax(lm.model(input_ids=torch.tensor([s])).logits[0, -1].double(), -1) for s in seqs]
    )


@torch.inference_mode()
def naive_continuation(lm: LoadedModel, prompt, cont) -> float:
    ids = tuple(prompt) + tuple(cont)
    lp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    return float(sum(lp[len(prompt) - 1 + k, t] for k, t in enumerate(cont)))
