"""Does this machine's attention return NaN on a fully masked query row, and are the engine's
16-bit scores finite and close to CPU float32?  (issue 26)

    python benchmarks/attention_probe.py [--device cuda] [--jsonl FILE]

1. SDPA on a left-padded batch (its first query rows see no key), per backend the device offers
   (the default choice, cuDNN, memory-efficient, flash, math) and dtype: ``finite`` or ``NaN``.
   The engine never builds such a row (see tests/test_masked_rows.py); this says whether the
   device would punish one.
2. The engine itself (small GPT-NeoX, head_dim 64 and 128) on the device in float16 and bfloat16
   against CPU float32: finite, max |Δχ|, and the output-head path it took.
3. The output-head self-check in 16-bit for hidden sizes 2048 and 4096 (``engine``: the fast path).

Each result is printed and appended to ``--jsonl`` the moment it exists. Exit 3 when the engine's
scores on the device are not finite. Needs torch, transformers and numpy only.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu

BACKENDS = ("CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "FLASH_ATTENTION", "MATH")


def emit(jsonl: str | None, row: dict) -> None:
    print(json.dumps(row), flush=True)
    if jsonl:
        with open(jsonl, "a") as f:
            f.write(json.dumps(row) + "\n")


def sdpa_cases(device: str, jsonl: str | None) -> None:
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dtypes = (torch.float16, torch.bfloat16) if device.startswith("cuda") else (torch.float32, torch.bfloat16)
    torch.manual_seed(0)
    for dt in dtypes:
        for hd in (64, 128):
            q, k, v = (torch.randn(4, 8, 16, hd, device=device, dtype=dt) for _ in range(3))
            mask = torch.ones(16, 16, dtype=torch.bool, device=device).tril().expand(4, 1, 16, 16).clone()
            mask[0, :, :, :5] = False  # row 0 left-padded by 5: its query rows 0..4 see no key
            row = {"probe": "sdpa", "dtype": str(dt)[6:], "head_dim": hd}
            for name in ("default", *BACKENDS):
                try:
                    if name == "default":
                        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                    else:
                        with sdpa_kernel([getattr(SDPBackend, name)]):
                            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                    row[name.lower()] = "NaN" if bool(torch.isnan(o[0, :, :5]).any()) else "finite"
                except Exception as e:  # the backend does not take this case here
                    row[name.lower()] = f"n/a ({type(e).__name__})"
            emit(jsonl, row)


def engine_cases(device: str, jsonl: str | None, smoke: bool = False) -> bool:
    """True when every device run gave finite scores."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    from ctxprior.scoring.models import LoadedModel

    ok = True
    contexts, queries, seqs, groups = gpu.unit(48, 4, 2048)
    dtypes = (torch.float16, torch.bfloat16)
    shapes = ((256, 4),) if smoke else ((512, 8), (1024, 8))  # head_dim 64 (Pythia 410m), 128 (1.4b, 6.9b)
    for hidden, heads in shapes:
        cfg = GPTNeoXConfig(
            vocab_size=2048,
            hidden_size=hidden,
            intermediate_size=4 * hidden,
            num_hidden_layers=2,
            num_attention_heads=heads,
            rotary_pct=0.25,
            max_position_embeddings=512,
            tie_word_embeddings=False,
        )
        torch.manual_seed(1)
        base = GPTNeoXForCausalLM(cfg).eval()
        ref = None
        for d, dt in (("cpu", torch.float32), *((device, t) for t in dtypes)):
            m = copy.deepcopy(base).to(device=d, dtype=dt)
            lm = LoadedModel(
                model=m, tokenizer=None, model_id="probe", revision=None, dtype=str(dt), device=d
            )
            row = {"probe": "engine", "device": d, "dtype": str(dt)[6:], "head_dim": hidden // heads}
            try:
                eng, res, _ = gpu.engine_run(lm, seqs, groups, len(contexts), len(queries))
                chi = np.array([r.susceptibility for r in res])
                ref = chi if ref is None else ref
                row.update(
                    finite=bool(np.isfinite(chi).all()), chi_max_abs_vs_cpu=float(np.abs(chi - ref).max())
                )
                row["head"] = eng.head_path
            except Exception as e:
                row.update(finite=False, error=f"{type(e).__name__}: {e}".splitlines()[0][:300])
            ok = ok and row["finite"]
            emit(jsonl, row)
            del m, lm
    return ok


def head_cases(device: str, jsonl: str | None, smoke: bool = False) -> None:
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    from ctxprior.scoring.engine import Head

    for hidden in (256,) if smoke else (2048, 4096) if device.startswith("cuda") else (2048,):
        cfg = GPTNeoXConfig(
            vocab_size=4096 if smoke else 50304,
            hidden_size=hidden,
            intermediate_size=4 * hidden,
            num_hidden_layers=1,
            num_attention_heads=hidden // 128,
            rotary_pct=0.25,
            tie_word_embeddings=False,
        )
        for dt in (torch.float16, torch.bfloat16):
            torch.manual_seed(0)
            with torch.device(device):
                m = GPTNeoXForCausalLM._from_config(cfg, dtype=dt).eval()
            exact = Head(m).check(m, torch.device(device))
            emit(
                jsonl,
                {
                    "probe": "head",
                    "hidden": hidden,
                    "dtype": str(dt)[6:],
                    "head": "engine" if exact else "model",
                },
            )
            del m
            gpu.free_cache(device)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--jsonl", default=None, help="append each result to this file as it comes")
    ap.add_argument("--smoke", action="store_true", help="fewer cases (the test suite's CPU run)")
    args = ap.parse_args(argv)
    sdpa_cases(args.device, args.jsonl)
    finite = engine_cases(args.device, args.jsonl, smoke=args.smoke)
    head_cases(args.device, args.jsonl, smoke=args.smoke)
    return 0 if finite else 3


if __name__ == "__main__":
    sys.exit(main())
