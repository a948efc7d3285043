"""Screening candidate names: ``Screen`` accepts a name once and rejects (with a counted reason)
a name that is empty, not a name, or collides with a real entity, answer, label or fake."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from .parse import name_key, name_problem, normalize_name

REAL_REASONS = ("real_entity", "answer", "label")
_PARTS = re.compile(r"\s*[:,;/]\s+|\s+[-–—/]\s+")


class Screen:
    """Accepts a name once; rejects it (with a reason) when it collides with a known name."""

    def __init__(self, known: dict[str, str]):
        self.known = dict(known)
        self.rejected: dict[str, list[str]] = defaultdict(list)

    def check(self, raw: str) -> str | None:
        """The normalized name if it is new, else None (and the rejection is counted)."""
        name = normalize_name(raw)
        reason = name_problem(name) or self.known.get(name_key(name)) or self._contains_real(name)
        if reason:
            self.rejected[reason].append(raw)
            return None
        self.known[name_key(name)] = "duplicate"
        return name

    def _contains_real(self, name: str) -> str | None:
        """'contains_real' when a part between separators (': ', ', ', ' - ', '/') is a real name
        or answer, e.g. 'France: Paris' or 'England, France'."""
        parts = _PARTS.split(name)
        if len(parts) > 1 and any(self.known.get(name_key(p)) in REAL_REASONS for p in parts):
            return "contains_real"
        return None

    def summary(self, examples: int = 5) -> dict[str, dict]:
        """{reason: {count, examples}} sorted by reason."""
        return {r: {"count": len(v), "examples": v[:examples]} for r, v in sorted(self.rejected.items())}

    @property
    def n_rejected(self) -> int:
        return sum(len(v) for v in self.rejected.values())


@dataclass
class Accepted:
    name: str
    raw: str
    class_name: str | None
    call_index: int | None = None


@dataclass
class FakesResult:
    generation_id: int | None
    dataset: str
    relation: str
    n_requested: int
    accepted: list[tuple[int, str, str]] = field(default_factory=list)  # (position, fake, real entity)
    rejected: dict[str, dict] = field(default_factory=dict)
    calls: int = 0
    status: str = "complete"
    note: str | None = None


def rejected_text(rejected: dict[str, dict]) -> str:
    """'duplicate 3, real_entity 2' (or 'none')."""
    return ", ".join(f"{r} {v['count']}" for r, v in rejected.items()) or "none"
