"""The dataset card (README.md of a published dataset), generated from the warehouse.

Column meanings come from the SQLAlchemy ``Column.comment``s in ``ctxprior.schema.base.metadata``
(tables) and from the view files, each view's beside its SQL (the ``-- columns:`` block above its
CREATE VIEW and the ``-- shared columns:`` block of views/05_staging.sql: ``view_meanings``); a
view column neither explains means what it means in the view or table it reads it from.
The card holds no timestamp of its own, so an unchanged warehouse gives an unchanged card.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from ..measures import RELIANCE_MEASURES
from ..schema import metadata
from ..schema.declared import view_meanings
from ..sqlfiles import body, ident, literal, read_sql
from ..storage.store import Store
from ..version import __version__

# Meanings of table columns that have no `comment=` in the schema (core columns written before
# comments were required). A comment in the schema always wins over this.
TABLE_COLUMN_MEANINGS: dict[str, dict[str, str]] = {
    "meta": {"key": "metadata key", "value": "metadata value"},
    "dataset": {
        "name": "dataset name, unique in the warehouse",
        "description": "free-text description",
        "source_path": "input file as given at ingest",
        "source_sha256": "sha256 of the input file",
    },
    "relation": {"is_reverse": "true for a reversed relation (source id prefixed reverse-)"},
    "relation_class": {
        "class_name": "class name (e.g. a YAGO class)",
        "fraction": "share of the relation's entities / answers in this class",
    },
    "entity": {
        "name": "entity name as in the source",
        "uri": "entity URI in the source knowledge graph (NULL for generated entities)",
        "entity_class": "class of the entity, e.g. from YAGO",
    },
    "answer": {"name": "answer text", "uri": "answer URI in the source knowledge graph"},
    "query_form": {"ordinal": "index among the relation's query forms of this type"},
    "context_template": {
        "ordinal": "index among the relation's templates of this type",
        "template": "context template with placeholders {entity} and {answer}",
    },
    "sample": {"seed": "random seed of the sample (paper: 11, 12, 13)"},
    "context": {
        "text": "the context text, prepended to the query (ends in a newline)",
        "context_type": "base | assertive | negation | ... (copied from the template)",
    },
    "run": {
        "dtype": "dtype of the model weights during the run",
        "device": "device the model ran on",
        "batch_size": "prompts per forward batch",
        "seed": "random seed of the run",
        "host": "machine that ran it",
        "pid": "process id of the run",
        "error": "error message when the run failed",
        "units_total": "work units in the run",
        "units_done": "work units finished",
        "prompts_done": "prompts scored so far",
    },
    "run_unit": {
        "n_prompts": "prompts scored in the unit",
        "attempts": "times the unit was tried",
        "error": "error message when the unit failed",
        "seconds": "wall-clock seconds spent on the unit",
    },
    "run_unit_engine": {
        "batch_size": "rows per forward pass when the unit finished",
        "oom_splits": "batches split after CUDA out-of-memory errors",
    },
    "susceptibility": {"n_contexts": "number of contexts in the mixture p(A|q(e))"},
    "prior_topk": {
        "token_id": "tokenizer id of the answer token",
        "prob": "probability p(A = token | q(e)) without context",
    },
    "prompt_topk": {
        "rank": "1 = most probable",
        "token_id": "tokenizer id of the answer token",
        "token": "decoded token (or answer string for answer-set runs)",
        "prob": "probability p(A = token | c, q(e))",
    },
}

# Any table or view, when nothing more specific is known.
GENERIC_COLUMN_MEANINGS: dict[str, str] = {
    "ctxprior_version": "ctxprior version that wrote the row",
    "created_at": "when the row was written (UTC)",
    "started_at": "start time (UTC)",
    "ended_at": "end time (UTC)",
    "finished_at": "finish time (UTC)",
}

CITATION_DU2024 = """@inproceedings{du2024context,
  title     = {Context versus Prior Knowledge in Language Models},
  author    = {Du, Kevin and Sn{\\ae}bjarnarson, V{\\'e}steinn and Stoehr, Niklas and White, Jennifer C. and Schein, Aaron and Cotterell, Ryan},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics (ACL)},
  year      = {2024}
}"""

SQL = "ctxprior.publish"

METHOD_TEXT = """\
Scores follow Du et al. (2024), *Context versus Prior Knowledge in Language Models* (§3, App. A-B):

- For a query form q, an entity e and the N contexts c sampled for its relation (weights p(c)
  uniform over the sample; a duplicated context counts twice), the model's answer distribution
  p(A | c, q(e)) is read from the prompt `c + q(e)` (plain concatenation; contexts end in a newline).
- The prior p(A | q(e)) = sum_c p(c) p(A | c, q(e)) is the **mixture over the sampled contexts**
  (the no-context distribution is stored separately, e.g. `susceptibility.prior_entropy`).
- **Persuasion** psi(c, q(e)) = KL( p(A|c,q(e)) || p(A|q(e)) ), in nats (table `persuasion`).
- **Susceptibility** chi(q(e)) = sum_c p(c) psi(c, q(e)) = I(C; A | q(e))
  = H(p(A|q(e))) - sum_c p(c) H(p(A|c,q(e))), in nats (table `susceptibility`);
  0 <= chi <= min(H(A|q(e)), log N_unique_contexts).
- Entity-independent persuasion kappa(c, q) and gamma(q) = I(A; C | q(E)) (App. B) are means over
  facts and contexts (views `v_kappa`, `v_gamma`).
- Everything is computed in log space (log_softmax, logsumexp for the mixture) with float64
  accumulation. The memorization ratio (App. D) labels each greedy generation ORIGINAL, CONTEXT or
  OTHER (table `generation`, view `v_memorization`) and counts knowledge conflicts only; it is
  NULL, not 0, when undefined.
- Against the **no-context prompt** instead of the mixture, from the same distributions (table
  `reliance`, views `v_reliance`, `v_reliance_rates`): the shift KL(p(A|c,q(e)) || p(A|q(e)) without
  context), JSD (AdaCAD), CK-PLUG's confidence gain over its plausible tokens (and over the whole
  answer space), the probabilities of the context's, the gold and the prior's answer, DRUID's
  scaled probability difference and CUB's CCU, and the outcome (ORIGINAL / CONTEXT / OTHER; where
  the estimator reads the gold and the context's answer as one, a stored `collision`, decided from
  the two full answers) with ConR, MemR, ClashEval's context preference and CUB's BCU. Each prompt
  is `context + separator + query`, the separator recorded with the dataset.
"""


# -- column meanings ----------------------------------------------------------------------------


@functools.cache
def _pk_tables() -> dict[str, str]:
    """'x_id' -> table x, for every table whose primary key is that one ``*_id`` column."""
    out: dict[str, str] = {}
    for t in metadata.sorted_tables:
        pk = [c.name for c in t.primary_key.columns]
        if len(pk) == 1 and pk[0].endswith("_id"):
            out.setdefault(pk[0], t.name)
    return out


def _pk_meaning(column: str) -> str | None:
    """'x_id' that is the single-column primary key of table x -> 'id of a `x` row'."""
    t = _pk_tables().get(column)
    return f"id of a `{t}` row (see config `{t}`)" if t else None


def _mean_meanings() -> dict[str, str]:
    """mean_<measure> -> the card's text for a stored measure's mean (ctxprior/measures.py)."""
    return {f"mean_{m.name}": m.mean for m in RELIANCE_MEASURES if m.mean}


def column_meaning(table: str, column: str, kind: str = "table") -> str:
    """Meaning of ``table.column`` for the card; '' when nothing is known."""
    t = metadata.tables.get(table)
    if t is None:
        return _view_column_meaning(table, column, set())
    if column not in t.columns:
        return GENERIC_COLUMN_MEANINGS.get(column, "")
    c = t.columns[column]
    if c.comment:
        return c.comment
    if column in TABLE_COLUMN_MEANINGS.get(table, {}):
        return TABLE_COLUMN_MEANINGS[table][column]
    if c.primary_key and len(t.primary_key.columns) == 1 and column.endswith("_id"):
        return f"id of the {table} row (assigned by ctxprior, stable)"
    for fk in c.foreign_keys:
        target = fk.target_fullname.split(".")[0]
        return f"references {fk.target_fullname} (see config `{target}`)"
    return GENERIC_COLUMN_MEANINGS.get(column, "")


def _view_column_meaning(view: str, column: str, seen: set[str]) -> str:
    """A view column's meaning: its view's ``-- columns:`` block, the shared block, a stored
    measure's mean, the primary key it names, then what it means in the views and tables the view
    reads (in their order in its SQL; a foreign key's bare reference does not count)."""
    vm = view_meanings()
    for source in (vm.views.get(view, {}), vm.shared, _mean_meanings()):
        if column in source:
            return source[column]
    pk = _pk_meaning(column)
    if pk:
        return pk
    seen.add(view)
    for src in vm.reads.get(view, []):
        if src in seen:
            continue
        if src in metadata.tables:
            meaning = column_meaning(src, column) if column in metadata.tables[src].columns else ""
        else:
            meaning = _view_column_meaning(src, column, seen)
        if meaning and not meaning.startswith("references "):
            return meaning
    return GENERIC_COLUMN_MEANINGS.get(column, "")


def table_description(name: str) -> str:
    t = metadata.tables.get(name)
    if t is not None and t.comment:
        return t.comment
    return ""


def missing_meanings(manifest: dict[str, Any]) -> list[str]:
    """'table.column' for every published column the card cannot explain."""
    return [
        f"{e['name']}.{c['name']}"
        for e in manifest["tables"]
        if e["files"]
        for c in e["columns"]
        if not column_meaning(e["name"], c["name"], e["kind"])
    ]


# -- the card -----------------------------------------------------------------------------------

LICENSE_RE = re.compile(r"^[a-z0-9][a-z0-9.\-+]*$")


def front_matter(manifest: dict[str, Any], license: str, pretty_name: str) -> dict[str, Any]:
    configs = []
    published = [e for e in manifest["tables"] if e["files"]]
    default = next((e["name"] for e in published if e["name"] == "v_susceptibility"), None) or next(
        (e["name"] for e in published if e["name"] == "susceptibility"), None
    )
    for e in published:
        cfg: dict[str, Any] = {"config_name": e["name"]}
        if e["name"] == default:
            cfg["default"] = True
        cfg["data_files"] = [{"split": "train", "path": f"data/{e['name']}/*.parquet"}]
        configs.append(cfg)
    total = sum(e["rows"] for e in published)
    size = (
        "n<1K"
        if total < 1_000
        else "1K<n<10K"
        if total < 10_000
        else "10K<n<100K"
        if total < 100_000
        else "100K<n<1M"
        if total < 1_000_000
        else "1M<n<10M"
        if total < 10_000_000
        else "10M<n<100M"
        if total < 100_000_000
        else "100M<n<1B"
    )
    return {
        "license": license,
        "pretty_name": pretty_name,
        "language": ["en"],
        "tags": ["ctxprior", "context-vs-prior", "persuasion", "susceptibility", "knowledge-conflicts"],
        "size_categories": [size],
        "configs": configs,
    }


def _md(text: Any) -> str:
    s = "" if text is None else str(text)
    return s.replace("|", "\\|").replace("\n", " ")


def _runs_rows(store: Store, run_ids: list[int] | None) -> list[dict[str, Any]]:
    if not run_ids or "run" not in store.table_names():
        return []
    cols = [r[0] for r in store.query(read_sql(SQL, "sql/run_columns.sql"))]
    want = [
        c
        for c in (
            "run_id",
            "kind",
            "model",
            "model_revision",
            "dtype",
            "quantization",
            "estimator",
            "sample_id",
            "seed",
            "status",
            "ctxprior_version",
            "started_at",
            "ended_at",
        )
        if c in cols
    ]
    rows = store.query(
        body(read_sql(SQL, "sql/card_runs.sql")).format(columns=", ".join(map(ident, want))),
        [[int(r) for r in run_ids]],
    )
    return [dict(zip(want, r)) for r in rows]


def build_card(
    store: Store,
    manifest: dict[str, Any],
    repo_id: str,
    *,
    license: str | None = None,
    citation: str | None = None,
    pretty_name: str | None = None,
) -> str:
    """The README.md text: YAML front matter with one config per published table/view, then the card."""
    lic = license or "unknown"
    pretty = pretty_name or f"ctxprior scores: {repo_id.split('/')[-1]}"
    fm = yaml.safe_dump(front_matter(manifest, lic, pretty), sort_keys=False, allow_unicode=True, width=1000)
    published = [e for e in manifest["tables"] if e["files"]]
    empty = [e for e in manifest["tables"] if not e["files"]]
    runs = _runs_rows(store, manifest.get("runs"))
    out: list[str] = ["---", fm.rstrip(), "---", "", f"# {pretty}", ""]
    out += _card_description(store, manifest)
    out += _card_method(runs)
    out += _card_runs(runs)
    out += _card_row_counts(manifest, published, empty)
    out += _card_columns(published)
    out += _card_loading(repo_id, published)
    out += _card_license_citation(lic, license, citation)
    return "\n".join(out)


def _card_description(store: Store, manifest: dict[str, Any]) -> list[str]:
    """Card lines: what the dataset is, then the warehouse's source datasets (when there are any)."""
    out = [
        "Scores of how much language models follow their **context** versus their **prior** "
        "knowledge (persuasion and susceptibility, Du et al. 2024), exported with "
        f"ctxprior {manifest.get('ctxprior_version', __version__)} from a "
        f"ctxprior warehouse (schema v{manifest.get('schema_version')}). Every table of the "
        "warehouse is a config; `v_*` configs are readable views that resolve ids to names.",
        "",
    ]
    if "dataset" in store.table_names():
        ds = store.query("SELECT name, source_format, description FROM dataset ORDER BY dataset_id")
        if ds:
            out += ["## Source datasets", "", "| dataset | format | description |", "|---|---|---|"]
            out += [f"| {_md(n)} | {_md(f)} | {_md(d)} |" for n, f, d in ds]
            out.append("")
    return out


def _card_method(runs: list[dict[str, Any]]) -> list[str]:
    """Card lines: how the scores were computed, with the estimators the runs used."""
    out = ["## How the scores were computed", "", METHOD_TEXT]
    est = sorted({e for r in runs if (e := r.get("estimator"))})
    if est:
        from ..scoring.estimators import registry  # the estimators' own words (loads torch)

        known = registry()
        out += ["Estimators used by the runs in this dataset:", ""]
        out += [f"- `{e}`: {_estimator_text(known.get(e))}" for e in est]
        out.append("")
    out += [
        "The full configuration of each run (every option, the seed, the package version) is in "
        "`run.config_json`.",
        "",
    ]
    return out


def _estimator_text(e) -> str:
    """An estimator's line on the card: what A is (its registry entry), else where to look."""
    return (e.card or e.help) if e is not None else "see the run config (`run.config_json`)"


def _card_runs(runs: list[dict[str, Any]]) -> list[str]:
    """Card lines: the runs as a table and the distinct models they used."""
    out = ["## Runs and models", ""]
    if runs:
        keys = list(runs[0].keys())
        out += ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        out += ["| " + " | ".join(_md(r[k]) for k in keys) + " |" for r in runs]
        models = sorted(
            {(r.get("model"), r.get("model_revision"), r.get("dtype"), r.get("quantization")) for r in runs},
            key=lambda x: tuple("" if v is None else str(v) for v in x),
        )
        out += ["", "Models:", ""]
        out += [
            f"- `{m}` revision `{rev or 'unknown'}`, dtype {dt or 'unknown'}, quantization {q or 'none'}"
            for m, rev, dt, q in models
        ]
    else:
        out.append("No scoring runs are included (dataset tables only).")
    out.append("")
    return out


def _card_row_counts(
    manifest: dict[str, Any], published: list[dict[str, Any]], empty: list[dict[str, Any]]
) -> list[str]:
    """Card lines: rows per published config, then the configs left empty or left out."""
    out = ["## Configs and row counts", "", "| config | kind | rows | description |", "|---|---|---:|---|"]
    out += [
        f"| `{e['name']}` | {e['kind']} | {e['rows']:,} | {_md(table_description(e['name']))} |"
        for e in published
    ]
    out.append("")
    if empty:
        out += [
            "Empty in this warehouse, so not published: " + ", ".join(f"`{e['name']}`" for e in empty) + ".",
            "",
        ]
    if manifest.get("left_out"):
        out += [
            "Left out (heavy per-prompt distributions; publish with `--include-distributions`): "
            + ", ".join(f"`{n}`" for n in manifest["left_out"])
            + ".",
            "",
        ]
    return out


def _card_columns(published: list[dict[str, Any]]) -> list[str]:
    """Card lines: per published config, its description and every column's type and meaning."""
    out = ["## Columns", ""]
    for e in published:
        out += [f"### `{e['name']}`", ""]
        if table_description(e["name"]):
            out += [table_description(e["name"]), ""]
        out += ["| column | type | meaning |", "|---|---|---|"]
        out += [
            f"| `{c['name']}` | {c['type']} | {_md(column_meaning(e['name'], c['name'], e['kind']))} |"
            for c in e["columns"]
        ]
        out.append("")
    return out


def _card_loading(repo_id: str, published: list[dict[str, Any]]) -> list[str]:
    """Card lines: loading the dataset with `datasets`, DuckDB and `ctxprior pull`."""
    ex = next((e["name"] for e in published if e["name"] == "v_susceptibility"), None) or (
        published[0]["name"] if published else "run"
    )
    out = [
        "## Loading",
        "",
        "With 🤗 `datasets`:",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{repo_id}", "{ex}", split="train")',
        "print(ds)",
        "```",
        "",
        "With DuckDB (reads the Parquet files over `hf://`):",
        "",
        "```sql",
        f"SELECT * FROM {literal(f'hf://datasets/{repo_id}/data/{ex}/*.parquet')} LIMIT 10;",
    ]
    if any(e["name"] == "v_susceptibility" for e in published):
        out += [
            "",
            "-- mean susceptibility per model and entity kind",
            "SELECT model, entity_kind, avg(susceptibility) AS mean_chi, count(*) AS n",
            f"FROM {literal(f'hf://datasets/{repo_id}/data/v_susceptibility/*.parquet')}",
            "GROUP BY ALL ORDER BY ALL;",
        ]
    out += [
        "```",
        "",
        "Back into a ctxprior warehouse (ids and types preserved):",
        "",
        "```bash",
        f"ctxprior --db scores.duckdb pull {repo_id}",
        "```",
        "",
        "`manifest.json` lists every file with its row count and sha256.",
        "",
    ]
    return out


def _card_license_citation(lic: str, license: str | None, citation: str | None) -> list[str]:
    """Card lines: the license (``lic``; noted as unset when ``license`` is not given) and what to cite."""
    out = ["## License", ""]
    out.append(
        f"`{lic}`"
        + ("" if license else " (not set by the publisher; pass `--license` to `ctxprior publish`)")
        + "."
    )
    out += ["", "## Citation", ""]
    if citation:
        out += [
            "If you use this dataset, please cite:",
            "",
            "```bibtex" if "@" in citation else "```",
            citation.strip(),
            "```",
            "",
        ]
    out += [
        "The persuasion and susceptibility scores are defined in:",
        "",
        "```bibtex",
        CITATION_DU2024,
        "```",
        "",
    ]
    return out
