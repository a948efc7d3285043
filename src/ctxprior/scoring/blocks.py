"""The prefixes' key/value block and the gather path's cache over it: ``Block`` (per layer, every
prefix once, left-padded so that each ends at the same column; for flex attention laid out flat,
``flex.flat_block``), and a batch's ``DynamicCache`` that gathers its rows' prefixes from the block
one layer at a time (``block_cache``, ``GatheredLayer``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers.cache_utils import DynamicLayer


def cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(layer.keys, layer.values) for layer in cache.layers]


@dataclass
class Block:
    """The prefixes' key/value cache: per layer (K, V) ``[P, heads, width + room, head_dim]``."""

    layers: list[tuple[torch.Tensor, torch.Tensor]]
    width: int  # the longest prefix; slots after it are room for a batch's new tokens
    lengths: torch.Tensor | None = None  # [P] each prefix's length (device)
    # flex attention: per layer (K, V) [1, heads, P * width + room, head_dim], ``layers`` their
    # [P, heads, width, head_dim] views (``flex.flat_block``); None: a gather block
    flat: list[tuple[torch.Tensor, torch.Tensor]] | None = None
    prefixes: int = 0


def block_cache(layers, pidx: torch.Tensor, filled: int, keep: bool = False):
    """A batch's cache over the block: each layer gathers its rows' prefixes (one index_select
    of whole contiguous rows, room included) when the forward pass reaches it, and the pass writes
    the rows' own keys into the room in place (no concatenation). Unless ``keep`` (generation goes
    on), a layer lets go of its gathered copy once its attention has it: one layer's copy at a
    time instead of every layer's."""
    from transformers import DynamicCache

    cache = DynamicCache()
    cache.layers = [GatheredLayer(k, v, pidx, filled, keep) for k, v in layers]
    return cache


class GatheredLayer(DynamicLayer):
    """One layer of a batch's cache: the block's rows ``pidx`` ``[B, heads, filled + room,
    head_dim]``, gathered at the first ``update``; ``update`` writes the new keys after the
    ``filled`` ones and returns views of the filled part (past the room: concatenation)."""

    def __init__(
        self, block_k: torch.Tensor, block_v: torch.Tensor, pidx: torch.Tensor, filled: int, keep: bool
    ):
        super().__init__()
        self._source: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = (block_k, block_v, pidx)
        self.keys = self.values = None
        self.filled, self.keep = filled, keep
        self.dtype, self.device = block_k.dtype, block_k.device
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if self._source is not None:
            block_k, block_v, pidx = self._source
            self._source = None
            keys, values = block_k.index_select(0, pidx), block_v.index_select(0, pidx)
        else:  # a later update (generation): the layer kept its keys (keep=True)
            assert self.keys is not None and self.values is not None, (
                "GatheredLayer updated again without keep"
            )
            keys, values = self.keys, self.values
        end = self.filled + key_states.shape[-2]
        if end > keys.shape[-2]:
            keys = torch.cat([keys[..., : self.filled, :], key_states], dim=-2)
            values = torch.cat([values[..., : self.filled, :], value_states], dim=-2)
        else:
            keys[..., self.filled : end, :] = key_states
            values[..., self.filled : end, :] = value_states
        self.filled = end
        if self.keep:
            self.keys, self.values = keys, values
        return keys[..., :end, :], values[..., :end, :]

    def get_seq_length(self, *args) -> int:
        return self.filled
