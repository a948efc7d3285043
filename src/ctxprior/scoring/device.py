"""Where a run computes, said out loud: the device and dtype line ``score`` prints, the one-line
warning when an NVIDIA GPU is visible but this torch cannot use it, and a weightless description
of a model for a driver whose workers hold the weights (Ray)."""

from __future__ import annotations

import glob
import os
import shutil

from .architectures import text_config
from .models import LoadedModel, _locate, resolve_device, resolve_dtype


def gpu_visible() -> bool:
    """An NVIDIA GPU is on this machine (driver files or ``nvidia-smi``), whatever torch can do."""
    if os.environ.get("CTXPRIOR_ASSUME_GPU") == "1":  # tests
        return True
    return bool(
        glob.glob("/proc/driver/nvidia/gpus/*")
        or glob.glob("/dev/nvidia[0-9]*")
        or shutil.which("nvidia-smi")
    )


def cpu_fallback_warning(device: str) -> str | None:
    """One line when a run lands on the CPU although a GPU is visible (a CPU build of torch, or a
    driver torch cannot use); None otherwise."""
    import torch

    if not device.startswith("cpu") or not gpu_visible():
        return None
    if torch.version.cuda is None:
        why = f"this torch ({torch.__version__}) is a CPU build; `bash scripts/setup.sh` installs a CUDA build on a GPU machine"
    else:
        why = (
            f"torch {torch.__version__} (CUDA {torch.version.cuda}) cannot use it; check the NVIDIA driver "
            "and CUDA_VISIBLE_DEVICES"
        )
    return f"warning: an NVIDIA GPU is visible but scoring runs on the CPU: {why}"


def device_line(lm: LoadedModel) -> str:
    """``device cuda:0 (NVIDIA H100 80GB HBM3), dtype float16`` or ``device cpu, dtype float32``."""
    name = ""
    if lm.device.startswith("cuda"):
        import torch

        name = f" ({torch.cuda.get_device_name(torch.device(lm.device))})"
    quant = f", {lm.quantization} weights" if lm.quantization else ""
    return f"device {lm.device}{name}, dtype {lm.dtype}{quant}"


def describe_model(
    name: str,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
    worker_gpus: bool = False,
) -> LoadedModel:
    """The model's identity without its weights (a driver that only records the run): revision,
    the dtype ``auto`` resolves to where the workers run, and the vocabulary size."""
    from transformers import AutoConfig

    load_from, revision, source = _locate(name)
    where = "cuda" if worker_gpus else (device if device != "auto" else resolve_device("auto"))
    dt = str(resolve_dtype(dtype, where)).replace("torch.", "")
    cfg = text_config(AutoConfig.from_pretrained(load_from))
    return LoadedModel(
        model=None,
        tokenizer=None,
        model_id=name,
        revision=revision,
        dtype=dt,
        device=where,
        quantization=quantization,
        source_path=source,
        extra={"vocab": int(cfg.vocab_size)},
    )


def vocab_size(lm: LoadedModel) -> int:
    if lm.model is None:
        return int(lm.extra["vocab"])
    return int(lm.model.get_output_embeddings().weight.shape[0])
