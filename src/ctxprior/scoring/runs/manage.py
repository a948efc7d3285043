"""Runs after the fact: the options a persuasion run was started with. Listing and cancelling
runs of every kind is the run life cycle's (``storage.runs``)."""

from __future__ import annotations

from ...storage.runs import stored_config
from ...storage.store import Store

__all__ = ["stored_device_dtype"]


def stored_device_dtype(store: Store, run_id: int) -> tuple[str, str]:
    """(device, dtype) a run was started with, so a resume loads the model the same way."""
    cfg = stored_config(store, run_id)
    return cfg.get("device", "auto"), (cfg.get("identity") or {}).get("dtype", "auto")
