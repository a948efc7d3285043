"""`ctxprior build-dataset`: a dataset built from a knowledge-graph dump (Du et al. 2024, App. C).

Inputs: triple files in any of the formats of ``ctxprior.covariates.triples`` (plain or gzip, any
size), optional separate label files, and a relations file (``ctxprior.ingest.kg_relations``).
DuckDB streams the files (a temporary database that spills to disk); Python only sees the chosen
rows. Steps (SQL in ``ingest/sql/kg_*.sql``):

1. pass 1 keeps the relations' triples, the labels (rdfs:label, skos:prefLabel, schema:name, in
   that order of preference) in --lang or without a language tag, and the rdf:type triples of the
   filter classes; it counts lines and malformed lines per file (first line numbers kept).
2. pairs: (entity, answer) = (subject, object), or (object, subject) for a reverse relation; the
   entity must be an IRI, the answer an IRI or a literal; the class filters apply.
3. pass 2 counts the total degree of every entity, IRI answer and namesake: the distinct triples of
   TRIPLES with it as subject or object (the `covariates kg-degree` definition), and collects their
   rdf:type classes.
4. per relation, among the (entity, answer) pairs --require-label allows (default both: the
   authors drop facts whose entity or IRI answer has no label), the top --entities-per-relation
   entities by total degree, then by delta(e,q), then by md5(seed, IRI); each gets one answer
   (--answer-choice random, the authors' rule: md5(seed, entity, answer) order; degree: a named
   one first, then the highest total degree, then the chosen language, then md5) and one class
   (its entity-side filter class, else its most common rdf:type class in the relation).
5. the rows go through a ``DatasetBuilder`` and are written like an ingested yago_qec.json
   (fact degrees uri_degree = total degree, predicate_degree = delta(e,q), namesake_degree,
   namesake_num_uris), with every input's sha256 (``dataset_source``) and the options and the
   relations file (``dataset_build``), in one transaction.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import unquote

from ..covariates.triples import DEFAULT_PREFIXES, RDF_TYPE, TripleFiles, true_line
from ..digest import sha256_file
from ..errors import UserError
from ..sqlfiles import literal, read_sql, split_statements
from .builder import DatasetBuilder
from .kg_options import ANSWER_CHOICE, BUILD_OPTIONS, DEFAULTS, REQUIRE_LABEL  # noqa: F401  (re-exported)
from .kg_relations import RelationsFile, read_relations

LABEL_PREDICATES = (
    DEFAULT_PREFIXES["rdfs"] + "label",
    DEFAULT_PREFIXES["skos"] + "prefLabel",
    DEFAULT_PREFIXES["schema"] + "name",
)
PKG = "ctxprior.ingest"
# --require-label: both (the authors: a fact whose entity or IRI answer has no label in --lang is
# dropped; literal answers are their own names), entity (only the entity needs one), none (IRIs
# without a label are named by their last segment). --answer-choice: random (the authors: one of
# the entity's answers at random, here in md5(seed, entity, answer) order) or degree (a named
# answer first, then the highest total degree, then one in --lang, then md5). See kg_select.sql.


@dataclass
class BuildOptions:
    """Everything besides the inputs that defines the built dataset (stored in dataset_build)."""

    lang: str = DEFAULTS["lang"]
    entities_per_relation: int = DEFAULTS["entities_per_relation"]
    seed: int = DEFAULTS["seed"]
    fmt: str = DEFAULTS["fmt"]
    max_malformed: float = DEFAULTS["max_malformed"]
    require_label: str = DEFAULTS["require_label"]
    answer_choice: str = DEFAULTS["answer_choice"]
    label_predicates: tuple[str, ...] = LABEL_PREDICATES

    def check(self) -> None:
        if isinstance(self.require_label, bool):  # the flag of earlier versions: entities only, or none
            self.require_label = "entity" if self.require_label else "none"
        from ..options import check_options

        check_options(BUILD_OPTIONS, asdict(self))  # the declared checks (kg_options.py)
        if not re.fullmatch(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*", self.lang or ""):
            raise UserError(f"--lang {self.lang!r}: expected a language tag such as en, de or pt-br")
        self.lang = self.lang.lower()


@dataclass
class KgRows:
    """What the SQL chose, ready for the builder, and the counts for the report."""

    facts: list[dict]
    classes: list[tuple[int, str, str, float]]
    files: list[dict]
    relations: list[dict]
    stats: dict[str, Any] = field(default_factory=dict)


def build_dataset(
    open_wh: Callable[..., Any],
    triples: list[str],
    relations: str,
    name: str,
    labels: list[str] | tuple[str, ...] = (),
    options: BuildOptions | None = None,
    progress: bool | None = None,
    db_path: str | None = None,
) -> dict[str, Any]:
    """Validate the inputs, read the KG (no warehouse held meanwhile), then write the dataset in
    one transaction. ``open_wh(read_only=..., create=...)`` opens the warehouse; with its path in
    ``db_path`` a taken dataset name is refused before the KG is read (else only at write time).
    Returns a report."""
    opts = options or BuildOptions()
    opts.check()
    if not name or not name.strip():
        raise UserError("--name: give the dataset a name")
    spec = read_relations(relations)
    for f in [*triples, *labels]:
        if not os.path.exists(f):
            raise UserError(f"{f}: no such file or folder")
    if db_path is not None and os.path.exists(db_path):
        _check_name_free(open_wh, name)
    hasher = _Hasher()
    try:
        kg = read_kg(triples, labels, spec, opts, hasher, progress)
        builder = _to_builder(name, spec, kg)
        shas = hasher.result()
    finally:
        hasher.stop()
    with open_wh(read_only=False) as store:
        stats = _write(store, builder, spec, kg, opts, shas)
    return {**stats, "files": kg.files, "per_relation": kg.relations, **kg.stats}


def _check_name_free(open_wh: Callable[..., Any], name: str) -> None:
    """Fail fast (before reading the KG) when the dataset name is taken."""
    with open_wh(read_only=True, create=False) as store:
        if "dataset" in store.table_names() and store.scalar(
            "SELECT count(*) FROM dataset WHERE name = ?", [name]
        ):
            raise UserError(
                f"a dataset named '{name}' already exists in {store.path}; "
                "pick another with --name (or drop it first)"
            )


class _Hasher:
    """sha256 of the input files in a background thread while DuckDB reads them."""

    def __init__(self):
        self._files: list[str] = []
        self._out: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, files: list[str]) -> None:
        self._files = list(dict.fromkeys(files))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for f in self._files:
            if self._stop.is_set():
                return
            self._out[f] = sha256_file(f)

    def result(self) -> dict[str, str]:
        if self._thread is not None:
            self._thread.join()
        return dict(self._out)

    def stop(self) -> None:
        self._stop.set()


# -- reading the KG ---------------------------------------------------------------------------


def read_kg(
    triples: list[str],
    labels: list[str] | tuple[str, ...],
    spec: RelationsFile,
    opts: BuildOptions,
    hasher: _Hasher | None = None,
    progress: bool | None = None,
) -> KgRows:
    """Run the passes of the module docstring in a temporary DuckDB database; return the rows."""
    import duckdb

    remove_stale_build_dirs()
    tmp = tempfile.mkdtemp(prefix=f"{BUILD_DIR_PREFIX}{os.getpid()}-")
    con = duckdb.connect(os.path.join(tmp, "build.duckdb"))
    try:
        with _signals_stop(con):
            return _read(con, tmp, triples, labels, spec, opts, hasher, progress)
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _read(
    con,
    tmp: str,
    triples: list[str],
    labels: list[str] | tuple[str, ...],
    spec: RelationsFile,
    opts: BuildOptions,
    hasher: _Hasher | None,
    progress: bool | None,
) -> KgRows:
    """The body of ``read_kg`` on the temporary database ``con`` in folder ``tmp``."""
    con.execute(f"SET temp_directory = {literal(os.path.join(tmp, 'spill'))}")
    for stmt in split_statements(read_sql(PKG, "sql/kg_session.sql")):
        con.execute(stmt)
    tf = TripleFiles(con, list(triples), opts.fmt)
    lf = TripleFiles(con, list(labels), opts.fmt) if labels else None
    both = set(tf.files) & set(lf.files if lf else [])
    if both:
        raise UserError(
            f"{sorted(both)[0]}: given both as TRIPLES and as --labels; its labels are read "
            "from TRIPLES anyway, so drop it from --labels"
        )
    if hasher is not None:
        hasher.start([*tf.files, *(lf.files if lf else []), spec.path])
    t0 = time.perf_counter()
    _setup(con, spec, opts)
    files = _pass1(con, tf, lf, spec, opts, progress)
    t1 = time.perf_counter()
    rel_stats = _prepare(con, spec, files, opts)
    con.execute("SET preserve_insertion_order = false")  # only pass 1's line numbers need the order
    _pass2(con, tf, progress)
    t2 = time.perf_counter()
    facts, classes = _select(con, opts)
    facts, n_unnamed = _named(facts)
    _check_chosen(spec, facts, opts)
    n_lines = sum(f["n_lines"] for f in files if f["role"] == "triples")
    seconds = time.perf_counter() - t0
    stats = {
        "n_lines": n_lines,
        "n_triples": n_lines - sum(f["n_malformed"] for f in files if f["role"] == "triples"),
        "n_malformed": sum(f["n_malformed"] for f in files),
        "seconds": seconds,
        "seconds_pass1": t1 - t0,
        "seconds_pass2": t2 - t1,
        "lines_per_second": n_lines / max(seconds, 1e-9),
        "n_unusable_names": n_unnamed,
    }
    _count_chosen(rel_stats, facts)
    return KgRows(facts=facts, classes=classes, files=files, relations=rel_stats, stats=stats)


# -- the temporary folder ---------------------------------------------------------------------

BUILD_DIR_PREFIX = "ctxprior-build-"  # + <pid>-<random>, in $TMPDIR


def remove_stale_build_dirs(root: str | None = None) -> list[str]:
    """Remove the temporary folders of builds whose process is gone (killed, even by SIGKILL);
    returns them. A folder of a running build (its pid alive) is left alone."""
    root = root or tempfile.gettempdir()
    gone = []
    for d in os.listdir(root) if os.path.isdir(root) else []:
        m = re.fullmatch(re.escape(BUILD_DIR_PREFIX) + r"(\d+)-\w+", d)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(root, d), ignore_errors=True)
            gone.append(os.path.join(root, d))
    return gone


def _alive(pid: int) -> bool:
    from ..storage.procs import alive  # the one liveness rule

    return alive(pid)


@contextmanager
def _signals_stop(con):
    """SIGTERM and Ctrl-C stop the build at once, even inside a long DuckDB statement: the signal
    wakes a watcher thread (signal.set_wakeup_fd) that interrupts the connection, the statement
    fails, every ``finally`` runs (the temporary folder is removed), and a KeyboardInterrupt
    comes out. Only in the main thread (signal handlers live there)."""
    import select
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    seen: list[int] = []
    done = threading.Event()

    def handler(signum, frame):
        seen.append(signum)

    def watch():
        while not done.is_set():
            if select.select([r], [], [], 0.2)[0]:
                os.read(r, 64)
            if seen:
                con.interrupt()

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    old_fd = signal.set_wakeup_fd(w)
    th = threading.Thread(target=watch, daemon=True)
    th.start()
    try:
        yield
        if seen:
            raise KeyboardInterrupt
    except Exception:
        if seen:
            raise KeyboardInterrupt from None
        raise
    finally:
        done.set()
        th.join()
        signal.set_wakeup_fd(old_fd)
        for sig, h in old.items():
            signal.signal(sig, h)
        os.close(r)
        os.close(w)


def _setup(con, spec: RelationsFile, opts: BuildOptions) -> None:
    """Temp tables describing the relations, their class filters and the label predicates."""
    for stmt in split_statements(read_sql(PKG, "sql/kg_setup.sql")):
        con.execute(stmt)
    con.executemany(
        "INSERT INTO _kgb_rel VALUES (?, ?, ?)",
        [[i, r.predicate, r.reverse] for i, r in enumerate(spec.relations)],
    )
    rows = [
        [i, role, c, j]
        for i, r in enumerate(spec.relations)
        for role, cs in (("subject", r.subject_classes), ("object", r.object_classes))
        for j, c in enumerate(cs)
    ]
    if rows:
        con.executemany("INSERT INTO _kgb_rel_class VALUES (?, ?, ?, ?)", rows)
    con.executemany(
        "INSERT INTO _kgb_label_pred VALUES (?, ?)", [[p, i] for i, p in enumerate(opts.label_predicates)]
    )


def _pass1(
    con,
    tf: TripleFiles,
    lf: TripleFiles | None,
    spec: RelationsFile,
    opts: BuildOptions,
    progress: bool | None,
) -> list[dict]:
    """Keep edges, labels and class triples in _kgb_pick; return per-file line counts."""
    rejected: dict[str, list[tuple[int, str]]] = {}
    for role, files in (("triples", tf), ("labels", lf)):
        if files is None:
            continue
        sql = read_sql(PKG, "sql/kg_pick.sql").format(triples=files.sql(line_numbers=True))
        params = {"labels_only": role == "labels", "lang_tag": '"@' + opts.lang, "rdf_type": RDF_TYPE}
        _run(con, files, f"INSERT INTO _kgb_pick {sql}", f"pass 1: reading {role}", progress, params)
        rejected.update(files.rejected())
    out = []
    for role, files in (("triples", tf), ("labels", lf)):
        if files is not None:
            out += [_file_stats(con, f, role, files, rejected.get(f, [])) for f in files.files]
    _check_malformed(out, opts)
    return out


def _file_stats(con, path: str, role: str, files: TripleFiles, rejected: list[tuple[int, str]]) -> dict:
    """Lines and malformed lines of one file; a line DuckDB could not read as text (``rejected``:
    not UTF-8, ...) is a malformed line too, and the line numbers count it."""
    n, bad, lines = con.execute(read_sql(PKG, "sql/kg_file_stats.sql"), [path]).fetchone()
    fmt = next(k for k, v in files.by_format.items() if path in v)
    rej = sorted(line for line, _ in rejected)
    first = sorted([*rej, *(true_line(int(x), rej) for x in (lines or []))])[:5]
    return {
        "path": path,
        "role": role,
        "format": fmt,
        "n_lines": int(n) + len(rej),
        "n_malformed": int(bad) + len(rej),
        "malformed_lines": first,
        "n_not_utf8": sum(kind == "INVALID ENCODING" for _, kind in rejected),
    }


def _check_malformed(files: list[dict], opts: BuildOptions) -> None:
    """Refuse a file with no triple at all, or more malformed lines than --max-malformed allows."""
    for f in files:
        if f["n_lines"] and f.get("n_not_utf8", 0) == f["n_lines"]:
            raise UserError(
                f"{f['path']}: not UTF-8 text (no line of {f['n_lines']} is); RDF dumps are UTF-8, "
                "so convert it first, e.g. iconv -f latin1 -t utf-8"
            )
        if f["n_lines"] and f["n_malformed"] == f["n_lines"]:
            raise UserError(
                f"{f['path']}: no line parsed as a {f['format']} triple ({f['n_lines']} lines, "
                f"e.g. line {f['malformed_lines'][0]}); check --format"
            )
    n = sum(f["n_lines"] for f in files)
    bad = sum(f["n_malformed"] for f in files)
    if bad > opts.max_malformed * n:
        where = "; ".join(
            f"{os.path.basename(f['path'])}: {f['n_malformed']} ({line_list(f)})"
            for f in files
            if f["n_malformed"]
        )
        raise UserError(
            f"{bad} of {n} lines are not triples ({bad / max(n, 1):.2%}, more than --max-malformed "
            f"{opts.max_malformed:g}): {where}; fix the files or raise --max-malformed"
        )


def line_list(f: dict) -> str:
    """'line 7' / 'lines 7, 9, ...' for a file's first malformed lines (and how many are not UTF-8)."""
    nums = ", ".join(map(str, f["malformed_lines"]))
    more = ", ..." if f["n_malformed"] > len(f["malformed_lines"]) else ""
    utf8 = f"; {f['n_not_utf8']} not UTF-8" if f.get("n_not_utf8") else ""
    return (f"line {nums}" if f["n_malformed"] == 1 else f"lines {nums}{more}") + utf8


def _prepare(con, spec: RelationsFile, files: list[dict], opts: BuildOptions) -> list[dict]:
    """Edges, labels, classes, pairs and the IRIs of pass 2; refuse a relation without pairs."""
    sql = read_sql(PKG, "sql/kg_prepare.sql").format(
        rdf_type=literal(RDF_TYPE), lang_tag=literal('"@' + opts.lang)
    )
    for stmt in split_statements(sql):
        con.execute(stmt)
    counts = dict(
        ((rid, kind), n)
        for rid, kind, n in con.execute(read_sql(PKG, "sql/kg_relation_counts.sql")).fetchall()
    )
    n_triples = sum(f["n_lines"] - f["n_malformed"] for f in files if f["role"] == "triples")
    out = []
    for i, r in enumerate(spec.relations):
        n_edges, n_pairs = counts.get((i, "triples"), 0), counts.get((i, "pairs"), 0)
        where = f"{spec.given}: relations[{i}] ({r.short_name})"
        if not n_edges:
            raise UserError(
                f"{where}: predicate <{r.predicate}> is not in the triple files ({n_triples} triples "
                "read); check its IRI and prefixes against the dump"
            )
        if not n_pairs:
            cls = ", ".join(f"<{c}>" for c in r.subject_classes + r.object_classes)
            why = f"whose subject/object have the classes {cls}" if cls else "with an IRI entity"
            raise UserError(
                f"{where}: <{r.predicate}> has {n_edges} triples but none {why}; "
                "check the class filters (direct rdf:type triples must be in the files)"
            )
        out.append(
            {
                "relation": r.relation_id,
                "name": r.short_name,
                "n_triples": n_edges,
                "n_pairs": n_pairs,
                "n_candidates": counts.get((i, "entities"), 0),
            }
        )
    return out


def _pass2(con, tf: TripleFiles, progress: bool | None) -> None:
    sql = read_sql(PKG, "sql/kg_degrees.sql").format(triples=tf.sql(), rdf_type=literal(RDF_TYPE))
    _run(con, tf, f"CREATE TEMP TABLE _kgb_deg AS {sql}", "pass 2: counting degrees", progress)


def _run(con, files: TripleFiles, sql: str, desc: str, progress: bool | None, params=None) -> None:
    """Execute a long statement with a tqdm bar on stderr fed by DuckDB's query progress."""
    from tqdm import tqdm

    bar = tqdm(
        total=100,
        desc=desc,
        unit="%",
        disable=None if progress is None else not progress,
        bar_format="{l_bar}{bar}| {elapsed}",
    )
    done = threading.Event()

    def poll():
        while not done.wait(0.5):
            p = con.query_progress()
            if p >= 0:
                bar.n = min(100.0, round(p, 1))
                bar.refresh()

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    try:
        files.run(sql, params=params)
        bar.n = 100
    finally:
        done.set()
        th.join()
        bar.close()


def _select(con, opts: BuildOptions) -> tuple[list[dict], list[tuple[int, str, str, float]]]:
    """The chosen facts (one dict per fact, in relation and rank order) and the class fractions."""
    con.execute(
        read_sql(PKG, "sql/kg_select.sql").format(
            k=literal(int(opts.entities_per_relation)),
            seed=literal(f"{int(opts.seed)} "),
            lang_tag=literal('"@' + opts.lang),
            require_label=literal(opts.require_label),
            answer_choice=literal(opts.answer_choice),
        )
    )
    cur = con.execute("SELECT * FROM _kgb_chosen ORDER BY rid, position")
    cols = [d[0] for d in cur.description]
    facts = [dict(zip(cols, row)) for row in cur.fetchall()]
    classes = [
        (int(r), role, c, float(f))
        for r, role, c, f in con.execute(read_sql(PKG, "sql/kg_classes.sql")).fetchall()
    ]
    return facts, classes


def _check_chosen(spec: RelationsFile, facts: list[dict], opts: BuildOptions) -> None:
    """With --require-label both / entity a relation may end up empty: refuse it (sampling would fail later)."""
    have = {f["rid"] for f in facts}
    what = {"both": "fact has an entity and an answer with a label", "entity": "entity has a label"}
    for i, r in enumerate(spec.relations):
        if i not in have:
            raise UserError(
                f"{spec.given}: relations[{i}] ({r.short_name}): no {what[opts.require_label]} in "
                f"'{opts.lang}' (--require-label {opts.require_label}); use --require-label none, "
                "drop the relation, or add --labels files"
            )


def _count_chosen(rel_stats: list[dict], facts: list[dict]) -> None:
    for i, r in enumerate(rel_stats):
        mine = [f for f in facts if f["rid"] == i]
        r["n_entities"] = len(mine)
        r["n_unlabelled_entities"] = sum(f["entity_label"] is None for f in mine)
        r["n_unlabelled_answers"] = sum(f["answer_label"] is None and not f["is_literal"] for f in mine)
        degs = [f["total_degree"] for f in mine]
        r["total_degree_range"] = [min(degs), max(degs)] if degs else None


# -- names ------------------------------------------------------------------------------------

MAX_NAME_CHARS = 100  # as the fakes screening (ctxprior.fakes.parse.MAX_CHARS)
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_problem(name: str) -> str | None:
    """Why a label, literal answer or IRI local name cannot be an entity / answer name (None: it
    can): blank, over 100 characters, a control character (NUL, tab, newline, ...) or a
    bidirectional control (U+202E, ...). kg_prepare.sql applies the same rule to labels."""
    import unicodedata

    if not name.strip():
        return "blank"
    if len(name) > MAX_NAME_CHARS:
        return f"over {MAX_NAME_CHARS} characters"
    if any(c in _BIDI or unicodedata.category(c) == "Cc" for c in name):
        return "a control character"
    return None


def _named(facts: list[dict]) -> tuple[list[dict], int]:
    """The chosen facts with their entity and answer names (label, else the IRI's local name; a
    literal answer's text); a fact whose entity or answer has no usable name is left out, and the
    positions of its relation close up. Returns the facts and how many were left out."""
    out: list[dict] = []
    dropped = 0
    pos: dict[Any, int] = {}  # relation id -> the next position
    for f in facts:
        f["entity_name"] = (
            unescape(f["entity_label"]) if f["entity_label"] is not None else local_name(f["entity"])
        )
        if f["is_literal"]:
            f["answer_name"] = literal_value(f["answer"])
        else:
            f["answer_name"] = (
                unescape(f["answer_label"]) if f["answer_label"] is not None else local_name(f["answer"])
            )
        if name_problem(f["entity_name"]) or name_problem(f["answer_name"]):
            dropped += 1
            continue
        f["position"] = pos.get(f["rid"], 0)
        pos[f["rid"]] = f["position"] + 1
        out.append(f)
    return out, dropped


_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|([tbnrf"\'\\]))')


def unescape(lexical: str) -> str:
    """N-Triples / Turtle string escapes (\\t, \\", \\uXXXX, \\UXXXXXXXX, ...) -> characters."""

    def sub(m: re.Match) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        return _ESCAPES[m.group(3)]

    return _ESCAPE_RE.sub(sub, lexical) if "\\" in lexical else lexical


def literal_value(term: str) -> str:
    """The unescaped lexical form of a literal term '"..."@en' / '"..."^^<type>'."""
    return unescape(term[1 : term.rindex('"')])


def local_name(iri: str) -> str:
    """Name for an IRI without a label: the part after the last / or # (after the last : when
    there is neither), percent-decoded, underscores as spaces."""
    tail = iri.rstrip("/#")
    cut = max(tail.rfind("/"), tail.rfind("#"))
    if cut < 0:
        cut = tail.rfind(":")
    name = unquote(tail[cut + 1 :]).replace("_", " ").strip()
    return name or iri


# -- writing ----------------------------------------------------------------------------------


def _to_builder(name: str, spec: RelationsFile, kg: KgRows) -> DatasetBuilder:
    """The chosen rows as a DatasetBuilder (entities with URIs and names, answers, facts, forms)."""
    # the relations' context templates end in "\n", as the paper's (kg_relations.py)
    b = DatasetBuilder(name, "kg", source_path=spec.path, description=spec.description, separator="")
    rels = []
    for r in spec.relations:
        rel = b.add_relation(r.relation_id)
        rel.short_name = r.short_name
        rel.query_forms = list(r.query_forms)
        rel.context_templates = list(r.context_templates)
        rels.append(rel)
    for rid, role, cls, frac in kg.classes:
        rels[rid].classes.append((role, cls, frac))
    for f in kg.facts:
        e = b.entity(f["entity_name"], "real", f["entity"], f["entity_class"])
        a = b.answer(f["answer_name"], None if f["is_literal"] else f["answer"])
        rels[f["rid"]].facts.append(
            {
                "entity": e,
                "answer": a,
                "kind": "real",
                "position": int(f["position"]),
                "uri_degree": int(f["total_degree"]),
                "predicate_degree": int(f["delta"]),
                "namesake_degree": int(f["namesake_degree"]),
                "namesake_num_uris": int(f["namesake_num_uris"]),
            }
        )
    return b


def _write(
    store, builder: DatasetBuilder, spec: RelationsFile, kg: KgRows, opts: BuildOptions, shas: dict[str, str]
) -> dict[str, Any]:
    """Dataset rows, the fact-degree covariate, dataset_source and dataset_build: one transaction."""
    from .yago_qec import write_yago_qec

    srcs = [
        *kg.files,
        {"path": spec.path, "role": "relations", "format": "yaml", "n_lines": None, "n_malformed": None},
    ]
    missing = [s["path"] for s in srcs if s["path"] not in shas]
    if missing:
        raise UserError(f"{missing[0]}: could not compute its sha256")
    builder.source_sha256 = _digest([shas[s["path"]] for s in srcs])
    with store.transaction():
        stats = write_yago_qec(store, builder)
        did = stats["dataset_id"]
        store.insert_arrow(
            "dataset_source",
            {
                "dataset_id": [did] * len(srcs),
                "ordinal": list(range(len(srcs))),
                "role": [s["role"] for s in srcs],
                "path": [s["path"] for s in srcs],
                "format": [s["format"] for s in srcs],
                "size_bytes": [os.path.getsize(s["path"]) for s in srcs],
                "sha256": [shas[s["path"]] for s in srcs],
                "n_lines": [s["n_lines"] for s in srcs],
                "n_malformed": [s["n_malformed"] for s in srcs],
            },
        )
        params = {**asdict(opts), "label_predicates": list(opts.label_predicates)}
        store.insert_arrow(
            "dataset_build",
            {
                "dataset_id": [did],
                "relations_path": [spec.path],
                "relations_sha256": [spec.sha256],
                "relations_yaml": [spec.text],
                "params_json": [json.dumps(params, sort_keys=True)],
                "stats_json": [json.dumps({**kg.stats, "relations": kg.relations}, sort_keys=True)],
            },
        )
    return stats


def _digest(shas: list[str]) -> str:
    """sha256 of the sorted sha256 list (one file: its own sha256), as `covariates kg-degree` does."""
    import hashlib

    return shas[0] if len(shas) == 1 else hashlib.sha256("\n".join(sorted(shas)).encode()).hexdigest()
