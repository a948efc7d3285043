"""Draw a context sample: the paper's design (METHOD.md §2, App. C) or every template once.

Design ``paper`` (default), per relation:
- entities: half real, half fake when the relation has fakes (else all real). Real entities are
  the top ones by YAGO degree when degrees exist (``uri_degree``, else ``predicate_degree``; ties
  and missing degrees by file position), as the authors' ``top_entity_uri_degree``, else a random
  choice (App. C: "we randomly sample k real entities") that by default does not depend on the
  seed (``real_entities="fixed"``; ``per-seed``: a new draw per seed). Fakes: by default a seeded
  random choice among all the relation's fakes, each with its own answer (the answer of the real
  fact at its position), as the authors' code draws them (``fakes="random"``); ``paired``: the
  fakes at the positions of the selected real entities, so each borrows the answer of a selected
  real entity and the fakes do not change with the seed.
- contexts: every selected entity is mentioned in exactly ``n_contexts / n_entities`` contexts,
  split evenly over the context types; each context's template is drawn among the relation's
  templates of that type and its answer from the relation's answer pool: by default as the
  authors' code does (the full list of its real facts' answers, so frequent answers come up more
  often, drawn without replacement), or ``distinct`` (uniform over distinct answers, with
  replacement). The contexts are then shuffled. No two queried entities of a relation share a name
  (the authors de-duplicate by name): a namesake would make a context about one count as
  irrelevant for the other. Every queried entity is scored
  against all contexts of its relation.

Design ``all``: every template of the requested types rendered once per selected fact with the
fact's own answer (fixed texts without placeholders once), e.g. the friend–enemy and gender
case studies.

Randomness: numpy's PCG64 seeded with (seed, crc32(relation id)): the same seed gives the same
sample on any machine, and adding a relation does not change the others' contexts.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import UserError
from ..ingest.yago_qec import resolve_relations
from ..options import Option, check_applicable, check_options, seed_option
from ..sqlfiles import read_sql
from ..storage.store import Store, utcnow
from ..version import __version__

DESIGNS = ("paper", "all", "fixed")  # fixed: sampling/fixed.py (wh.samples.draw picks it)


def _rng(seed: int, relation_name: str) -> np.random.Generator:
    """The relation's own generator: PCG64 seeded with (seed, crc32(relation id))."""
    return np.random.Generator(
        np.random.PCG64([int(seed) & 0xFFFFFFFFFFFFFFFF, zlib.crc32(relation_name.encode("utf-8"))])
    )


def _rank_real(facts: list[dict], rng: np.random.Generator, balance_classes: bool = False) -> list[dict]:
    """Top by YAGO degree when degrees exist; otherwise a seeded random order (the paper's
    "we randomly sample k real entities")."""
    for col in ("uri_degree", "predicate_degree"):
        if any(f[col] is not None for f in facts):
            return sorted(facts, key=lambda f: (f[col] is None, -(f[col] or 0), f["position"]))
    ordered = sorted(facts, key=lambda f: f["position"])
    shuffled = [ordered[i] for i in rng.permutation(len(ordered))]
    classes = sorted({f.get("entity_class") or "" for f in shuffled})
    if not balance_classes or len(classes) < 2:
        return shuffled
    # design all (case studies) with several entity classes, e.g. the gender study's feminine /
    # masculine names: alternate the classes, so any number of entities is balanced over them
    by_class = {c: [f for f in shuffled if (f.get("entity_class") or "") == c] for c in classes}
    out = []
    for i in range(max(len(v) for v in by_class.values())):
        out += [by_class[c][i] for c in classes if i < len(by_class[c])]
    return out


ANSWER_SAMPLING = ("authors", "distinct")


class _AnswerDraws:
    """Context answers drawn from a relation's answer pool.

    ``authors`` (the paper's code: measureLM's ``build_contexts_dataset`` groups the rendered
    contexts by (entity, context type) and takes ``n`` of each group without replacement): for each
    entity and context type, ``n`` distinct positions of the full list of the relation's real
    facts' answers, so an answer shared by many facts comes up proportionally more often and no
    position twice in a group; a list shorter than ``n`` is an error, as there.
    ``distinct``: uniform over the distinct answers, with replacement.
    """

    def __init__(self, facts: list[dict], mode: str, rng: np.random.Generator):
        real = sorted(
            (f for f in facts if f["entity_kind"] == "real" and f["answer_id"] is not None),
            key=lambda f: f["position"],
        )
        pairs = [(f["answer_id"], f["answer"]) for f in real]
        self.pool = pairs if mode == "authors" else sorted(set(pairs))
        self.mode, self.rng = mode, rng

    def __bool__(self) -> bool:
        return bool(self.pool)

    def group(self, n: int) -> list[tuple[int, str]]:
        """The answers of one (entity, context type) group of ``n`` contexts."""
        if self.mode == "distinct":
            return [self.pool[int(self.rng.integers(len(self.pool)))] for _ in range(n)]
        return [self.pool[j] for j in self.rng.choice(len(self.pool), n, replace=False)]


FAKE_SELECTION = ("random", "paired")
REAL_SELECTION = ("fixed", "per-seed")


def _fixed_rng(relation_name: str) -> np.random.Generator:
    """The generator of the seed-independent real-entity draw (``real_entities="fixed"``)."""
    return np.random.Generator(np.random.PCG64([zlib.crc32(("reals " + relation_name).encode("utf-8"))]))


def _select_facts(
    rel: str,
    facts: list[dict],
    n_entities: int | None,
    rng: np.random.Generator,
    balance_classes: bool = False,
    fakes: str = "random",
    real_rng: np.random.Generator | None = None,
) -> list[dict]:
    """The queried facts of a relation: the selected real ones, then the fakes; no two share an
    entity name (``n_entities`` None: every fact, real ones first, in file order).

    ``fakes``: ``random`` (the authors' ``top_entity_uri_degree``: a seeded random choice among
    all the relation's fakes, each with its own answer) or ``paired`` (the fakes at the positions
    of the selected real entities). ``real_rng`` orders real entities without degrees (default:
    ``rng``)."""
    real = [f for f in facts if f["entity_kind"] == "real"]
    fake_by_pos = {f["position"]: f for f in facts if f["entity_kind"] == "fake"}
    if n_entities is None:  # every fact, real first, in file order
        return sorted(real, key=lambda f: f["position"]) + sorted(
            fake_by_pos.values(), key=lambda f: f["position"]
        )
    has_fakes = bool(fake_by_pos)
    if has_fakes and n_entities % 2:
        raise UserError(f"--entities {n_entities}: must be even (half real, half fake entities)")
    n_real = n_entities // 2 if has_fakes else n_entities
    paired = has_fakes and fakes == "paired"
    chosen: list[dict] = []
    names: set[str] = set()  # one entity per name: namesakes (other URI or kind) are never both queried
    for f in _rank_real(real, real_rng if real_rng is not None else rng, balance_classes):
        if paired and f["position"] not in fake_by_pos:
            continue
        pair = {f["entity"], fake_by_pos[f["position"]]["entity"]} if paired else {f["entity"]}
        if pair & names or len(pair) < (2 if paired else 1):
            continue
        names |= pair
        chosen.append(f)
        if len(chosen) == n_real:
            break
    if len(chosen) < n_real:
        what = (
            "real entities with a fake counterpart"
            if paired
            else "real entities"
            if has_fakes
            else "entities"
        )
        raise UserError(
            f"relation '{rel}' has only {len(chosen)} distinct {what}; --entities {n_entities} needs {n_real}"
        )
    if not has_fakes:
        return chosen
    if paired:
        return chosen + [fake_by_pos[f["position"]] for f in chosen]
    return chosen + _random_fakes(
        rel, sorted(fake_by_pos.values(), key=lambda f: f["position"]), n_entities - n_real, names, rng
    )


def _random_fakes(
    rel: str, fakes: list[dict], n: int, names: set[str], rng: np.random.Generator
) -> list[dict]:
    """``n`` fakes in a seeded random order, skipping names already queried (the authors'
    ``random.sample`` of the relation's fakes)."""
    out = []
    for j in rng.permutation(len(fakes)):
        f = fakes[int(j)]
        if f["entity"] in names:
            continue
        names.add(f["entity"])
        out.append(f)
        if len(out) == n:
            return out
    raise UserError(
        f"relation '{rel}' has only {len(out)} distinct fake entities besides its real ones; "
        f"--entities {2 * n} needs {n}"
    )


PAPER_ENTITIES, PAPER_CONTEXTS = 100, 600  # the paper's design: entities and contexts per relation

SAMPLE_OPTIONS = (
    Option("dataset", "--dataset", "Dataset name (see `ctxprior info`).", required=True),
    Option(
        "relations",
        "--relation",
        "Only this relation (short name or full id); repeatable. Default: all.",
        metavar="R",
        multiple=True,
        applies=("design", ("paper", "all")),
    ),
    Option(
        "entities",
        "--entities",
        f"Entities per relation: half real (top by degree when known), half fake. Default: "
        f"{PAPER_ENTITIES} for the paper design, every entity for --design all (0 also means every entity).",
        kind=int,
        maximum=10**7,
        minimum=0,
        applies=("design", ("paper", "all")),
    ),
    Option(
        "contexts",
        "--contexts",
        f"Contexts per relation (paper design); each entity appears in contexts/entities of them. "
        f"Default: {PAPER_CONTEXTS}.",
        kind=int,
        maximum=10**8,
        minimum=1,
        applies=("design", ("paper",)),
    ),
    Option(
        "context_types",
        "--context-types",
        "Comma-separated context types, split evenly per entity.",
        default=("base", "assertive", "negation"),
        listed=True,
        applies=("design", ("paper", "all")),
    ),
    seed_option(11, "Random seed (paper: 11, 12, 13)."),
    Option(
        "design",
        "--design",
        "paper: the balanced random design; all: every template once per entity (case studies); "
        "fixed: every item of a fixed-context dataset (`ingest table`, nq-swap, conflictqa, "
        "counterfact) with exactly its own passages.",
        default="paper",
        choices=DESIGNS,
    ),
    Option(
        "items",
        "--items",
        "With --design fixed: only the first N items in source order. Default: every item.",
        kind=int,
        maximum=10**9,
        minimum=1,
        metavar="N",
        applies=("design", ("fixed",)),
    ),
    Option(
        "answer_sampling",
        "--answer-sampling",
        "How each context's answer is drawn from the relation's answers. authors: as the paper's "
        "code, from the full list of its facts' answers (frequent answers more often) without "
        "replacement; distinct: uniformly over the distinct answers, with replacement.",
        default="authors",
        choices=ANSWER_SAMPLING,
        applies=("design", ("paper",)),
    ),
    Option(
        "templates_per_type",
        "--templates-per-type",
        "With --design all: render a seeded choice of N templates per context type (e.g. a small "
        "gender study). Default: every template.",
        kind=int,
        maximum=10**6,
        minimum=1,
        metavar="N",
        applies=("design", ("all",)),
    ),
    Option(
        "fakes",
        "--fakes",
        "Which fakes a sample queries. random: as the authors' code, a seeded random choice among "
        "the relation's fakes (each with its own answer); paired: the fakes at the positions of "
        "the selected real entities (the same for every seed).",
        default="random",
        choices=FAKE_SELECTION,
        applies=("design", ("paper", "all")),
    ),
    Option(
        "real_entities",
        "--real-entities",
        "fixed: top by degree, else one random draw that does not depend on --seed (seeds vary "
        "the contexts and fakes, as in the paper); per-seed: without degrees, a new draw for "
        "every seed.",
        default="fixed",
        choices=REAL_SELECTION,
        applies=("design", ("paper", "all")),
    ),
)
"""The options of ``ctxprior sample`` / ``wh.samples.draw``."""


def sample_sizes(design: str, entities: int | None, contexts: int | None) -> tuple[int | None, int | None]:
    """Entities and contexts per relation: the paper design's defaults fill what is None; with
    ``design="all"``, 0 or None entities means every entity."""
    if design == "paper":
        return (PAPER_ENTITIES if entities is None else entities), (
            PAPER_CONTEXTS if contexts is None else contexts
        )
    return (entities or None), contexts


def draw_sample(
    store: Store,
    dataset: str,
    relations: Iterable[str] | None = None,
    n_entities: int | None = None,
    n_contexts: int | None = None,
    context_types: Sequence[str] = ("base", "assertive", "negation"),
    seed: int = 11,
    design: str = "paper",
    answer_sampling: str = "authors",
    templates_per_type: int | None = None,
    fakes: str = "random",
    real_entities: str = "fixed",
    items: int | None = None,
) -> int:
    """Validate, draw and store a sample in one transaction; return its ``sample_id``. The options
    are :data:`SAMPLE_OPTIONS` (``n_entities`` / ``n_contexts``: ``entities`` / ``contexts``);
    design ``fixed`` is ``sampling/fixed.py`` (``items`` belongs to it and is refused here)."""
    context_types = check_sample(
        dataset=dataset,
        entities=n_entities,
        contexts=n_contexts,
        context_types=context_types,
        seed=seed,
        design=design,
        answer_sampling=answer_sampling,
        templates_per_type=templates_per_type,
        fakes=fakes,
        real_entities=real_entities,
        items=items,
    )
    n_entities, n_contexts = sample_sizes(design, n_entities, n_contexts)
    ds_id = _dataset_id(store, dataset)
    per_type = _contexts_per_type(n_entities, n_contexts, len(context_types)) if design == "paper" else 0
    rels = _sample_relations(store, ds_id, dataset, relations)
    facts_by_rel, templates = _load_facts_and_templates(store, [r[0] for r in rels])

    sample_id = store.next_id("sample", "sample_id")
    ctx0 = int(store.next_id("context", "context_id"))
    sf_cols, cx_cols = _empty_columns()
    for rid, rname, rshort in rels:
        facts = _relation_facts(dataset, rshort, facts_by_rel.get(rid, []), templates[rid], context_types)
        rng = _rng(seed, rname)
        chosen = _select_facts(
            rshort,
            facts,
            n_entities,
            rng,
            balance_classes=design == "all",
            fakes=fakes,
            real_rng=_fixed_rng(rname) if real_entities == "fixed" else None,
        )
        _add_sample_facts(sf_cols, sample_id, rid, chosen)
        if design == "paper":
            rows = _paper_rows(
                rshort, facts, chosen, templates[rid], context_types, per_type, answer_sampling, rng
            )
        else:
            rows = _all_rows(chosen, templates[rid], context_types, templates_per_type, rng)
        ctx0 = _add_contexts(cx_cols, ctx0, sample_id, rid, rows)

    params = _sample_params(
        dataset,
        [r[2] for r in rels],
        design,
        n_entities,
        n_contexts,
        context_types,
        seed,
        answer_sampling,
        templates_per_type,
        fakes,
        real_entities,
    )
    store_sample(
        store, sample_id, ds_id, design, seed, n_entities, n_contexts, context_types, params, sf_cols, cx_cols
    )
    return sample_id


def _sample_params(
    dataset,
    relations,
    design,
    n_entities,
    n_contexts,
    context_types,
    seed,
    answer_sampling,
    templates_per_type,
    fakes,
    real_entities,
) -> dict:
    """``sample.params_json``: what the sample was drawn with (its keys and order are part of
    the stored rows)."""
    return {
        "dataset": dataset,
        "relations": relations,
        "design": design,
        "n_entities": n_entities,
        "n_contexts": n_contexts,
        "context_types": list(context_types),
        "seed": seed,
        "rng": "numpy PCG64(seed, crc32(relation id))",
        "answer_sampling": answer_sampling if design == "paper" else None,
        "entity_dedup": "name",
        "templates_per_type": templates_per_type,
        "fakes": fakes,
        "real_entities": real_entities,
    }


def check_sample(**values: Any) -> list[str]:
    """Check the options of a sample (API keywords of :data:`SAMPLE_OPTIONS`) before anything is
    opened or written; return the stripped, non-empty, distinct context types."""
    check_options(SAMPLE_OPTIONS, {k: tuple(v) if k == "context_types" else v for k, v in values.items()})
    check_applicable(SAMPLE_OPTIONS, values)  # each option's ``applies``: the designs it belongs to
    return _check_options(
        values.get("design", "paper"),
        values.get("templates_per_type"),
        values["context_types"],
        values.get("items"),
    )


def _check_options(
    design: str, templates_per_type: int | None, context_types: Sequence[str], items: int | None = None
) -> list[str]:
    """What the declarations cannot check alone (which design each option belongs to is their
    ``applies``, checked by ``check_applicable``); return the stripped, non-empty, distinct
    context types."""
    context_types = [t.strip() for t in context_types if t.strip()]
    if not context_types:
        raise UserError("--context-types: give at least one context type")
    if len(set(context_types)) != len(context_types):
        raise UserError(f"--context-types {','.join(context_types)}: a type is repeated")
    return context_types


def _dataset_id(store: Store, dataset: str) -> int:
    """The id of the dataset named ``dataset``; an unknown name lists the warehouse's datasets."""
    ds = store.query("SELECT dataset_id FROM dataset WHERE name = ?", [dataset])
    if not ds:
        names = [r[0] for r in store.query("SELECT name FROM dataset ORDER BY dataset_id")]
        raise UserError(
            f"unknown dataset '{dataset}' in {store.path}; it has: {', '.join(names) or 'none (run ingest first)'}"
        )
    return ds[0][0]


def _contexts_per_type(n_entities: int | None, n_contexts: int | None, n_types: int) -> int:
    """Design ``paper``: how many contexts of each type mention each entity (the counts must divide)."""
    if not n_entities or n_entities <= 0 or not n_contexts or n_contexts <= 0:
        raise UserError("--entities and --contexts must be positive for the paper design")
    per_entity, rem = divmod(n_contexts, n_entities)
    if rem or per_entity % n_types:
        raise UserError(
            f"--contexts {n_contexts} must be a multiple of --entities {n_entities} × "
            f"{n_types} context types (each entity appears in the same number of contexts of each type)"
        )
    return per_entity // n_types


def _sample_relations(store: Store, ds_id: int, dataset: str, relations: Iterable[str] | None) -> list[tuple]:
    """The dataset's requested relations (full or short names; all when None) as
    (relation_id, name, short_name) rows, in the order ``resolve_relations`` gives."""
    rel_rows = store.query(
        "SELECT relation_id, name, short_name FROM relation WHERE dataset_id = ? ORDER BY position", [ds_id]
    )
    by_name = {r[1]: r for r in rel_rows}
    short_to_name = {r[2]: r[1] for r in rel_rows}
    wanted = [short_to_name.get(w, w) for w in relations] if relations else None
    names = resolve_relations([r[1] for r in rel_rows], wanted, f"dataset '{dataset}'")
    return [by_name[n] for n in names]


def _load_facts_and_templates(
    store: Store, rel_ids: list[int]
) -> tuple[dict[int, list[dict]], dict[int, dict[str, list[tuple[int, str]]]]]:
    """The facts of the relations (dicts, by relation id) and their context templates (by relation
    id and context type, in ordinal order, as (context_template_id, template))."""
    facts_by_rel: dict[int, list[dict]] = defaultdict(list)
    cur = store.execute(read_sql("ctxprior.sampling", "sql/sample_facts.sql"), [rel_ids])
    cols = [d[0] for d in cur.description]
    for row in cur.fetchall():
        f = dict(zip(cols, row))
        facts_by_rel[f["relation_id"]].append(f)
    templates: dict[int, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
    for rid, tid, ctype, tpl in store.query(
        read_sql("ctxprior.sampling", "sql/sample_templates.sql"), [rel_ids]
    ):
        templates[rid][ctype].append((tid, tpl))
    return facts_by_rel, templates


def _empty_columns() -> tuple[dict[str, list], dict[str, list]]:
    """Empty column lists of the ``sample_fact`` and ``context`` rows to insert."""
    sf_cols: dict[str, list] = {k: [] for k in ("sample_id", "fact_id", "relation_id", "ordinal")}
    cx_cols: dict[str, list] = {
        k: []
        for k in (
            "context_id",
            "sample_id",
            "relation_id",
            "ordinal",
            "context_template_id",
            "context_type",
            "entity_id",
            "answer_id",
            "text",
        )
    }
    return sf_cols, cx_cols


def _relation_facts(
    dataset: str, rshort: str, facts: list[dict], templates: dict[str, list], context_types: list[str]
) -> list[dict]:
    """Check that a relation has facts and a template of every requested context type; return its facts."""
    if not facts:
        raise UserError(f"relation '{rshort}' of dataset '{dataset}' has no facts")
    missing = [t for t in context_types if t not in templates]
    if missing:
        have = ", ".join(sorted(templates)) or "none"
        raise UserError(f"relation '{rshort}' has no '{missing[0]}' context template (it has: {have})")
    return facts


def _add_sample_facts(sf_cols: dict[str, list], sample_id: int, rid: int, chosen: list[dict]) -> None:
    """Append the selected facts of one relation, in selection order, to the ``sample_fact`` columns."""
    for i, f in enumerate(chosen):
        for k, v in (
            ("sample_id", sample_id),
            ("fact_id", f["fact_id"]),
            ("relation_id", rid),
            ("ordinal", i),
        ):
            sf_cols[k].append(v)


def _paper_rows(
    rshort: str,
    facts: list[dict],
    chosen: list[dict],
    templates: dict[str, list[tuple[int, str]]],
    context_types: list[str],
    per_type: int,
    answer_sampling: str,
    rng: np.random.Generator,
) -> list[tuple]:
    """Design ``paper``: ``per_type`` contexts of each type per selected entity, each with a drawn
    template and answer, then shuffled. Rows are (template_id, type, entity_id, answer_id, text)."""
    pool = _AnswerDraws(facts, answer_sampling, rng)
    if not pool:
        raise UserError(f"relation '{rshort}' has no answers to put in contexts")
    if answer_sampling == "authors" and per_type > len(pool.pool):
        raise UserError(
            f"relation '{rshort}' has {len(pool.pool)} answers but each entity needs {per_type} "
            "contexts of a type drawn without replacement; use fewer --contexts or "
            "--answer-sampling distinct"
        )
    rows: list[tuple] = []
    for f in chosen:
        for ctype in context_types:
            tpls = templates[ctype]
            for aid, aname in pool.group(per_type):
                tid, tpl = tpls[int(rng.integers(len(tpls)))] if len(tpls) > 1 else tpls[0]
                rows.append((tid, ctype, f["entity_id"], aid, tpl.format(entity=f["entity"], answer=aname)))
    order = rng.permutation(len(rows))
    return [rows[j] for j in order]


def _all_rows(
    chosen: list[dict],
    templates: dict[str, list[tuple[int, str]]],
    context_types: list[str],
    templates_per_type: int | None,
    rng: np.random.Generator,
) -> list[tuple]:
    """Design ``all``: every template of each type (or a seeded choice of ``templates_per_type``)
    rendered once per selected fact with its own answer, fixed texts once. Rows are
    (template_id, type, entity_id, answer_id, text)."""
    rows: list[tuple] = []
    for ctype in context_types:
        tpls = templates[ctype]
        if templates_per_type is not None and templates_per_type < len(tpls):
            tpls = [tpls[j] for j in sorted(rng.choice(len(tpls), templates_per_type, replace=False))]
        for tid, tpl in tpls:
            if "{entity}" not in tpl and "{answer}" not in tpl:
                rows.append((tid, ctype, None, None, tpl))
                continue
            for f in chosen:
                rows.append(
                    (
                        tid,
                        ctype,
                        f["entity_id"],
                        f["answer_id"],
                        tpl.format(entity=f["entity"], answer=f["answer"] or ""),
                    )
                )
    return rows


def _add_contexts(cx_cols: dict[str, list], ctx0: int, sample_id: int, rid: int, rows: list[tuple]) -> int:
    """Append one relation's context rows to the ``context`` columns with ids from ``ctx0``;
    return the next free context id."""
    for j, (tid, ctype, eid, aid, text) in enumerate(rows):
        for k, v in (
            ("context_id", ctx0),
            ("sample_id", sample_id),
            ("relation_id", rid),
            ("ordinal", j),
            ("context_template_id", tid),
            ("context_type", ctype),
            ("entity_id", eid),
            ("answer_id", aid),
            ("text", text),
        ):
            cx_cols[k].append(v)
        ctx0 += 1
    return ctx0


def store_sample(
    store: Store,
    sample_id: int,
    ds_id: int,
    design: str,
    seed: int,
    n_entities: int | None,
    n_contexts: int | None,
    context_types: list[str],
    params: dict[str, Any],
    sf_cols: dict[str, list],
    cx_cols: dict[str, list],
) -> None:
    """Insert the sample, its facts (``sample_fact`` columns) and its contexts (``context`` columns)
    in one transaction (joining the caller's, if any)."""
    with store.transaction():
        store.insert_arrow(
            "sample",
            {
                "sample_id": [sample_id],
                "dataset_id": [ds_id],
                "design": [design],
                "seed": [seed],
                "n_entities": pa.array([n_entities], pa.int32()),
                "n_contexts": pa.array([n_contexts], pa.int32()),
                "context_types": [",".join(context_types)],
                "params_json": [json.dumps(params, sort_keys=True)],
                "ctxprior_version": [__version__],
                "created_at": pa.array([utcnow()], pa.timestamp("us")),
            },
        )
        store.insert_arrow("sample_fact", pa.table({k: pa.array(v, pa.int32()) for k, v in sf_cols.items()}))
        store.insert_arrow(
            "context",
            pa.table(
                {
                    "context_id": pa.array(cx_cols["context_id"], pa.int64()),
                    "sample_id": pa.array(cx_cols["sample_id"], pa.int32()),
                    "relation_id": pa.array(cx_cols["relation_id"], pa.int32()),
                    "ordinal": pa.array(cx_cols["ordinal"], pa.int32()),
                    "context_template_id": pa.array(cx_cols["context_template_id"], pa.int32()),
                    "context_type": pa.array(cx_cols["context_type"], pa.string()),
                    "entity_id": pa.array(cx_cols["entity_id"], pa.int32()),
                    "answer_id": pa.array(cx_cols["answer_id"], pa.int32()),
                    "text": pa.array(cx_cols["text"], pa.string()),
                }
            ),
        )
