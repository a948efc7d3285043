"""The GPU scoring benchmark: one command, no internet, random-init Pythia shapes (issue 18).

For each model shape (GPT-NeoX configs of Pythia 410m, 1.4b, 6.9b; 12b in 8-bit with
``--quant8`` when bitsandbytes is installed) and dtype (float16, bfloat16), one paper-shaped work
unit of synthetic YAGO-shaped token ids (600 contexts x 100 entities, one query form, + the
no-context prompts) is scored by the engine (ψ and χ included). Printed per row:

- prompts/s and tokens/s (tokens of the full prompts, as a naive scorer would feed them);
- the fraction of the unique-token FLOP floor: 2 x non-embedding parameters x unique tokens (the
  distinct prefixes of all prompts: what a perfect prefix-sharing engine must compute) / peak,
  with the peak measured in the same run (a large bf16/fp16 matmul) and the nominal one beside it;
- peak GPU memory, the batch size and token budget chosen, out-of-memory splits;
- the naive full-prompt scorer (``naive_scoring.py``'s method: left-padded batches, logits of every
  position, softmax on the host) on a slice of the same unit, and the ratio.

Then precision: ψ and χ of a small model with peaked distributions, CPU float32 against the GPU
in float32, bfloat16 and float16 (max and median deviation), from which the CUDA default dtype is
chosen (docs/scoring.md#precision).

    python benchmarks/gpu.py                       # on a CUDA machine: every shape, both dtypes
    python benchmarks/gpu.py --shapes 410m --dtypes float16 --entities 16
    python benchmarks/gpu.py --smoke               # a tiny shape on the CPU (the test suite runs this)

It needs only torch, transformers and numpy (the engine imports no warehouse code), so on a bare
GPU machine with those, ``PYTHONPATH=src python3 benchmarks/gpu.py --json gpu.json`` runs from a
checkout without installing ctxprior.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_overhead import yago_unit

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import scores_batch
from ctxprior.scoring.metrics import scores_np
from ctxprior.scoring.models import LoadedModel

PYTHIA = {  # hidden, layers, heads (intermediate = 4 x hidden, vocab 50304, rotary_pct 0.25)
    "410m": (1024, 24, 16),
    "1.4b": (2048, 24, 16),
    "6.9b": (4096, 32, 32),
    "12b": (5120, 36, 40),
    "smoke": (64, 4, 4),
}
NOMINAL_PEAK = {"H100": 989e12, "H200": 989e12}  # dense bf16/fp16 TFLOP/s of the SXM parts


def pythia(shape: str, dtype: torch.dtype, device: str, quant8: bool = False) -> LoadedModel:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    hidden, layers, heads = PYTHIA[shape]
    vocab = 512 if shape == "smoke" else 50304
    cfg = GPTNeoXConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        rotary_pct=0.25,
        max_position_embeddings=2048,
        use_parallel_residual=True,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    if quant8:
        import tempfile

        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        with torch.device("cpu"):
            model = GPTNeoXForCausalLM(cfg).to(torch.float16)
        folder = tempfile.mkdtemp(prefix="pythia-12b-")
        model.save_pretrained(folder)
        del model
        model = AutoModelForCausalLM.from_pretrained(
            folder, quantization_config=BitsAndBytesConfig(load_in_8bit=True), device_map={"": 0}
        )
        dt = "int8"
    else:
        with torch.device(device):
            model = GPTNeoXForCausalLM(cfg).to(dtype)
        dt = str(dtype).replace("torch.", "")
    return LoadedModel(
        model=model.eval(),
        tokenizer=None,
        model_id=f"pythia-{shape}-random",
        revision=None,
        dtype=dt,
        device=device,
        quantization="8bit" if quant8 else None,
    )


def non_embedding_params(model) -> int:
    emb = {
        id(p) for m in (model.get_input_embeddings(), model.get_output_embeddings()) for p in m.parameters()
    }
    return sum(p.numel() for p in model.parameters() if id(p) not in emb)


def unique_tokens(seqs) -> int:
    """Distinct prefixes of all sequences (the nodes of their token trie)."""
    seen = set()
    for s in seqs:
        h = 0
        for t in s:
            h = hash((h, t))
            seen.add(h)
    return len(seen)


def measured_peak(dtype: torch.dtype, device: str) -> float:
    n = 8192 if device.startswith("cuda") else 512
    a = torch.randn(n, n, device=device, dtype=dtype if device.startswith("cuda") else torch.float32)
    b = torch.randn_like(a)
    for _ in range(3):
        a @ b
    sync(device)
    reps = 20 if device.startswith("cuda") else 3
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync(device)
    return 2 * n**3 * reps / (time.perf_counter() - t)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def unit(n_ctx: int, n_ent: int, vocab: int):
    contexts, queries = yago_unit(n_ctx, n_ent, vocab)
    nc, nq = len(contexts), len(queries)
    seqs = [c + q for q in queries for c in contexts] + list(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    return contexts, queries, seqs, groups


def engine_run(lm: LoadedModel, seqs, groups, nc: int, nq: int, batch_size=None):
    eng = Engine(lm, batch_size=batch_size)
    sync(lm.device)
    t = time.perf_counter()
    table, row_of = eng.last_logprobs(seqs, groups)
    (idx,) = eng.to_device(np.asarray(row_of))
    res = scores_batch(table[idx[: nq * nc]].view(nq, nc, -1), table[idx[nq * nc :]], 10, 0, str)
    sync(lm.device)
    return eng, res, time.perf_counter() - t


@torch.inference_mode()
def naive_rows(lm: LoadedModel, contexts, queries, batch_size: int = 32) -> np.ndarray:
    """naive_scoring.py's method on token ids: per query, batches of context + query RIGHT-padded
    (a pad position still sees the real tokens before it: no fully masked attention row), logits
    of every position, the last real position's log-softmax in float64 numpy on the host.
    Returns ``[queries x contexts, vocab]``."""
    dev = lm.device
    out = []
    for q in queries:
        for s in range(0, len(contexts), batch_size):
            enc = [c + q for c in contexts[s : s + batch_size]]
            w = max(map(len, enc))
            ids = torch.tensor([list(e) + [0] * (w - len(e)) for e in enc], device=dev)
            mask = torch.tensor([[1] * len(e) + [0] * (w - len(e)) for e in enc], device=dev)
            last = torch.tensor([len(e) - 1 for e in enc], device=dev)
            logits = lm.model(input_ids=ids, attention_mask=mask).logits
            x = logits[torch.arange(len(enc), device=dev), last].float().cpu().numpy().astype(np.float64)
            top = x.max(-1, keepdims=True)
            out.append(x - top - np.log(np.exp(x - top).sum(-1, keepdims=True)))
    return np.concatenate(out)


def naive_run(lm: LoadedModel, contexts, queries, batch_size: int = 32) -> tuple[int, float]:
    """The naive scorer's prompts and seconds: ``naive_rows`` and the metrics on the host."""
    sync(lm.device)
    t = time.perf_counter()
    for q in queries:
        scores_np(naive_rows(lm, contexts, [q], batch_size))
    return len(queries) * len(contexts), time.perf_counter() - t


def throughput(args, shape: str, dtype_name: str, out: list) -> None:
    device = args.device
    dtype = getattr(torch, dtype_name)
    quant8 = shape == "12b"
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    lm = pythia(shape, dtype, device, quant8=quant8)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    contexts, queries, seqs, groups = unit(args.contexts, args.entities, vocab)
    nc, nq = len(contexts), len(queries)
    params = non_embedding_params(lm.model)
    warm = unit(24, 4, vocab)
    engine_run(lm, warm[2], warm[3], 24, 4)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    eng, res, secs = engine_run(lm, seqs, groups, nc, nq, args.batch_size)
    assert all(np.isfinite(r.susceptibility) for r in res)
    n_prompts, n_tokens, uniq = len(seqs), sum(map(len, seqs)), unique_tokens(seqs)
    floor = 2 * params * uniq / args.peak
    naive_n, naive_s = naive_run(lm, contexts, queries[: args.naive_entities])
    row = {
        "shape": shape,
        "dtype": lm.dtype,
        "prompts": n_prompts,
        "seconds": round(secs, 3),
        "prompts_per_s": round(n_prompts / secs),
        "tokens_per_s": round(n_tokens / secs),
        "unique_tokens": uniq,
        "floor_fraction": round(floor / secs, 3),
        "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1)
        if device.startswith("cuda")
        else None,
        "batch_size": eng.batch_size,
        "token_budget": eng.token_budget,
        "oom_splits": eng.oom_splits,
        "forward_calls": eng.forward_calls,
        "naive_prompts_per_s": round(naive_n / naive_s, 1),
        "vs_naive": round((n_prompts / secs) / (naive_n / naive_s), 1),
    }
    out.append(row)
    print(
        f"{shape:>5} {lm.dtype:>8}: {row['prompts_per_s']:>8} prompts/s {row['tokens_per_s']:>9} tokens/s  "
        f"floor {row['floor_fraction']:6.1%}  peak {row['peak_mem_gib']} GiB  batch {eng.batch_size} "
        f"(budget {eng.token_budget} tokens, {eng.oom_splits} OOM splits, {eng.forward_calls} forwards)  "
        f"naive {row['naive_prompts_per_s']} prompts/s -> {row['vs_naive']}x",
        flush=True,
    )
    del lm, eng, res
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def precision(args, out: list) -> None:
    """CPU float32 against the device in float32 / bfloat16 / float16, on peaked distributions."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(1)
    cfg = GPTNeoXConfig(
        vocab_size=2048,
        hidden_size=256,
        intermediate_size=1024,
        num_hidden_layers=4,
        num_attention_heads=8,
        rotary_pct=0.25,
        max_position_embeddings=512,
        tie_word_embeddings=False,
    )
    base = GPTNeoXForCausalLM(cfg).eval()
    with torch.no_grad():
        base.get_output_embeddings().weight.mul_(12.0)  # peaked next-token distributions, as a trained LM's
    contexts, queries, seqs, groups = unit(120, 8, 2048)
    nc, nq = len(contexts), len(queries)

    def scores(device, dtype):
        model = GPTNeoXForCausalLM(cfg).eval()
        model.load_state_dict(base.state_dict())
        lm = LoadedModel(
            model=model.to(device=device, dtype=dtype),
            tokenizer=None,
            model_id="peaked",
            revision=None,
            dtype=str(dtype),
            device=device,
        )
        _, res, _ = engine_run(lm, seqs, groups, nc, nq)
        return np.stack([r.persuasion for r in res]), np.array([r.susceptibility for r in res])

    ref_psi, ref_chi = scores("cpu", torch.float32)
    print(
        f"precision (peaked random GPT-NeoX, {nq} entities x {nc} contexts; median chi {np.median(ref_chi):.3f} nats):"
    )
    for name in ("float32", "bfloat16", "float16"):
        psi, chi = scores(args.device, getattr(torch, name))
        row = {
            "precision_dtype": name,
            "psi_max_abs": float(np.max(np.abs(psi - ref_psi))),
            "psi_median_abs": float(np.median(np.abs(psi - ref_psi))),
            "chi_max_abs": float(np.max(np.abs(chi - ref_chi))),
            "chi_median_rel": float(np.median(np.abs(chi - ref_chi) / np.maximum(ref_chi, 1e-12))),
        }
        out.append(row)
        print(
            f"  {args.device} {name:>8} vs cpu float32: psi max {row['psi_max_abs']:.2e} median "
            f"{row['psi_median_abs']:.2e}; chi max {row['chi_max_abs']:.2e} median rel {row['chi_median_rel']:.2%}"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="410m,1.4b,6.9b")
    ap.add_argument("--dtypes", default="float16,bfloat16")
    ap.add_argument("--quant8", action="store_true", help="also the 12b shape in 8-bit (bitsandbytes)")
    ap.add_argument("--contexts", type=int, default=600)
    ap.add_argument("--entities", type=int, default=100)
    ap.add_argument(
        "--naive-entities", type=int, default=2, help="entities the naive scorer runs (its prompts/s)"
    )
    ap.add_argument("--batch-size", type=int, default=None, help="default: the engine's automatic choice")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument(
        "--peak", type=float, default=None, help="FLOP/s of the floor (default: a matmul measured now)"
    )
    ap.add_argument("--smoke", action="store_true", help="a tiny shape on the CPU, a few prompts")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    if args.smoke:
        args.shapes, args.dtypes, args.contexts, args.entities, args.naive_entities = (
            "smoke",
            "float32",
            12,
            3,
            1,
        )
        args.device = "cpu"
    shapes = args.shapes.split(",") + (["12b"] if args.quant8 else [])
    dtypes = args.dtypes.split(",")
    mm_dtype = torch.bfloat16 if "bfloat16" in dtypes else torch.float16
    args.peak = args.peak or measured_peak(mm_dtype, args.device)
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    nominal = next((v for k, v in NOMINAL_PEAK.items() if k in name), None)
    import transformers

    print(
        f"{name}; torch {torch.__version__}, transformers {transformers.__version__}; peak (matmul now) "
        f"{args.peak / 1e12:.0f} TFLOP/s"
        + (f", nominal {nominal / 1e12:.0f}" if nominal else "")
        + f"; unit: {args.contexts} contexts x {args.entities} entities",
        flush=True,
    )
    out: list = []
    for shape in shapes:
        for dt in ["float16"] if shape == "12b" else dtypes:
            throughput(args, shape, dt, out)
    precision(args, out)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"device": name, "torch": torch.__version__, "rows": out}, indent=1)
        )


if __name__ == "__main__":
    main()
