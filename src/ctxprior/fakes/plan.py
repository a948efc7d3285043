"""Where new fakes go, what they must not be called, and which class each one is asked for.

Placement rule (the paper's "a fake entity borrows the answer of the real entity at the same
index", and ``ctxprior sample --fakes paired``, which pairs a real fact with the fake fact at the
same position; the default ``--fakes random`` draws among all of a relation's fakes):
- a relation has one fake per position at most (``fact`` is unique on relation, kind, position);
- free positions are those of real facts whose real entity has no fake yet at any of its positions
  (a real entity may repeat, e.g. Paris at five positions; ``sample`` picks each entity once), one
  position per real entity;
- they are filled in the order ``sample`` ranks real entities: by YAGO degree (``uri_degree``, else
  ``predicate_degree``) descending, then position; without degrees, by position. So N new fakes go
  to the N best-ranked real entities without one, and (with degrees) a sample of 2N entities with
  ``--fakes paired`` picks exactly them.
- more fakes than free positions is an error (``generate``) or a ``no_free_position`` rejection
  (``add``): a fake without a real partner would never be sampled.

Classes: a free position's fake is asked for its real entity's ``entity_class`` when known, else
for the relation's entity classes (``relation_class``, role entity) in proportion to their
fractions (largest-remainder rounding, so the counts add up exactly; the classes in order of
fraction, then name, each filling the next best-ranked positions), else for no class.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..errors import UserError
from ..ingest.yago_qec import resolve_relations
from ..sqlfiles import read_sql
from .parse import name_key

SQL = "ctxprior.fakes"
REASON_ORDER = ("real_entity", "answer", "label", "existing_fake", "fake_elsewhere")


@dataclass
class Slot:
    """A free position: the real fact whose answer a new fake borrows."""

    position: int
    real_entity: str
    answer_id: int | None
    class_name: str | None


@dataclass
class RelationPlan:
    dataset_id: int
    dataset: str
    relation_id: int
    relation: str  # short name
    slots: list[Slot]  # free positions, best-ranked first
    classes: list[tuple[str, float]]  # relation_class (entity), by fraction desc
    query_form: str | None
    real_by_class: dict[str | None, list[str]] = field(default_factory=dict)  # ranked, distinct
    known: dict[str, str] = field(default_factory=dict)  # name_key -> rejection reason

    def examples(self, class_name: str | None, k: int) -> list[str]:
        """Up to ``k`` real names of this class (or of the relation) to show in the prompt."""
        names = self.real_by_class.get(class_name) or self.real_by_class.get(None, [])
        return names[:k]


def dataset_id(store, dataset: str) -> int:
    """The id of dataset ``dataset``; unknown -> UserError naming the ones there are."""
    ds = store.query("SELECT dataset_id FROM dataset WHERE name = ?", [dataset])
    if not ds:
        names = [r[0] for r in store.query("SELECT name FROM dataset ORDER BY dataset_id")]
        raise UserError(
            f"unknown dataset '{dataset}' in {store.path}; it has: "
            f"{', '.join(names) or 'none (run ingest first)'}"
        )
    return ds[0][0]


def find_relation(store, dataset: str, relation: str) -> tuple[int, int, str]:
    """(dataset_id, relation_id, short name); unknown dataset or relation -> UserError."""
    ds_id = dataset_id(store, dataset)
    rows = store.query(
        "SELECT relation_id, name, short_name FROM relation WHERE dataset_id = ? ORDER BY position", [ds_id]
    )
    short_to_name = {r[2]: r[1] for r in rows}
    full = resolve_relations(
        [r[1] for r in rows], [short_to_name.get(relation, relation)], f"dataset '{dataset}'"
    )[0]
    rid, _, short = next(r for r in rows if r[1] == full)
    return ds_id, rid, short


def _rank(real: list[dict]) -> list[dict]:
    """Real facts in the order ``ctxprior sample`` ranks them when degrees exist, else by position."""
    for col in ("uri_degree", "predicate_degree"):
        if any(f[col] is not None for f in real):
            return sorted(real, key=lambda f: (f[col] is None, -(f[col] or 0), f["position"]))
    return sorted(real, key=lambda f: f["position"])


def _free_slots(facts: list[dict]) -> tuple[list[Slot], list[dict]]:
    """Free positions (best-ranked first) and the ranked distinct real facts."""
    real = [f for f in facts if f["entity_kind"] == "real"]
    fake_pos = {f["position"] for f in facts if f["entity_kind"] == "fake"}
    with_fake = {f["entity_id"] for f in real if f["position"] in fake_pos}
    slots, seen, ranked = [], set(), []
    for f in _rank(real):
        if f["entity_id"] in seen:
            continue
        seen.add(f["entity_id"])
        ranked.append(f)
        if f["entity_id"] not in with_fake:
            slots.append(Slot(f["position"], f["entity"], f["answer_id"], f["entity_class"]))
    return slots, ranked


def _known_names(store, dataset_id: int, relation_id: int) -> dict[str, str]:
    """name_key -> reason, the strongest reason winning (real entity over answer over ...)."""
    found: dict[str, str] = {}
    rank = {r: i for i, r in enumerate(REASON_ORDER)}
    for reason, name in store.query(read_sql(SQL, "sql/known_names.sql"), [dataset_id, relation_id]):
        k = name_key(name)
        if k not in found or rank[reason] < rank[found[k]]:
            found[k] = reason
    return found


def plan_relation(store, dataset: str, relation: str) -> RelationPlan:
    """Read everything ``generate`` / ``add`` need about one relation (no writes)."""
    ds_id, rid, short = find_relation(store, dataset, relation)
    cur = store.execute(read_sql(SQL, "sql/relation_facts.sql"), [rid])
    cols = [d[0] for d in cur.description]
    facts = [dict(zip(cols, r)) for r in cur.fetchall()]
    slots, ranked = _free_slots(facts)
    real_by_class: dict[str | None, list[str]] = {None: [f["entity"] for f in ranked]}
    for f in ranked:
        if f["entity_class"]:
            real_by_class.setdefault(f["entity_class"], []).append(f["entity"])
    classes = [(c, float(x)) for c, x in store.query(read_sql(SQL, "sql/entity_classes.sql"), [rid])]
    forms = store.query(read_sql(SQL, "sql/first_query_form.sql"), [rid])
    return RelationPlan(
        ds_id,
        dataset,
        rid,
        short,
        slots,
        classes,
        forms[0][0] if forms else None,
        real_by_class,
        _known_names(store, ds_id, rid),
    )


def class_counts(n: int, classes: list[tuple[str, float]]) -> list[tuple[str, int]]:
    """Split ``n`` over classes by fraction (largest remainder; ties by the classes' order)."""
    total = sum(f for _, f in classes)
    if n <= 0 or total <= 0:
        return []
    quotas = [(c, n * f / total) for c, f in classes]
    counts = {c: int(q) for c, q in quotas}
    left = n - sum(counts.values())
    by_rem = sorted(range(len(quotas)), key=lambda i: (-(quotas[i][1] - int(quotas[i][1])), i))
    for i in by_rem[:left]:
        counts[quotas[i][0]] += 1
    return [(c, counts[c]) for c, _ in classes if counts[c]]


def assign_classes(slots: list[Slot], classes: list[tuple[str, float]]) -> list[str | None]:
    """The class to ask for at each slot (see the module docstring)."""
    out: list[str | None] = [s.class_name for s in slots]
    unknown = [i for i, c in enumerate(out) if not c]
    it = iter(unknown)
    for cls, k in class_counts(len(unknown), classes):
        for _ in range(k):
            out[next(it)] = cls
    return out


def group_by_class(classes: list[str | None]) -> dict[str | None, int]:
    """How many fakes of each class, in first-seen order."""
    return dict(Counter(classes))
