"""Shared by the scoring and engine tests: a small BPE tokenizer trained in-test, tiny random
models (``tiny`` through ``tiny_model``, ``tiny_family`` of a named transformers
family), the prompts they score, a demo sample in a warehouse and its result rows."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from ctxprior.scoring.models import LoadedModel
from ctxprior.storage import open_store

CORPUS = [
    "The capital of France is Paris.\n",
    "Definitely, the capital of Germany is Berlin.\n",
    "The capital of Italy is not Rome.\n",
    "Q: What is the capital of Spain?\nA:",
    "Q: Is the capital of Peru Lima?\nA: Yes No",
    "Zorblax Quentaria Madrid Lima Cairo",
] * 5


@functools.cache
def bpe_tokenizer():
    """A small byte-level BPE trained in-test (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tk.train_from_iterator(CORPUS, tr)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", pad_token="<eos>")


def tiny_model(
    vocab_tokenizer=None, seed: int = 0, arch: str = "llama", n_layer: int = 2, hidden: int = 32
) -> LoadedModel:
    """A tiny random model using a given tokenizer's vocabulary."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, PreTrainedModel

    tok = vocab_tokenizer
    torch.manual_seed(seed)
    vocab = len(tok)
    if arch == "llama":
        cfg = LlamaConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=2 * hidden,
            num_hidden_layers=n_layer,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=512,
            pad_token_id=tok.pad_token_id,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
        )
        model: PreTrainedModel = LlamaForCausalLM(cfg)
    else:
        gpt2 = GPT2Config(
            vocab_size=vocab,
            n_embd=hidden,
            n_layer=n_layer,
            n_head=4,
            n_positions=512,
            pad_token_id=tok.pad_token_id,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
        )
        model = GPT2LMHeadModel(gpt2)
    model.eval()
    return LoadedModel(
        model=model,
        tokenizer=tok,
        model_id=f"tiny-{arch}-{seed}",
        revision=None,
        dtype="float32",
        device="cpu",
    )


@functools.cache
def tiny(arch: str = "llama", seed: int = 0) -> LoadedModel:
    return tiny_model(bpe_tokenizer(), seed=seed, arch=arch)


CONTEXTS = [
    "The capital of France is Rome.\n",
    "Definitely, the capital of Spain is Paris.\n",
    "The capital of Italy is not Madrid.\n",
    "The capital of France is Rome.\n",
    "The capital of Peru is Lima",
]  # the last one has no newline: tokens merge with the query
QUERIES = [f"Q: What is the capital of {e}?\nA:" for e in ["France", "Spain", "Zorblax"]]


@functools.cache
def tiny_family(family: str, seed: int = 0) -> LoadedModel:
    """A tiny random model of ``family``: GPT-NeoX has partial rotary (rotary_pct 0.25, as
    Pythia), Llama grouped-query attention."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, LlamaConfig, LlamaForCausalLM

    tok = bpe_tokenizer()
    torch.manual_seed(seed)
    if family == "gpt_neox":
        cfg = GPTNeoXConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=3,
            num_attention_heads=4,
            rotary_pct=0.25,
            max_position_embeddings=512,
            use_parallel_residual=True,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
            bos_token_id=tok.eos_token_id,
        )
        model = GPTNeoXForCausalLM(cfg)
    else:
        cfg = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=512,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        )
        model = LlamaForCausalLM(cfg)
    return LoadedModel(
        model=model.eval(),
        tokenizer=tok,
        model_id=f"tiny-{family}",
        revision=None,
        dtype="float32",
        device="cpu",
    )


@torch.inference_mode()
def one_at_a_time(lm: LoadedModel, seqs) -> np.ndarray:
    """The reference: each sequence alone through the model's own forward, float64 log-softmax."""
    rows = []
    for s in seqs:
        logits = lm.model(input_ids=torch.tensor([s])).logits[0, -1]
        rows.append(torch.log_softmax(logits.double(), -1).numpy())
    return np.stack(rows)


def prompts():
    """Contexts of different token lengths (so prefixes differ in length within a batch), a
    duplicated context, and entities whose names differ in length (suffixes too)."""
    ents = ["France", "Spain", "Zorblax Quentaria", "Peru", "Italy"]
    queries = [f"Q: What is the capital of {e}?\nA:" for e in ents]
    return CONTEXTS + ["Definitely not.\n"], queries


def _demo(db_path: str, entities: int = 4, contexts: int = 12) -> int:
    from ctxprior.ingest.demo import ingest_demo
    from ctxprior.sampling.draw import draw_sample

    with open_store(db_path) as store:
        ingest_demo(store, only=["demo"])
        return draw_sample(
            store,
            dataset="demo",
            relations=["capital"],
            n_entities=entities,
            n_contexts=contexts,
            context_types=["base", "assertive", "negation"],
            seed=11,
        )


def _rows(wh, run_id):
    p = wh.query(
        "SELECT query_form_id, fact_id, context_id, persuasion, entropy FROM persuasion "
        "WHERE run_id = ? ORDER BY 1, 2, 3",
        [run_id],
    )
    s = wh.query(
        "SELECT query_form_id, fact_id, susceptibility, mixture_entropy, n_contexts, prior_entropy "
        "FROM susceptibility WHERE run_id = ? ORDER BY 1, 2",
        [run_id],
    )
    t = wh.query(
        "SELECT query_form_id, fact_id, rank, token_id, prob FROM prior_topk WHERE run_id = ? "
        "ORDER BY 1, 2, 3",
        [run_id],
    )
    return p, s, t


class _Interrupting:
    """Wraps LocalExecutor and raises KeyboardInterrupt after n units (a Ctrl-C mid-run)."""

    def __init__(self, inner, n):
        self.inner, self.n = inner, n

    def run(self, inputs, progress=None):
        for i, r in enumerate(self.inner.run(inputs, progress)):
            if i == self.n:
                raise KeyboardInterrupt
            yield r

    def close(self):
        pass


def interrupted_run(store, request, lm, after: int) -> None:
    """Score ``request`` with ``lm`` in this process and press Ctrl-C after ``after`` units: the
    run is left unfinished (cancelled), with ``after`` units committed."""
    from ctxprior.scoring.executors.local import LocalExecutor
    from ctxprior.scoring.runs.score import score_sample

    with pytest.raises(KeyboardInterrupt):
        score_sample(
            store,
            request,
            lm=lm,
            progress=False,
            log=lambda m: None,
            executor_factory=lambda m, c, b: _Interrupting(LocalExecutor(m, c, b), after),
        )


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("tinymodel")
    lm = tiny()
    lm.model.save_pretrained(d)
    lm.tokenizer.save_pretrained(d)
    return str(d)


def prefix_plan(engine, seqs, groups):
    """How ``engine`` splits each sequence into (shared prefix, suffix) using its prefix group."""
    from ctxprior.scoring.prefixes import Tokens, group_prefixes

    tok = Tokens.pack(seqs)
    prefix_len, _ = group_prefixes(tok, groups if engine.share_prefix else None, engine.min_prefix)
    return [(tuple(s[:k]), tuple(s[k:])) for s, k in zip(seqs, prefix_len.tolist())]
