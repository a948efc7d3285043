"""The GPU scoring benchmark: one command, no internet, random-init Pythia shapes (issues 18, 34).

For each model shape (GPT-NeoX configs of Pythia 410m, 1.4b, 6.9b; 12b in 8-bit with
``--quant8`` when bitsandbytes is installed; ``smollm2``: the bundled SmolLM2-135M where it is
installed) and dtype (float16, bfloat16), one paper-shaped work unit (600 contexts x 100 entities,
one query form, + the no-context prompts) is scored by the engine (ψ and χ included). The unit is
``--unit real`` (the default: the demo data's templates under SmolLM2's BPE, ``real_units.py``,
whose ids are committed in ``data/real_unit.json``) or ``--unit synthetic`` (random YAGO-shaped ids,
``engine_overhead.yago_unit``: the unit of the figures before issue 34). Printed per row:

- prompts/s and tokens/s (tokens of the full prompts, as a naive scorer would feed them), the
  tokens a prompt in full and computed (the distinct prefixes);
- the fraction of the unique-token FLOP floor: 2 x non-embedding parameters x unique tokens (the
  distinct prefixes of all prompts: what a perfect prefix-sharing engine must compute) / peak,
  with the peak measured in the same run (a large bf16/fp16 matmul), and against the card's
  nominal dense peak (``NOMINAL_PEAK``) beside it;
- peak GPU memory, the batch size and token budget chosen, out-of-memory splits;
- the **competent baseline** (``competent_scores``: what a careful researcher writes with plain
  transformers and no prefix sharing: batches of one prompt length (no padding) sized to memory,
  ``logits_to_keep=1``, ψ/χ in float64 torch on the device) on a slice of the same unit, the
  engine's lead over it beside the token ratio it stands on (``vs_competent_token_ratio``: tokens
  the baseline computes a prompt over the engine's), and its ψ/χ against the engine's
  (``competent_matches``: within ``COMPETENT_TOLERANCE``);
- the **other attention path** on the same unit in the same run (``--attention``: the engine's
  ``auto`` is gather until a GPU run measures flex attention faster; gather is one
  ``index_select`` of the prefix cache per row and layer and SDPA with a 4-D mask, flex one
  ``flex_attention`` call per layer over the prefix block read in place, ``scoring/flex.py``): its
  rate, flex's speed over gather's (``flex_vs_gather``) and the largest ψ/χ difference between
  them (``--no-compare-attention`` skips it);
- the **naive scorer** (``naive_scoring.py``'s method: batches of 32, logits of every position,
  ψ/χ in numpy on the host) on a smaller slice, and the engine's lead over it.

Every figure is written the moment it is measured (``--jsonl``, one JSON object a line: a row is
appended again, whole, as each of its parts is measured, its ``stage`` saying which came last, so a
reader keeps the last line of a shape, dtype and unit, ``last_rows``; and the ``--json`` file
rewritten), and a row that fails is recorded with its error and the next one runs, so a crash or
a timeout keeps everything measured before it. Each model is built directly in its
dtype on the device (no float32 copy left in torch's cache), and the engine's own peak memory is
measured apart from the baselines'. ``--profile SHAPE`` (default 6.9b) profiles a whole unit of that
shape (``--profile-entities N``: a slice): the top kernels by GPU time, the GPU's busy fraction,
host time per forward.

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
import real_units
from engine_overhead import yago_unit

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.estimators import scores_batch
from ctxprior.scoring.metrics import scores_np, scores_torch
from ctxprior.scoring.models import LoadedModel

PYTHIA = {  # hidden, layers, heads (intermediate = 4 x hidden, vocab 50304, rotary_pct 0.25)
    "70m": (512, 6, 8),  # for CPU comparisons (flex against gather)
    "410m": (1024, 24, 16),
    "1.4b": (2048, 24, 16),
    "6.9b": (4096, 32, 32),
    "12b": (5120, 36, 40),
    "smoke": (64, 4, 4),
}
NOMINAL_PEAK = {"H100": 989e12, "H200": 989e12}  # dense bf16/fp16 TFLOP/s of the SXM parts


def pythia_config(shape: str):
    """The GPT-NeoX config of a Pythia shape (``PYTHIA``)."""
    from transformers import GPTNeoXConfig

    hidden, layers, heads = PYTHIA[shape]
    return GPTNeoXConfig(
        vocab_size=512 if shape == "smoke" else 50304,
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        rotary_pct=0.25,
        max_position_embeddings=2048,
        use_parallel_residual=True,
        tie_word_embeddings=False,
    )


def pythia(shape: str, dtype: torch.dtype, device: str, quant8: bool = False) -> LoadedModel:
    """A random-init Pythia shape, built directly in ``dtype`` on ``device`` (no float32 copy)."""
    from transformers import GPTNeoXForCausalLM

    cfg = pythia_config(shape)
    torch.manual_seed(0)
    if quant8:
        import tempfile

        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        model = GPTNeoXForCausalLM._from_config(cfg, dtype=torch.float16)
        folder = tempfile.mkdtemp(prefix="pythia-12b-")
        model.save_pretrained(folder)
        del model
        model = AutoModelForCausalLM.from_pretrained(
            folder, quantization_config=BitsAndBytesConfig(load_in_8bit=True), device_map={"": 0}
        )
        dt = "int8"
    else:
        with torch.device(device):
            model = GPTNeoXForCausalLM._from_config(cfg, dtype=dtype)
        dt = str(dtype).replace("torch.", "")
    free_cache(device)
    return LoadedModel(
        model=model.eval(),
        tokenizer=None,
        model_id=f"pythia-{shape}-random",
        revision=None,
        dtype=dt,
        device=device,
        quantization="8bit" if quant8 else None,
    )


def model_of(shape: str, dtype_name: str, device: str) -> LoadedModel:
    """A Pythia shape (random weights), or ``smollm2``: the bundled SmolLM2-135M with its trained
    weights (where the package is installed; the real unit's ids are its tokenizer's)."""
    if shape == "smollm2":
        from ctxprior.scoring.models import load_model

        return load_model("smollm2-135m", device=device, dtype=dtype_name)
    return pythia(shape, getattr(torch, dtype_name), device, quant8=shape == "12b")


def free_cache(device: str) -> None:
    import gc

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def non_embedding_params(model) -> int:
    emb = {
        id(p) for m in (model.get_input_embeddings(), model.get_output_embeddings()) for p in m.parameters()
    }
    return sum(p.numel() for p in model.parameters() if id(p) not in emb)


unique_tokens = real_units.trie_nodes  # distinct prefixes of all sequences (their token trie's nodes)


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


def dense_ids(contexts, queries, vocab: int):
    """Token ids renumbered by first appearance (modulo ``vocab`` if there are more), so a real
    tokenizer's ids fit a small model's vocabulary; ids below ``vocab`` already are kept."""
    if max(max(s) for s in contexts + queries) < vocab:
        return contexts, queries
    new: dict[int, int] = {}
    renum = [tuple(new.setdefault(t, len(new)) % vocab for t in s) for s in contexts + queries]
    return renum[: len(contexts)], renum[len(contexts) :]


def unit(n_ctx: int, n_ent: int, vocab: int, kind: str = "synthetic"):
    """(contexts, queries, every prompt, groups) of one unit: ``synthetic`` (``yago_unit``'s random
    YAGO-shaped ids) or ``real`` (the demo's templates under SmolLM2's BPE, ``real_units.py``)."""
    if kind == "real":
        contexts, queries = dense_ids(*real_units.load(n_ctx, n_ent), vocab)
    else:
        contexts, queries = yago_unit(n_ctx, n_ent, vocab)
    nc, nq = len(contexts), len(queries)
    seqs = [c + q for q in queries for c in contexts] + list(queries)
    groups = [[i * nc + j for i in range(nq)] for j in range(nc)] + [[nq * nc + i for i in range(nq)]]
    return contexts, queries, seqs, groups


COMPILE: list[str | None] = [None]  # --compile: the engine's torch.compile mode (off by default)


def engine_run(lm: LoadedModel, seqs, groups, nc: int, nq: int, batch_size=None, attention="auto"):
    eng = Engine(lm, batch_size=batch_size, attention=attention, compile_mode=COMPILE[0])
    sync(lm.device)
    t = time.perf_counter()
    table, row_of = eng.last_logprobs(seqs, groups)
    (idx,) = eng.to_device(np.asarray(row_of))
    res = scores_batch(table, idx[: nq * nc].view(nq, nc), idx[nq * nc :], 10, 0, str)
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


COMPETENT_CPU_ROWS = 256  # the competent baseline's rows per forward on the CPU
COMPETENT_MAX_ROWS = 16384
# |ψ - ψ_engine| and |χ - χ_engine| the competent baseline may differ by (nats): other kernels and
# batch shapes round differently, by about the precision table's dtype errors (docs/scaling.md)
COMPETENT_TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1, "int8": 1e-1}


def logits_kwargs(model) -> dict:
    """Only the last position's logits: ``logits_to_keep=1`` (transformers >= 4.50), or
    ``num_logits_to_keep=1`` (4.45-4.49), or nothing (every position's, sliced after)."""
    import inspect

    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return {name: 1}
    return {}


def competent_batch(lm: LoadedModel, length: int, reserved: int = 0) -> int:
    """Rows a forward of ``length``-token prompts may hold: on CUDA from the free memory (less
    ``reserved`` bytes) and a per-row cost of ~16 activations of the hidden size a token (no KV
    cache: ``use_cache=False``), the attention scores of the math backend, and the last position's
    logits in float32 and float64; on the CPU ``COMPETENT_CPU_ROWS``."""
    if not lm.device.startswith("cuda"):
        return COMPETENT_CPU_ROWS
    cfg = lm.model.config
    elem = next(lm.model.parameters()).element_size()
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    per_row = length * (16 * cfg.hidden_size * elem + 4 * cfg.num_attention_heads * length) + 3 * 8 * vocab
    free, _ = torch.cuda.mem_get_info(torch.device(lm.device))
    return int(max(1, min(COMPETENT_MAX_ROWS, 0.6 * max(free - reserved, 0) // per_row)))


@torch.inference_mode()
def competent_scores(lm: LoadedModel, contexts, queries, max_rows: int | None = None):
    """The baseline a careful researcher writes with plain transformers: every prompt computed
    whole (no prefix sharing), bucketed by length (a batch holds prompts of one length: no padding,
    no attention mask, SDPA's causal path), each bucket cut into batches as large as memory allows
    (``competent_batch`` for that length; halved on out of memory), ``use_cache=False``, only the
    last position's logits (``logits_kwargs``: ``logits_to_keep=1``), the log-softmax in float64 on
    the device, and ψ/χ per query in torch on the device (``metrics.scores_torch``, float64); one
    copy to the host at the end. The no-context prompts are computed too (a unit's prompts), as the
    engine does. Queries go in chunks whose log-prob rows (float32) fit 4 GiB on CUDA (256 MiB on
    the CPU).

    Returns (ψ ``[queries, contexts]``, χ ``[queries]``) as numpy float64, and counters (``tokens``:
    the tokens it computed, ``padded_tokens``: of them padding, 0 by construction)."""
    dev, model = lm.device, lm.model
    vocab = model.get_output_embeddings().weight.shape[0]
    kw = logits_kwargs(model)
    nc = len(contexts)
    per_query = (nc + 1) * vocab * 4
    budget = (4 << 30) if dev.startswith("cuda") else (256 << 20)
    chunk = max(1, min(len(queries), budget // per_query))
    psi, chi = [], []
    stats = {"forwards": 0, "oom_splits": 0, "rows_max": 0, "logits_kwarg": next(iter(kw), None)}
    stats.update(tokens=0, padded_tokens=0)
    for q0 in range(0, len(queries), chunk):
        qs = queries[q0 : q0 + chunk]
        prompts = [c + q for q in qs for c in contexts] + list(qs)
        rows = torch.empty((len(prompts), vocab), dtype=torch.float32, device=dev)
        lengths = np.fromiter(map(len, prompts), np.int64, len(prompts))
        for length in np.unique(lengths):  # one bucket a length: no padding
            competent_bucket(
                lm, prompts, np.flatnonzero(lengths == length), int(length), rows, kw, max_rows, stats
            )
        for i in range(len(qs)):
            sc = scores_torch(rows[i * nc : (i + 1) * nc])
            psi.append(sc["persuasion"])
            chi.append(sc["susceptibility"])
        del rows
    return torch.stack(psi).cpu().numpy(), torch.stack(chi).cpu().numpy(), stats


def competent_bucket(
    lm: LoadedModel, prompts, idx: np.ndarray, length: int, rows, kw, max_rows, stats
) -> None:
    """The prompts ``idx`` (all ``length`` tokens) in batches of at most the memory-sized cap, their
    last position's log-softmax into ``rows``; the cap halves on out of memory."""
    dev, model = lm.device, lm.model
    cap = max_rows or competent_batch(lm, length)
    s = 0
    while s < len(idx):
        part = idx[s : s + cap]
        try:
            ids = torch.from_numpy(np.array([prompts[i] for i in part], np.int64)).to(dev)
            logits = model(input_ids=ids, use_cache=False, **kw).logits[:, -1]
        except OOM_ERRORS:
            stats["oom_splits"] += 1
            cap = max(1, cap // 2)
            free_cache(dev)
            continue
        rows[torch.from_numpy(part).to(dev)] = torch.log_softmax(logits.to(torch.float64), dim=-1).to(
            torch.float32
        )
        stats["forwards"] += 1
        stats["tokens"] += len(part) * length
        stats["rows_max"] = max(stats["rows_max"], len(part))
        del logits
        s += len(part)


OOM_ERRORS = (getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError),)


def competent_run(lm: LoadedModel, contexts, queries, max_rows: int | None = None):
    """The competent baseline's (prompts, seconds, ψ, χ, counters)."""
    sync(lm.device)
    t = time.perf_counter()
    psi, chi, stats = competent_scores(lm, contexts, queries, max_rows)
    sync(lm.device)
    return len(queries) * (len(contexts) + 1), time.perf_counter() - t, psi, chi, stats


def competent_check(row: dict, res, psi: np.ndarray, chi: np.ndarray, dtype: str) -> bool:
    """The competent baseline's ψ/χ against the engine's for the same queries, into ``row``."""
    e_psi = np.stack([r.persuasion for r in res[: len(chi)]])
    e_chi = np.array([r.susceptibility for r in res[: len(chi)]])
    d_psi, d_chi = float(np.max(np.abs(psi - e_psi))), float(np.max(np.abs(chi - e_chi)))
    tol = COMPETENT_TOLERANCE.get(dtype, 1e-1)
    row["competent_psi_max_abs_diff"] = d_psi
    row["competent_chi_max_abs_diff"] = d_chi
    row["competent_tolerance"] = tol
    row["competent_matches"] = bool(d_psi <= tol and d_chi <= tol)
    return row["competent_matches"]


def other_path(args, lm: LoadedModel, row: dict, res, work, warm) -> dict:
    """The other attention path on the same unit in the same run, warm (gather when the engine ran
    flex, and the reverse): its rate and memory, flex's speed over gather's and the largest ψ/χ
    difference between the two. Gather: one index_select of block rows per layer and SDPA with a
    4-D mask; flex: one flex_attention call per layer, the prefix block read in place (compiled on
    CUDA; its warm run compiles it). Empty where the other path does not run for this family."""
    seqs, groups, nc, nq = work
    device = args.device
    other = "gather" if row["attention"] == "flex" else "flex"
    engine_run(lm, warm[2], warm[3], 24, 4, attention=other)
    free_cache(device)
    reset_peak(device)
    eng, g_res, g_secs = engine_run(lm, seqs, groups, nc, nq, args.batch_size, other)
    if eng.attention != other:  # a family flex is not verified for
        return {}
    fig = {
        f"{other}_peak_mem_gib": peak_gib(device),
        f"{other}_prompts_per_s": round(len(seqs) / g_secs),
        f"{other}_batch_size": eng.batch_size,
    }
    rates = {row["attention"]: row["prompts_per_s"], other: fig[f"{other}_prompts_per_s"]}
    fig["flex_vs_gather"] = round(rates["flex"] / rates["gather"], 3)
    fig["flex_vs_gather_psi_max_abs_diff"] = float(
        max(np.max(np.abs(a.persuasion - b.persuasion)) for a, b in zip(res, g_res))
    )
    fig["flex_vs_gather_chi_max_abs_diff"] = float(
        max(abs(a.susceptibility - b.susceptibility) for a, b in zip(res, g_res))
    )
    del eng, g_res
    free_cache(device)
    return fig


def peak_gib(device: str) -> float | None:
    """The most memory torch held on the device since the last reset, GiB."""
    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.startswith("cuda") else None


def reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def throughput(args, shape: str, dtype_name: str, out: Rows) -> None:
    """One row: the engine on a whole unit, then the other attention path, the competent baseline
    and the naive scorer on a slice of it (all contexts, the first entities), each rate measured in
    this run and each written the moment it is measured (``Rows.update``: a crash keeps them)."""
    device = args.device
    free_cache(device)
    reset_peak(device)
    lm = model_of(shape, dtype_name, device)
    model_gib = peak_gib(device)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    contexts, queries, seqs, groups = unit(args.contexts, args.entities, vocab, args.unit)
    nc, nq = len(contexts), len(queries)
    warm = unit(24, 4, vocab, args.unit)
    engine_run(lm, warm[2], warm[3], 24, 4, attention=args.attention)
    free_cache(device)
    reset_peak(device)
    free_gib = round(torch.cuda.mem_get_info()[0] / 2**30, 1) if device.startswith("cuda") else None
    eng, res, secs = engine_run(lm, seqs, groups, nc, nq, args.batch_size, args.attention)
    row = engine_row(args, lm, eng, seqs, secs, shape)
    row.update(model_mem_gib=model_gib, engine_peak_mem_gib=peak_gib(device), free_mem_gib_at_start=free_gib)
    assert all(np.isfinite(r.susceptibility) for r in res)
    del eng
    free_cache(device)
    out.add(row)
    print_engine(row, lm, args.unit)
    if args.compare_attention:
        out.update(row, "attention", **other_path(args, lm, row, res, (seqs, groups, nc, nq), warm))
        print_attention(row)
    if args.competent_entities:
        out.update(row, "competent", **competent_figures(args, lm, row, res, contexts, queries, warm))
        print_competent(row)
    del res
    if args.naive_entities:
        reset_peak(device)
        naive_n, naive_s = naive_run(lm, contexts, queries[: args.naive_entities])
        rate = round(naive_n / naive_s, 1)
        out.update(
            row,
            "naive",
            naive_peak_mem_gib=peak_gib(device),
            naive_prompts_per_s=rate,
            vs_naive=round(row["prompts_per_s"] / rate, 1),
        )
        print(
            f"      naive scorer (batches of 32, every position's logits, psi/chi in numpy on the host): "
            f"{row['naive_prompts_per_s']} prompts/s -> engine {row['vs_naive']}x",
            flush=True,
        )
    out.update(row, "done")
    del lm
    free_cache(device)


def engine_row(args, lm: LoadedModel, eng, seqs, secs: float, shape: str) -> dict:
    """The engine's figures on a whole unit: rate, tokens, the floor fraction, its counters."""
    n_prompts, uniq = len(seqs), unique_tokens(seqs)
    flop = 2 * non_embedding_params(lm.model) * uniq
    return {
        "shape": shape,
        "dtype": lm.dtype,
        "unit": args.unit,
        "stage": "engine",
        "prompts": n_prompts,
        "seconds": round(secs, 3),
        "prompts_per_s": round(n_prompts / secs),
        "tokens_per_s": round(sum(map(len, seqs)) / secs),
        "tokens_per_prompt": round(sum(map(len, seqs)) / n_prompts, 2),
        "unique_tokens": uniq,
        "computed_tokens_per_prompt": round(uniq / n_prompts, 2),
        "non_embedding_params": non_embedding_params(lm.model),
        "floor_fraction": round(flop / args.peak / secs, 3),
        "floor_fraction_nominal": round(flop / args.nominal / secs, 3) if args.nominal else None,
        "tokens_computed": eng.tokens_computed,
        "engine_tokens_per_prompt": round(eng.tokens_computed / n_prompts, 2),
        "batch_size": eng.batch_size,
        "token_budget": eng.token_budget,
        "oom_splits": eng.oom_splits,
        "forward_calls": eng.forward_calls,
        "head": eng.head_path,
        "attention": eng.attention,
        "compile": eng.compile,
        "flex_rows": eng.flex_rows,
    }


def competent_figures(args, lm: LoadedModel, row: dict, res, contexts, queries, warm) -> dict:
    """The competent baseline on the first ``--competent-entities`` entities (warm, as the engine
    was): its rate, the engine's lead over it and the token ratio that lead stands on (tokens it
    computes a prompt over the engine's), its ψ/χ against the engine's."""
    device = lm.device
    n = min(args.competent_entities, len(queries))
    competent_run(lm, warm[0], warm[1])  # warm, as the engine was
    free_cache(device)
    reset_peak(device)
    c_n, c_s, psi, chi, stats = competent_run(lm, contexts, queries[:n], args.competent_rows)
    fig = {
        "competent_peak_mem_gib": peak_gib(device),
        "competent_prompts": c_n,
        "competent_prompts_per_s": round(c_n / c_s, 1),
        "competent_rows_max": stats["rows_max"],
        "competent_forwards": stats["forwards"],
        "competent_oom_splits": stats["oom_splits"],
        "competent_logits_kwarg": stats["logits_kwarg"],
        "competent_padded_tokens": stats["padded_tokens"],
        "competent_tokens_per_prompt": round(stats["tokens"] / c_n, 2),
    }
    fig["vs_competent"] = round(row["prompts_per_s"] / fig["competent_prompts_per_s"], 2)
    # the work the lead stands on: tokens the baseline computes a prompt over the engine's
    fig["vs_competent_token_ratio"] = round(
        fig["competent_tokens_per_prompt"] / row["engine_tokens_per_prompt"], 2
    )
    competent_check(fig, res, psi, chi, lm.dtype)
    free_cache(device)
    return fig


def print_engine(row: dict, lm: LoadedModel, unit_kind: str) -> None:
    nominal = f" ({row['floor_fraction_nominal']:.1%} of nominal)" if row["floor_fraction_nominal"] else ""
    print(
        f"{row['shape']:>5} {lm.dtype:>8} {unit_kind} unit ({row['computed_tokens_per_prompt']} computed tokens a prompt "
        f"of {row['tokens_per_prompt']}): engine {row['prompts_per_s']:>8} prompts/s {row['tokens_per_s']:>9} tokens/s  "
        f"floor {row['floor_fraction']:6.1%}{nominal}  engine peak {row['engine_peak_mem_gib']} GiB (model "
        f"{row['model_mem_gib']})  batch {row['batch_size']} (budget {row['token_budget']} tokens, "
        f"{row['oom_splits']} OOM splits, {row['forward_calls']} forwards, head {row['head']})",
        flush=True,
    )


def print_attention(row: dict) -> None:
    if "flex_vs_gather" in row:
        print(
            f"      engine ran {row['attention']}; flex attention {row['flex_vs_gather']}x the gather path "
            f"(index_select of the prefix per row and layer, 4-D mask) in this run; max |d psi| "
            f"{row['flex_vs_gather_psi_max_abs_diff']:.1e}, "
            f"|d chi| {row['flex_vs_gather_chi_max_abs_diff']:.1e}",
            flush=True,
        )


def print_competent(row: dict) -> None:
    print(
        f"      competent baseline (batches of one length, no padding, logits_to_keep=1, psi/chi on the device): "
        f"{row['competent_prompts_per_s']} prompts/s (batch {row['competent_rows_max']}) -> engine "
        f"{row['vs_competent']}x at a token ratio of {row['vs_competent_token_ratio']} "
        f"({row['competent_tokens_per_prompt']} tokens a prompt against the engine's "
        f"{row['engine_tokens_per_prompt']}); psi/chi equal to the engine's: "
        f"{'yes' if row['competent_matches'] else 'NO'} (max |d psi| {row['competent_psi_max_abs_diff']:.1e}, "
        f"|d chi| {row['competent_chi_max_abs_diff']:.1e}, tolerance {row['competent_tolerance']:.0e})",
        flush=True,
    )


class Rows:
    """The benchmark's results, written the moment each one exists: a line appended to ``jsonl``
    and the whole ``json`` file rewritten, so a crash or a timeout keeps what was measured."""

    def __init__(self, header: dict, json_path: str | None, jsonl_path: str | None):
        self.header, self.rows = header, []
        self.json_path, self.jsonl_path = json_path, jsonl_path
        self._write({"bench": "header", **header})

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self._write(row)

    def update(self, row: dict, stage: str, **figures) -> None:
        """More figures of a row already added, written at once: the ``--json`` file rewritten, and
        the whole row appended again to ``--jsonl`` with its ``stage``; a reader keeps the last line
        of a (shape, dtype, unit) (``last_rows``)."""
        row.update(figures, stage=stage)
        self._write(row)

    def _write(self, row: dict) -> None:
        if self.jsonl_path:
            with open(self.jsonl_path, "a") as f:
                f.write(json.dumps(row) + "\n")
        if self.json_path:
            Path(self.json_path).write_text(json.dumps({**self.header, "rows": self.rows}, indent=1))

    def attempt(self, what: dict, fn, *args) -> None:
        """Run one measurement; a failure becomes a row with its error (the next one still runs)."""
        try:
            fn(*args)
        except Exception as e:  # one failed row must not lose the others
            msg = f"{type(e).__name__}: {e}".splitlines()[0][:500]
            print(f"  {what}: FAILED {msg}", flush=True)
            self.add({**what, "error": msg})
            free_cache(args[0].device if hasattr(args[0], "device") else "cpu")


def last_rows(rows: list[dict]) -> list[dict]:
    """The throughput rows of a ``--jsonl`` file, the last line of each (shape, dtype, unit) (a row
    is written again as each of its figures is measured: ``Rows.update``), in first-seen order."""
    last: dict = {}
    for r in rows:
        if "prompts_per_s" in r and "shape" in r:
            last[(r["shape"], r.get("dtype"), r.get("unit"))] = r
    return list(last.values())


def precision(args, out: Rows) -> None:
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
    contexts, queries, seqs, groups = unit(*((24, 4) if args.smoke else (120, 8)), 2048)
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
        out.add(row)
        print(
            f"  {args.device} {name:>8} vs cpu float32: psi max {row['psi_max_abs']:.2e} median "
            f"{row['psi_median_abs']:.2e}; chi max {row['chi_max_abs']:.2e} median rel {row['chi_median_rel']:.2%}"
        )


def profile(args, shape: str, out: Rows) -> None:
    """A unit of ``shape`` (all contexts; ``--profile-entities`` entities, default all) under
    torch.profiler: the top kernels by GPU time, the GPU's busy fraction, host time per forward."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    device, dtype = args.device, getattr(torch, args.dtypes.split(",")[0])
    cuda = device.startswith("cuda")
    lm = pythia(shape, dtype, device)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    contexts, queries, seqs, groups = unit(
        args.contexts, args.profile_entities or args.entities, vocab, args.unit
    )
    engine_run(lm, seqs, groups, len(contexts), len(queries), args.batch_size, args.attention)  # warm
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with torch_profile(activities=acts) as prof:
        eng, _, wall = engine_run(
            lm, seqs, groups, len(contexts), len(queries), args.batch_size, args.attention
        )
    from torch.autograd import DeviceType

    events = prof.key_averages()
    on_gpu = [e for e in events if e.device_type == DeviceType.CUDA]  # kernels, not the ops launching them
    dev_us = sum(e.self_device_time_total for e in on_gpu)
    host_us = sum(
        e.self_cpu_time_total
        for e in events
        if e.device_type == DeviceType.CPU and "Synchronize" not in e.key
    )
    top = sorted(
        on_gpu if cuda else events,
        key=lambda e: -getattr(e, "self_device_time_total" if cuda else "self_cpu_time_total", 0),
    )
    total = dev_us if cuda else host_us
    kernels = [
        {
            "name": e.key[:160],
            "ms": round(getattr(e, "self_device_time_total" if cuda else "self_cpu_time_total") / 1e3, 2),
            "share": round(
                getattr(e, "self_device_time_total" if cuda else "self_cpu_time_total") / max(total, 1), 3
            ),
            "calls": e.count,
        }
        for e in top[:12]
    ]
    row = {
        "profile": shape,
        "dtype": lm.dtype,
        "attention": eng.attention,
        "unit": args.unit,
        "prompts": len(seqs),
        "wall_s": round(wall, 3),
        "forwards": eng.forward_calls,
        "batch_size": eng.batch_size,
        "gpu_busy_fraction": round(dev_us / 1e6 / wall, 3) if cuda else None,
        "host_ms_per_forward": round(host_us / 1e3 / max(eng.forward_calls, 1), 2),
        "top_kernels": kernels,
    }
    out.add(row)
    busy = f"GPU busy {row['gpu_busy_fraction']:.0%}, " if cuda else ""
    print(
        f"profile {shape} {lm.dtype} ({len(seqs)} prompts, {eng.forward_calls} forwards, {wall:.2f} s): "
        f"{busy}host {row['host_ms_per_forward']} ms per forward; top kernels:",
        flush=True,
    )
    for k in kernels[:8]:
        print(f"  {k['share']:6.1%} {k['ms']:9.1f} ms {k['calls']:6}x  {k['name'][:100]}", flush=True)
    del lm, eng
    free_cache(device)


def environment(device: str) -> dict:
    """The machine the figures come from."""
    import platform
    import subprocess

    import transformers

    env = {
        "device": torch.cuda.get_device_name()
        if device.startswith("cuda")
        else f"CPU ({platform.processor() or platform.machine()})",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if device.startswith("cuda") else None,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "driver": None,
    }
    if device.startswith("cuda"):
        try:
            q = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
            env["driver"] = (
                subprocess.run(q, capture_output=True, text=True, timeout=20).stdout.strip() or None
            )
        except (OSError, subprocess.SubprocessError):
            pass
    return env


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--shapes", default="6.9b,1.4b,410m", help="Pythia shapes, in order (default: largest first)"
    )
    ap.add_argument("--dtypes", default="float16,bfloat16")
    ap.add_argument("--quant8", action="store_true", help="also the 12b shape in 8-bit (bitsandbytes)")
    ap.add_argument("--contexts", type=int, default=600)
    ap.add_argument("--entities", type=int, default=100)
    ap.add_argument(
        "--naive-entities",
        type=int,
        default=2,
        help="entities the naive scorer runs (its prompts/s); 0: none",
    )
    ap.add_argument(
        "--competent-entities",
        type=int,
        default=10,
        help="entities the competent baseline runs (its prompts/s, and its psi/chi against the engine's); 0: none",
    )
    ap.add_argument(
        "--competent-rows",
        type=int,
        default=None,
        help="the competent baseline's rows a forward (default: sized to memory)",
    )
    ap.add_argument(
        "--unit",
        default="real",
        choices=["real", "synthetic"],
        help="real: the demo's templates under SmolLM2's BPE (real_units.py; at most 600 x 100); synthetic: random YAGO-shaped ids",
    )
    ap.add_argument("--batch-size", type=int, default=None, help="default: the engine's automatic choice")
    ap.add_argument(
        "--attention",
        default="auto",
        choices=["auto", "flex", "gather"],
        help="the engine's attention path (Engine(attention=...); auto: gather until flex is measured faster)",
    )
    ap.add_argument(
        "--compile",
        default=None,
        help="torch.compile the engine's model body: default, or a mode (reduce-overhead: CUDA graphs); off by default",
    )
    ap.add_argument(
        "--no-compare-attention",
        dest="compare_attention",
        action="store_false",
        help="skip the other attention path's run on the same unit (flex against gather, measured by default)",
    )
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument(
        "--peak", type=float, default=None, help="FLOP/s of the floor (default: a matmul measured now)"
    )
    ap.add_argument(
        "--profile", default="auto", help="shape to profile (auto: 6.9b when measured, else the first; none)"
    )
    ap.add_argument(
        "--profile-entities", type=int, default=0, help="entities of the profiled unit (0: all, a whole unit)"
    )
    ap.add_argument("--no-precision", action="store_true", help="skip the precision comparison")
    ap.add_argument("--smoke", action="store_true", help="a tiny shape on the CPU, a few prompts")
    ap.add_argument("--json", default=None, help="write the rows to this file (rewritten after each row)")
    ap.add_argument("--jsonl", default=None, help="append each row to this file the moment it is measured")
    args = ap.parse_args(argv)
    if args.smoke:
        args.shapes, args.dtypes, args.contexts, args.entities = "smoke", "float32", 12, 3
        args.naive_entities, args.profile_entities, args.device = min(args.naive_entities, 1), 2, "cpu"
        args.competent_entities = min(args.competent_entities, 3)
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    COMPILE[0] = args.compile
    shapes = args.shapes.split(",") + (["12b"] if args.quant8 else [])
    dtypes = args.dtypes.split(",")
    mm_dtype = torch.bfloat16 if "bfloat16" in dtypes else torch.float16
    args.peak = args.peak or measured_peak(mm_dtype, args.device)
    env = environment(args.device)
    nominal = next((v for k, v in NOMINAL_PEAK.items() if k in env["device"]), None)
    args.nominal = nominal
    print(
        f"{env['device']}; torch {env['torch']} (CUDA {env['cuda']}, cuDNN {env['cudnn']}), transformers "
        f"{env['transformers']}, driver {env['driver']}; peak (matmul now) {args.peak / 1e12:.0f} TFLOP/s"
        + (f", nominal {nominal / 1e12:.0f}" if nominal else "")
        + f"; unit: {args.contexts} contexts x {args.entities} entities, {args.unit}",
        flush=True,
    )
    if args.unit == "real":
        ri = real_units.info()
        print(
            f"real unit: {real_units.short(ri['relation'])} {ri['query_form']!r} under {ri['tokenizer']}; the full "
            f"600 x 100 unit computes {ri['figures']['computed_tokens_per_prompt']} tokens a prompt of "
            f"{ri['figures']['tokens_per_prompt']} (the demo's 36 relation x form units: "
            f"{ri['survey_mean']['computed_tokens_per_prompt']} of {ri['survey_mean']['tokens_per_prompt']})",
            flush=True,
        )
    header = {
        **env,
        "measured_peak_flops": args.peak,
        "nominal_peak_flops": nominal,
        "unit": [args.contexts, args.entities],
        "unit_kind": args.unit,
        "real_unit": real_units.info() if args.unit == "real" else None,
    }
    out = Rows(header, args.json, args.jsonl)
    for shape in shapes:
        for dt in ["float16"] if shape == "12b" else dtypes:
            out.attempt({"shape": shape, "dtype": dt}, throughput, args, shape, dt, out)
    target = ("6.9b" if "6.9b" in shapes else shapes[0]) if args.profile == "auto" else args.profile
    if target != "none":
        out.attempt({"profile": target}, profile, args, target, out)
    if not args.no_precision:
        out.attempt({"precision": "all"}, precision, args, out)


if __name__ == "__main__":
    main()
