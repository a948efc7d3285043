"""A local model folder for ``ctxprior score --model DIR``, made offline: a byte-level BPE tokenizer
trained on the strings of the bundled demo dataset and a random-init GPT-NeoX of a Pythia shape
(``gpu.PYTHIA``), built directly in the target dtype on the CPU and saved with ``save_pretrained``.

    python benchmarks/gpu_model.py DIR [--shape 410m] [--dtype float16]

Needs only torch, transformers and tokenizers (which transformers brings).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu import PYTHIA, pythia_config

DEMO = Path(__file__).resolve().parents[1] / "src" / "ctxprior" / "ingest" / "data" / "demo_yago.json"


def demo_strings() -> list[str]:
    """Every string of the bundled demo dataset: entities, answers, query forms, templates."""
    out: list[str] = []

    def walk(x) -> None:
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(DEMO.read_text()))
    return out


def bpe_tokenizer(vocab_size: int = 8000):
    """A byte-level BPE (GPT-2 / Pythia style) trained on the demo strings; end of text = pad."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(demo_strings() * 2, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def make_model_folder(folder: str | Path, shape: str = "410m", dtype: str = "float16") -> str:
    """Save a random-init Pythia-shape GPT-NeoX and its tokenizer to ``folder``; returns a summary."""
    from transformers import GPTNeoXForCausalLM

    folder = Path(folder)
    tok = bpe_tokenizer()
    cfg = pythia_config(shape)
    cfg.eos_token_id = cfg.bos_token_id = tok.eos_token_id
    cfg.vocab_size = max(cfg.vocab_size, len(tok))  # the smoke shape's 512 is for token ids, not text
    torch.manual_seed(0)
    model = GPTNeoXForCausalLM._from_config(cfg, dtype=getattr(torch, dtype)).eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    params = sum(p.numel() for p in model.parameters())
    return (
        f"model {folder}: GPT-NeoX {shape} ({params / 1e6:.0f}M params, {dtype}), tokenizer vocab {len(tok)}"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--shape", default="410m", choices=sorted(PYTHIA))
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    args = ap.parse_args(argv)
    print(make_model_folder(args.folder, args.shape, args.dtype), flush=True)


if __name__ == "__main__":
    main()
