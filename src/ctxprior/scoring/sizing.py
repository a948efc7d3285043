"""How much device memory the engine's batches and prefix blocks may take: the bytes a key/value
cache token costs, a batch row's peak (``row_bytes``, by attention path; checked against what a
batch allocates on CPU in ``tests/test_vocab_pass.py``), the batch size on CUDA from free memory
(``auto_batch_size``), and the budgets of a teacher-forced batch's log-probs and of the prefix
blocks."""

from __future__ import annotations

import torch

from .architectures import dims
from .models import CPU_BATCH_SIZE, LoadedModel


def kv_bytes_per_token(lm: LoadedModel) -> int:
    """Bytes of key/value cache one token occupies across all layers."""
    d = dims(lm.model.config)
    elem = torch.finfo(lm.model.dtype).bits // 8 if lm.model.dtype.is_floating_point else 2
    return int(2 * d.layers * d.kv_heads * d.head_dim * elem)


def row_bytes(
    lm: LoadedModel,
    context_tokens: int = 64,
    new_tokens: int = 8,
    generate: bool = False,
    attention: str = "gather",
) -> int:
    """Device bytes one batch row costs, by the path that runs it:

    - its prefix cache: gather copies the row's prefix (scoring holds one layer's copy at a time;
      generation keeps every layer's, grown by its new tokens); flex reads it in place and costs
      the row's own keys in the block's room, every layer's (``flex.flat_block``);
    - the activations of its new tokens (flex adds its flat query, its output and the output's
      ``[B, Ls, H, d]`` copy);
    - or, when larger (allocated after the layers' activations are freed), the last position's
      vocabulary. Scoring: the logits in the model's dtype, their float32 copy (CUDA's
      log-softmax reads float16 in the kernel, so none there) and the float32 log-softmax written
      into the table. Generation: two steps' logits in the model's dtype (a step's are computed
      while the previous step's, which chose its token, are held).

    The prefix block is budgeted apart (``block_budget``), and so are the table (one float32 row
    per prompt) and ``metrics.vocab_pass`` after the batches (its temporaries are bounded by
    ``metrics.VOCAB_ELEMENTS``, not per row). Flex attention on CPU runs eagerly and materialises
    its scores (heads x the batch's queries x its keys: quadratic in the batch, not a per-row
    cost; CPU batches are ``CPU_BATCH_SIZE``, not sized from this); on CUDA its compiled kernel
    holds none. ``tests/test_vocab_pass.py`` checks it against the peak of the tensors a batch
    allocates on CPU, for scoring by both paths and for generation."""
    d = dims(lm.model.config)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    elem = lm.model.dtype.itemsize
    act = new_tokens * (6 * d.hidden + 2 * d.intermediate) * 4
    if attention == "flex" and not generate:
        kv = new_tokens * kv_bytes_per_token(lm)  # the room: every layer's
        act += 3 * new_tokens * d.heads * d.head_dim * elem
    else:
        kv = (context_tokens + new_tokens) * kv_bytes_per_token(lm)  # every layer's
        if not generate:
            kv //= d.layers
    if generate:
        return int(kv + max(act, 2 * vocab * elem))
    fused = lm.device.startswith("cuda") and lm.model.dtype == torch.float16
    # the vocabulary's bytes are allocated after the layers' activations are freed: the larger counts
    return int(kv + max(act, vocab * (elem + (0 if elem == 4 or fused else 4) + 4)))


def auto_batch_size(lm: LoadedModel, generate: bool = False, attention: str = "gather") -> int:
    """Rows per forward pass: ``CPU_BATCH_SIZE`` on CPU; on CUDA, from the free memory and the model's real
    per-row cost (``row_bytes`` of the engine's attention path), keeping a third of the free memory for the
    prefix blocks, at most 4096. On one H100, 6.9b scoring went from 4645 to 4972 prompts/s when this stopped
    counting every layer's gathered cache for scoring (batch 871 -> 1742, same peak memory)."""
    if lm.device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(lm.device))
        per_row = row_bytes(lm, generate=generate, attention=attention)
        return int(max(8, min(4096, (free * 0.5) // per_row)))
    return CPU_BATCH_SIZE


def logits_elements(lm: LoadedModel) -> int:
    """Float64 log-prob elements a teacher-forced batch may hold (2 GiB on CUDA, 256 MiB on CPU)."""
    return (1 << 28) if lm.device.startswith("cuda") else (1 << 25)


def block_budget(lm: LoadedModel) -> int:
    """Bytes the prefix key/value blocks of one call may take (a third of the free CUDA memory;
    1 GiB on CPU)."""
    if lm.device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(lm.device))
        return int(free // 3)
    return 1 << 30
