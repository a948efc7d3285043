"""Planning a run: which work units a sample holds (relation x query form x entity shard, in a
fixed order), their inputs, and how many entities go in one unit."""

from __future__ import annotations

from ...errors import UserError
from ...sqlfiles import read_sql
from ...storage.store import Store
from ..models import LoadedModel
from ..options import SHARD_CAP, ScoreConfig
from ..texts import UnitInput, UnitSpec

PKG = "ctxprior.scoring.runs"


def sample_row(store: Store, sample_id: int):
    """(sample_id, dataset_id) of the sample; UserError naming the samples there are."""
    row = store.query("SELECT sample_id, dataset_id FROM sample WHERE sample_id = ?", [sample_id])
    if not row:
        ids = [str(r[0]) for r in store.query("SELECT sample_id FROM sample ORDER BY 1")]
        raise UserError(
            f"--sample {sample_id}: no such sample in {store.path}; it has: "
            f"{', '.join(ids) or 'none (run `ctxprior sample ...` first)'}"
        )
    return row[0]


def _relations(store: Store, sample_id: int, wanted) -> list[int]:
    """Relation ids of the sample in position order, or the ``wanted`` ones (by name or short name)."""
    rows = store.query(read_sql(PKG, "sql/relations.sql"), [sample_id])
    if not wanted:
        return [r[0] for r in rows]
    out = []
    for w in wanted:
        hit = [r[0] for r in rows if w in (r[1], r[2])]
        if not hit:
            raise UserError(
                f"--relation {w}: not in sample {sample_id}; it has: " + ", ".join(r[2] for r in rows)
            )
        out += [h for h in hit if h not in out]
    return sorted(out, key=[r[0] for r in rows].index)


def plan_units(store: Store, sample_id: int, config: ScoreConfig) -> list[UnitSpec]:
    """Deterministic unit list: relation (by position) x query form (type, ordinal) x shard."""
    rels = _relations(store, sample_id, config.relations)
    units: list[UnitSpec] = []
    qf_rows = store.query(read_sql(PKG, "sql/query_forms.sql"))  # open before closed
    forms: dict[int, list[int]] = {}
    per_type: dict[tuple[int, str], int] = {}
    for rel, qf, qt in qf_rows:
        if qt in config.query_types:
            per_type[rel, qt] = per_type.get((rel, qt), 0) + 1
            if config.query_forms_per_type is None or per_type[rel, qt] <= config.query_forms_per_type:
                forms.setdefault(rel, []).append(qf)
    facts: dict[int, list[int]] = {}
    for rel, fid in store.query(read_sql(PKG, "sql/sample_facts.sql"), [sample_id]):
        facts.setdefault(rel, []).append(fid)
    size = config.shard_size
    if size is None:  # chosen when the run starts (score.py); a stored run always has one
        raise ValueError("plan_units: the config has no shard size yet")
    for rel in rels:
        fl = facts.get(rel, [])
        for qf in forms.get(rel, []):
            for shard, s in enumerate(range(0, len(fl), size)):
                units.append(
                    UnitSpec(
                        unit_id=len(units),
                        relation_id=rel,
                        query_form_id=qf,
                        shard=shard,
                        fact_ids=tuple(fl[s : s + size]),
                    )
                )
    return units


def load_inputs(store: Store, sample_id: int, run_id: int, specs: list[UnitSpec]) -> list[UnitInput]:
    """Each unit's template, facts, contexts, the dataset's separator and its declared answer space,
    read in five queries."""
    forms = {
        r[0]: (r[1], r[2]) for r in store.query("SELECT query_form_id, template, query_type FROM query_form")
    }
    facts = {r[0]: (r[0], r[1], r[2]) for r in store.query(read_sql(PKG, "sql/unit_facts.sql"), [sample_id])}
    ctx: dict[int, list] = {}
    for rel, cid, text, ans in store.query(read_sql(PKG, "sql/unit_contexts.sql"), [sample_id]):
        ctx.setdefault(rel, []).append((cid, text, ans))
    sep = store.scalar(read_sql(PKG, "sql/separator.sql"), [sample_id]) or ""
    labels = tuple(r[0] for r in store.query(read_sql(PKG, "sql/answer_labels.sql"), [sample_id]))
    out = []
    for s in specs:
        tmpl, qt = forms[s.query_form_id]
        out.append(
            UnitInput(
                spec=s,
                run_id=run_id,
                template=tmpl,
                query_type=qt,
                facts=[facts[f] for f in s.fact_ids],
                contexts=ctx.get(s.relation_id, []),
                separator=sep,
                answer_labels=labels,
            )
        )
    return out


def auto_shard_size(lm: LoadedModel, n_contexts: int, estimator: str, per_layer: bool = False) -> int:
    """Entities per unit when ``--shard-size`` is not given: the rule of ``SHARD_CAP`` (declared
    with the option, ``scoring/options.py``). A unit's [prompts x vocab] float32 table (and with
    ``per_layer`` the [layers x prompts x hidden] residual stream) fits a memory budget: a quarter
    of the free GPU memory, 1.5 GiB on the CPU.

    A unit computes each (context, query-form head) prefix once, so bigger units share more."""
    from ..device import vocab_size
    from ..estimators import registry

    cuda = lm.device.startswith("cuda")
    cap = SHARD_CAP["cuda" if cuda else "cpu"]
    if not getattr(registry().get(estimator), "vocab_table", False):  # no [prompts x vocab] table
        return min(cap, SHARD_CAP["no vocabulary table"])
    if cuda and lm.model is not None:
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(lm.device))
        budget = free * 0.25
    elif cuda:  # the workers' GPUs (Ray): an 80 GB card's quarter, as a guess for the shard size
        budget = 16 * 2**30
    else:
        budget = 1.5 * 2**30
    per_prompt = vocab_size(lm) * 4 + (_layer_bytes(lm) if per_layer else 0)
    per_entity = max(1, n_contexts + 1) * per_prompt
    return int(max(1, min(cap, budget // per_entity)))


def _layer_bytes(lm: LoadedModel) -> int:
    """Bytes of one prompt's residual stream at its last position, every layer (``--per-layer``);
    a guess of 32 layers x 4096 x 2 bytes when the driver holds no model (Ray)."""
    if lm.model is None:
        return 32 * 4096 * 2
    from ..architectures import dims

    d = dims(lm.model.config)
    return int(d.layers * d.hidden * lm.model.dtype.itemsize)
