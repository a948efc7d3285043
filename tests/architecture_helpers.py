"""The layer rules as docs/architecture.md writes them (its table "Packages and what each may
import"), read by tests/test_layers.py and tests/test_one_door.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
TABLE_TITLE = "## Packages and what each may import"


def layer_table(text: str | None = None) -> tuple[dict[str, int], dict[str, set[str] | None]]:
    """(layer of each top-level module or package, what each may import) read from the page's table.

    A row is ``| layer | `pkg/`, `mod.py` | holds | may import |``. The last cell reads:
    "everything below" or "layers 0–2" (and maybe more names): the layer order alone (None);
    "nothing of ctxprior" or "layer 0": only layer 0 (an empty set); otherwise the backticked
    packages it names (layer 0 is always allowed from layer 1 up).
    """
    text = PAGE.read_text() if text is None else text
    section = text[text.index(TABLE_TITLE) + len(TABLE_TITLE) :]
    section = section.split("\n## ", 1)[0]
    layer: dict[str, int] = {}
    may: dict[str, set[str] | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].isdigit():
            continue
        names = [n.removesuffix(".py").rstrip("/") for n in re.findall(r"`([^`]+)`", cells[1])]
        allowed: set[str] | None = {
            n.removesuffix(".py").rstrip("/") for n in re.findall(r"`([^`]+)`", cells[3])
        }
        words = re.sub(r"`[^`]*`", "", cells[3]).lower()
        if "everything below" in words or re.search(r"layers 0[–-]", words):
            allowed = None
        elif "nothing" in words or "layer 0" in words:
            allowed = set()
        for n in names:
            layer[n] = int(cells[0])
            may[n] = allowed
    return layer, may


LAYER, MAY_IMPORT = layer_table()
