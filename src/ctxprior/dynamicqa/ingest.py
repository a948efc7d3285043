"""DynamicQA (Marjanović et al. 2024): read the three CSVs, validate, write in one transaction.

Files (``shared/data/dynamicqa/README.md`` describes every column): ``Static_final.csv``,
``Temporal_final.csv`` (18 columns) and ``Disputable_final.csv`` (10 columns) as in the GitHub
release, or ``static.csv``, ``temporal.csv``, ``disputable.csv`` as on the Hugging Face Hub
(``download_dynamicqa`` fetches those at a pinned revision). They are read with Python's ``csv``
module (108 contexts contain newlines). Columns are matched by name: the ones whose values may be
blank (the stray index, popularity, QIDs, aliases, replace_quality, dir_info) may also be absent
and are then NULL. The unnamed first column is a stray pandas index (not unique in the disputable
file): it is kept as ``source_index`` but rows are keyed on (partition, id).

Core mapping (DESIGN: share entity / answer / relation tables where the data allows):
- static / temporal: relation per PopQA property (name = Wikidata PID, e.g. ``P106``,
  short_name = label, e.g. ``occupation``), shared by both partitions; subject -> entity (uri =
  QID); obj -> answer (uri = QID); the question is the relation's template with the subject
  (query form ``open_0`` = ``Q: What is {entity}'s occupation?\\nA:``; ``closed_0`` adds
  ``Is it {answer}?``); the masked snippet is a per-fact context template with ``{answer}``.
- disputable: questions are generated per fact, so each fact gets its own relation
  ``disputable:<id>`` (short_name ``disputable-<id>``) with its own two query forms; obj is
  swapped in the literal context (at word boundaries, else as a substring like the authors'
  ``str.replace``; or at ``[ENTITY]`` masks when the context has them, as the Hub card
  describes), which is prefixed "This article is about <subj>. " as in the authors' code.
- without ``prop_id`` the property label names the relation; without ``possible_answers`` the
  aliases are just ``obj``.
- replace_name -> answer (uri NULL), referenced by ``dynamicqa_fact.counter_answer_id``.
Context templates are two rows per fact (types ``original`` and ``counter``, ordinal = the fact's
position) with the same text; ``sample.make_sample`` renders them with obj resp. replace_name. Braces in
source text are doubled so ``template.format(entity=..., answer=...)`` is safe.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..digest import sha256_file
from ..errors import UserError
from ..ingest.builder import Assigned, DatasetBuilder
from ..ingest.registry import IngestSource, Param, ingest_source
from ..inputs import check_input
from ..options import DATASET_NAME
from ..storage.store import Store

PARTITIONS = ("static", "temporal", "disputable")
FILES = {"static": "Static_final.csv", "temporal": "Temporal_final.csv", "disputable": "Disputable_final.csv"}
ST_COLUMNS = [
    "",
    "id",
    "subj",
    "prop",
    "obj",
    "subj_id",
    "prop_id",
    "obj_id",
    "s_pop",
    "o_pop",
    "question",
    "possible_answers",
    "num_edits",
    "context",
    "replace_quality",
    "replace_name",
    "s_pop_new",
    "o_pop_new",
]
DP_COLUMNS = [
    "",
    "id",
    "subj",
    "question",
    "context",
    "obj",
    "replace_name",
    "num_edits",
    "dir_info",
    "s_pop",
]
ST_REQUIRED = ["id", "subj", "prop", "obj", "question", "context", "replace_name", "num_edits"]
DP_REQUIRED = ["id", "subj", "question", "context", "obj", "replace_name", "num_edits"]
HUB_FILES = {"static": "static.csv", "temporal": "temporal.csv", "disputable": "disputable.csv"}
HUB_REPO = "copenlu/dynamicqa"
# `main` of the Hub dataset when this was written (README: "Update README.md"); its CSVs are a later
# revision than the GitHub release's Data/*.csv (docs/dynamicqa.md, "Sources").
HUB_REVISION = "82cb85d96a37362fc0a1b238f77126477a550c2f"
MASK = "[ENTITY]"
OPEN_FORM = "Q: {q}\nA:"
CLOSED_FORM = "Q: {q} Is it {{answer}}?\nA:"
DISPUTABLE_PREFIX = "This article is about {subj}. "


def _esc(s: str) -> str:
    return s.replace("{", "{{").replace("}", "}}")


@dataclass
class Row:
    partition: str
    row: int
    index: int | None
    id: int
    subj: str
    question: str
    context: str
    obj: str
    replace_name: str
    num_edits: float
    s_pop: float | None
    prop: str | None = None
    prop_id: str | None = None
    subj_id: str | None = None
    obj_id: str | None = None
    o_pop: float | None = None
    s_pop_new: float | None = None
    o_pop_new: float | None = None
    replace_quality: float | None = None
    dir_info: str | None = None
    aliases: list[str] = field(default_factory=list)
    template: str = ""
    mask_count: int = 0
    mask_kind: str = ""

    @property
    def label(self) -> str:
        """The relation label ``prop``, which every static and temporal row has (not disputable ones)."""
        if self.prop is None:
            raise ValueError(f"{self.partition} data row {self.row + 1} has no relation label (prop)")
        return self.prop


class _Bad(Exception):
    pass


def _num(v: str, col: str, blank_ok: bool) -> float | None:
    """A number, or None for a blank value where ``blank_ok``."""
    return None if blank_ok and v.strip() == "" else _float(v, col)


def _float(v: str, col: str) -> float:
    v = v.strip()
    if v == "":
        raise _Bad(f"column {col} is blank")
    try:
        x = float(v)
    except ValueError:
        raise _Bad(f"column {col}: {v[:40]!r} is not a number") from None
    if x != x:
        raise _Bad(f"column {col} is NaN")
    return x


def _int(v: str, col: str) -> int:
    x = _float(v, col)
    if x != int(x):
        raise _Bad(f"column {col}: {v!r} is not an integer")
    return int(x)


def _text(v: str, col: str) -> str:
    if not v.strip():
        raise _Bad(f"column {col} is blank")
    return v


def _locate(context: str, obj: str) -> tuple[list[tuple[int, int]], str]:
    """Spans of obj in a disputable context: word-boundary matches, else plain substrings."""
    pat = re.compile(r"(?<!\w)" + re.escape(obj) + r"(?!\w)")
    spans = [m.span() for m in pat.finditer(context)]
    if spans:
        return spans, "word_boundary"
    spans, i = [], context.find(obj)
    while i >= 0:
        spans.append((i, i + len(obj)))
        i = context.find(obj, i + len(obj))
    return spans, "substring"


def _check_header(path: Path, header: list[str] | None, partition: str) -> list[str]:
    """The header's column names (BOM removed); required columns present, none twice."""
    expected = DP_COLUMNS if partition == "disputable" else ST_COLUMNS
    required = DP_REQUIRED if partition == "disputable" else ST_REQUIRED
    if header is None:
        raise UserError(f"{path}: empty file; expected a CSV header {','.join(expected)}")
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    missing = [c for c in required if c not in header]
    if missing:
        raise UserError(
            f"{path}: not a DynamicQA {partition} file: missing column(s) {', '.join(missing)}; "
            f"expected header {','.join(expected)!r}"
        )
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise UserError(
            f"{path}: column(s) {', '.join(repr(c) for c in twice)} appear more than once in the header"
        )
    return header


def read_partition(path: Path, partition: str) -> list[Row]:
    """Parse and validate one CSV file; raise UserError naming the file, row and problem."""
    check_input(path)  # never the warehouse (a link of it): ctxprior/inputs.py
    try:
        f = open(path, encoding="utf-8", newline="")  # noqa: SIM115 (closed by the `with f:` below; an OSError here is a one-line error)
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror})") from None
    rows: list[Row] = []
    with f:
        reader = csv.reader(f)
        try:
            header = _check_header(path, next(reader, None), partition)
            for rec in reader:
                if not rec or rec == [""]:
                    continue
                line = reader.line_num
                try:
                    if len(rec) != len(header):
                        raise _Bad(f"{len(rec)} fields, expected {len(header)} (unbalanced quotes?)")
                    rows.append(_parse_row(dict(zip(header, rec)), partition, len(rows)))
                except _Bad as e:
                    raise UserError(f"{path}: data row {len(rows) + 1} (line {line}): {e}") from None
        except csv.Error as e:
            raise UserError(f"{path}: malformed CSV near line {reader.line_num}: {e}") from None
        except UnicodeDecodeError as e:
            raise UserError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    if not rows:
        raise UserError(f"{path}: no data rows")
    _check_keys(path, rows, partition)
    return rows


def _check_keys(path: Path, rows: list[Row], partition: str) -> None:
    """ids unique within the file; one property id per property label."""
    seen: dict[int, int] = {}
    for r in rows:
        if r.id in seen:
            raise UserError(
                f"{path}: id {r.id} occurs in data rows {seen[r.id] + 1} and {r.row + 1}; "
                "ids must be unique within a partition"
            )
        seen[r.id] = r.row
    if partition != "disputable":
        pid_of: dict[str, str | None] = {}
        for r in rows:
            if pid_of.setdefault(r.label, r.prop_id) != r.prop_id:
                raise UserError(
                    f"{path}: relation '{r.prop}' has two property ids ({pid_of[r.label]}, "
                    f"{r.prop_id}) (data row {r.row + 1})"
                )


def _opt_text(d: dict[str, str], col: str) -> str | None:
    """A column that may be absent or blank -> None."""
    return d.get(col, "").strip() or None


def _if_present(d: dict[str, str], col: str) -> str | None:
    """A column that may be absent (-> None) but, when present, is never blank."""
    return _text(d[col], col).strip() if col in d else None


def _fill_template(r: Row, spans: list[tuple[int, int]], kind: str, prefix: str = "") -> None:
    """r.template = prefix + context with {answer} at each span (braces doubled elsewhere)."""
    parts, last = [], 0
    for a, b in spans:
        parts.append(_esc(r.context[last:a]))
        parts.append("{answer}")
        last = b
    parts.append(_esc(r.context[last:]))
    r.template = prefix + "".join(parts).strip()
    r.mask_count, r.mask_kind = len(spans), kind


def _mask_spans(context: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(re.escape(MASK), context)]


def _parse_row(d: dict[str, str], partition: str, row: int) -> Row:
    idx = d.get("", "").strip()
    index = None if idx == "" else _int(idx, "(unnamed index)")
    common: dict[str, Any] = dict(
        partition=partition,
        row=row,
        index=index,
        id=_int(d["id"], "id"),
        subj=_text(d["subj"], "subj").strip(),
        question=_text(d["question"], "question").strip(),
        context=_text(d["context"], "context"),
        obj=_text(d["obj"], "obj"),
        replace_name=_text(d["replace_name"], "replace_name"),
        num_edits=_float(d["num_edits"], "num_edits"),
        s_pop=_num(d.get("s_pop", ""), "s_pop", True),
    )
    if partition == "disputable":
        r = Row(**common, dir_info=_opt_text(d, "dir_info"))
        if MASK in r.context:  # a masked context (the Hub card's description of every partition)
            spans, kind = _mask_spans(r.context), "entity_token"
        else:
            spans, kind = _locate(r.context, r.obj)
            if not spans:
                raise _Bad(f"obj {r.obj!r} does not occur in the context")
        _fill_template(r, spans, kind, _esc(DISPUTABLE_PREFIX.format(subj=r.subj)))
        r.aliases = [r.obj]
        return r
    r = Row(
        **common,
        prop=_text(d["prop"], "prop").strip(),
        prop_id=_if_present(d, "prop_id"),
        subj_id=_if_present(d, "subj_id"),
        obj_id=_if_present(d, "obj_id"),
        o_pop=_num(d.get("o_pop", ""), "o_pop", True),
        s_pop_new=_num(d.get("s_pop_new", ""), "s_pop_new", True),
        o_pop_new=_num(d.get("o_pop_new", ""), "o_pop_new", True),
        replace_quality=_num(d.get("replace_quality", ""), "replace_quality", True),
    )
    r.aliases = _aliases(r.obj, d.get("possible_answers"))
    if MASK not in r.context:
        raise _Bad(f"context has no {MASK} mask")
    _fill_template(r, _mask_spans(r.context), "entity_token")
    return r


def _aliases(obj: str, raw: str | None) -> list[str]:
    """obj first, then the possible_answers JSON list (when the column exists), without repeats."""
    if raw is None:
        return [obj]
    try:
        aliases = json.loads(raw)
    except json.JSONDecodeError:
        raise _Bad(f"possible_answers {raw[:60]!r} is not a JSON list") from None
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases) or not aliases:
        raise _Bad("possible_answers is not a non-empty JSON list of strings")
    if obj not in aliases:
        aliases = [obj] + aliases
    return list(dict.fromkeys(aliases))


def _question_template(rows: list[Row], path_of: dict[str, Path]) -> dict[str, str]:
    """Per relation: the question with the subject as {} (majority), checked on every row."""
    cands: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        i = r.question.find(r.subj)
        if i < 0:
            raise UserError(
                f"{path_of[r.partition]}: data row {r.row + 1}: the question {r.question!r} "
                f"does not contain the subject {r.subj!r}"
            )
        cands[r.label][r.question[:i] + "\x00" + r.question[i + len(r.subj) :]] += 1
    tpl = {p: c.most_common(1)[0][0] for p, c in cands.items()}
    for r in rows:
        if tpl[r.label].replace("\x00", r.subj) != r.question:
            raise UserError(
                f"{path_of[r.partition]}: data row {r.row + 1}: question {r.question!r} does "
                f"not follow relation '{r.prop}' template {tpl[r.label].replace(chr(0), '{}')!r}"
            )
    return tpl


def partition_paths(directory: str | Path) -> dict[str, Path]:
    """The three files of a DynamicQA folder: GitHub names (``Static_final.csv``), else Hub names."""
    d = Path(directory)
    if not d.is_dir():
        raise UserError(
            f"{d}: not a directory; pass the folder holding {', '.join(FILES.values())} "
            f"(or {', '.join(HUB_FILES.values())})"
        )
    paths: dict[str, Path] = {}
    for p in PARTITIONS:
        found = [d / n for n in (FILES[p], HUB_FILES[p]) if (d / n).is_file()]
        if not found:
            raise UserError(
                f"{d / FILES[p]}: missing; a DynamicQA folder holds {', '.join(FILES.values())} "
                f"(GitHub release) or {', '.join(HUB_FILES.values())} (Hugging Face Hub)"
            )
        paths[p] = found[0]
    return paths


def read_dynamicqa(directory: str | Path) -> tuple[dict[str, list[Row]], dict[str, Path]]:
    """Parse and validate the three files of ``directory`` (nothing is written)."""
    paths = partition_paths(directory)
    return {p: read_partition(path, p) for p, path in paths.items()}, paths


def download_dynamicqa(revision: str | None = None) -> tuple[Path, str]:
    """Fetch static.csv, temporal.csv, disputable.csv of ``copenlu/dynamicqa`` at ``revision``
    (default the pinned ``HUB_REVISION``) into the Hugging Face cache: (folder, provenance string)."""
    from ..ingest.sources import endpoint, hub_file

    rev = revision or HUB_REVISION
    names = list(HUB_FILES.values())
    todo = (
        f"download {', '.join(names[:-1])} and {names[-1]} from {endpoint()}/datasets/{HUB_REPO}/tree/{rev} "
        "into one folder DIR (or use the GitHub release's Data/ folder) and run `ctxprior ingest dynamicqa DIR`"
    )
    got = [hub_file(HUB_REPO, f, rev, todo=todo) for f in names]
    commits = {c for _, c in got}
    if len(commits) > 1:
        raise UserError(
            f"{HUB_REPO}@{rev}: the revision moved while downloading ({', '.join(sorted(commits))}); "
            "pass --revision with one commit"
        )
    return got[0][0].parent, f"hf://datasets/{HUB_REPO}@{got[0][1]}"


def load_dynamicqa(
    directory: str | Path | None = None, revision: str | None = None
) -> tuple[Path, str, tuple]:
    """The folder to read (``directory``, or the Hub files at ``revision`` when it is None), its
    provenance and its parsed, validated rows: (folder, origin, ``read_dynamicqa(folder)``)."""
    if directory is not None and revision is not None:
        raise UserError(
            f"--revision {revision}: only applies to the Hub download; drop it or drop the folder"
        )
    if directory is None:
        folder, origin = download_dynamicqa(revision)
    else:
        folder, origin = Path(directory), str(Path(directory).resolve())
    return folder, origin, read_dynamicqa(folder)


def ingest_dynamicqa(
    store: Store,
    directory: str | Path,
    name: str = "dynamicqa",
    origin: str | None = None,
    parsed: tuple[dict[str, list[Row]], dict[str, Path]] | None = None,
) -> dict[str, Any]:
    """Validate the three files fully (or take ``parsed`` = ``read_dynamicqa(directory)``), then
    write every row in one transaction. ``origin`` (default: the folder) is the recorded source.

    The shared tables go through ``ingest.builder.DatasetBuilder`` (ids in a fixed order: same
    input, same ids); ``dynamicqa_fact`` / ``dynamicqa_alias`` are written beside them."""
    parts, paths = parsed or read_dynamicqa(directory)
    if store.scalar("SELECT count(*) FROM dataset WHERE name = ?", [name]):
        raise UserError(f"a dataset named '{name}' already exists in {store.path}; pick another with --name")
    relations, rel_facts = _relations(parts, _question_template(parts["static"] + parts["temporal"], paths))
    hashes = {p: sha256_file(paths[p]) for p in PARTITIONS}
    b = DatasetBuilder(
        name,
        "dynamicqa",
        source_path=origin or str(Path(directory).resolve()),
        source_sha256=hashlib.sha256(
            "".join(f"{FILES[p]} {hashes[p]}\n" for p in PARTITIONS).encode()
        ).hexdigest(),
        description=(
            "DynamicQA (Marjanović et al. 2024, arXiv 2407.17023): static, temporal and disputable "
            "facts with context snippets. Files: "
            + ", ".join(f"{paths[p].name} sha256 {hashes[p]}" for p in PARTITIONS)
        ),
        separator="",  # its sampled contexts end in "\n" (dynamicqa/sample.py), as the paper's
    )
    facts = _fill(b, relations, rel_facts)
    with store.transaction():
        written, assigned = b.write_ids(store)
        n_aliases = _write_dynamicqa_rows(store, assigned, facts)
    counts = Counter(r.partition for rows in parts.values() for r in rows)
    return {
        **{k: written[k] for k in ("dataset_id", "dataset", "facts", "relations", "entities", "answers")},
        "aliases": n_aliases,
        "query_forms": written["query_forms"],
        "context_templates": written["context_templates"],
        **{f"{p}_facts": counts[p] for p in PARTITIONS},
    }


def _prepare_source(directory=None, name: str = "dynamicqa", revision: str | None = None) -> dict:
    """Downloaded (without ``directory``) and validated before the warehouse is opened."""
    path, origin, parsed = load_dynamicqa(directory, revision)
    return {"path": path, "name": name, "origin": origin, "parsed": parsed}


def _load_source(store: Store, path: Path, name: str, origin: str, parsed: tuple) -> dict[str, Any]:
    return {**ingest_dynamicqa(store, path, name=name, origin=origin, parsed=parsed), "source": origin}


def _source_lines(s: dict[str, Any]) -> list[str]:
    return [
        f"ingested dataset '{s['dataset']}': {s['facts']} facts (static {s['static_facts']}, "
        f"temporal {s['temporal_facts']}, disputable {s['disputable_facts']}), "
        f"{s['relations']} relations, {s['entities']} entities, {s['answers']} answers, "
        f"{s['aliases']} aliases, {s['query_forms']} query forms, "
        f"{s['context_templates']} context templates",
        f"source: {s['source']}",
    ]


SOURCE = ingest_source(
    IngestSource(
        name="dynamicqa",
        help="Load DynamicQA from DIRECTORY (Static_final.csv, Temporal_final.csv, Disputable_final.csv as in "
        "the GitHub release, or static.csv, temporal.csv, disputable.csv as on the Hub); without DIRECTORY, "
        "download copenlu/dynamicqa from the Hugging Face Hub at a pinned revision (cached). Loads facts, "
        "aliases, replacement objects, edit counts, popularity, questions and masked contexts.",
        params=(
            Param("directory", required=False, directory=True),
            Param(
                "name", "--name", "Dataset name in the warehouse.", default="dynamicqa", pattern=DATASET_NAME
            ),
            Param(
                "revision",
                "--revision",
                "Without DIRECTORY: the Hub revision (commit, branch or tag) of "
                "copenlu/dynamicqa to download. Default: the pinned commit recorded in "
                "ctxprior.dynamicqa.ingest.HUB_REVISION.",
                metavar="REV",
            ),
        ),
        prepare=_prepare_source,
        load=_load_source,
        lines=_source_lines,
    )
)


def _relations(
    parts: dict[str, list[Row]], qtpl: dict[str, str]
) -> tuple[dict[str, dict], dict[str, list[Row]]]:
    """Relations in file order ({name: row}) and their facts: one per PopQA property (Wikidata PID,
    else the label) for static/temporal, one per fact (``disputable:<id>``) for disputable."""
    st_rows = parts["static"] + parts["temporal"]
    relations: dict[str, dict] = {}
    rel_facts: dict[str, list[Row]] = defaultdict(list)
    use_pid = all(r.prop_id for r in st_rows)  # else the label names the relation
    for r in st_rows:
        rn = r.prop_id if use_pid and r.prop_id else r.label  # use_pid: every row has a prop_id
        if rn not in relations:
            relations[rn] = {"name": rn, "short_name": r.prop, "tpl": qtpl[r.label]}
        rel_facts[rn].append(r)
    for r in parts["disputable"]:
        rn = f"disputable:{r.id}"
        q = _esc(r.question)
        m = re.search(r"(?<!\w)" + re.escape(_esc(r.subj)) + r"(?!\w)", q)
        qt = q[: m.start()] + "{entity}" + q[m.end() :] if m else q
        relations[rn] = {"name": rn, "short_name": f"disputable-{r.id}", "qtpl": qt}
        rel_facts[rn].append(r)
    return relations, rel_facts


def _fill(
    b: DatasetBuilder, relations: dict[str, dict], rel_facts: dict[str, list[Row]]
) -> list[tuple[Row, int]]:
    """Each relation with its open and closed query form, its facts (subject -> entity, obj ->
    answer, category = partition) and two context templates per fact (original, counter). Returns
    each fact's source row and its counter answer (builder index), in fact order."""
    out: list[tuple[Row, int]] = []
    for rn, rel in relations.items():
        rr = b.add_relation(rn)
        rr.short_name = rel["short_name"]
        qt = rel["qtpl"] if "qtpl" in rel else _esc(rel["tpl"]).replace("\x00", "{entity}")
        rr.query_forms += [("open", 0, OPEN_FORM.format(q=qt)), ("closed", 0, CLOSED_FORM.format(q=qt))]
        for pos, r in enumerate(rel_facts[rn]):
            e, a, ca = (
                b.entity(r.subj, "real", r.subj_id),
                b.answer(r.obj, r.obj_id),
                b.answer(r.replace_name),
            )
            rr.facts.append(
                {"entity": e, "answer": a, "kind": "real", "position": pos, "category": r.partition}
            )
            rr.context_templates += [("original", pos, r.template), ("counter", pos, r.template)]
            out.append((r, ca))
    return out


def _dynamicqa_fact_row(r: Row, fid: int, ds_id: int, counter_answer_id: int) -> dict:
    """The ``dynamicqa_fact`` row of one source row (everything the core tables do not hold)."""
    return {
        "fact_id": fid,
        "dataset_id": ds_id,
        "partition": r.partition,
        "source_id": r.id,
        "source_row": r.row,
        "source_index": r.index,
        "relation_label": r.prop,
        "relation_qid": r.prop_id,
        "subject_qid": r.subj_id,
        "object_qid": r.obj_id,
        "counter_answer_id": counter_answer_id,
        "num_edits": r.num_edits,
        "s_pop": r.s_pop,
        "o_pop": r.o_pop,
        "s_pop_new": r.s_pop_new,
        "o_pop_new": r.o_pop_new,
        "replace_quality": r.replace_quality,
        "dir_info": r.dir_info,
        "question": r.question,
        "context": r.context,
        "context_template": r.template,
        "mask_count": r.mask_count,
        "mask_kind": r.mask_kind,
    }


_TYPES = {
    **{
        k: pa.int32()
        for k in ("fact_id", "dataset_id", "counter_answer_id", "source_row", "mask_count", "ordinal")
    },
    "source_id": pa.int64(),
    "source_index": pa.int64(),
    **{k: pa.float64() for k in ("num_edits", "s_pop", "o_pop", "s_pop_new", "o_pop_new", "replace_quality")},
}


def _write_dynamicqa_rows(store: Store, a: Assigned, facts: list[tuple[Row, int]]) -> int:
    """``dynamicqa_fact`` and ``dynamicqa_alias`` rows (fact and answer ids as the builder assigned
    them: ``facts`` is in fact order); returns the number of aliases."""
    fact_ids = [f for rel in a.fact for f in rel]
    rows = [_dynamicqa_fact_row(r, fact_ids[i], a.dataset, a.answer[ca]) for i, (r, ca) in enumerate(facts)]
    aliases = [
        {"fact_id": fact_ids[i], "ordinal": j, "alias": al}
        for i, (r, _) in enumerate(facts)
        for j, al in enumerate(r.aliases)
    ]
    for table, tr in (("dynamicqa_fact", rows), ("dynamicqa_alias", aliases)):
        if tr:
            store.insert_arrow(
                table, pa.table({k: pa.array([x[k] for x in tr], _TYPES.get(k, pa.string())) for k in tr[0]})
            )
    return len(aliases)
