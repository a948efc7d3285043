"""RDF triple files read by DuckDB as SQL: shared by `build-dataset` and `covariates kg-degree`.

Nothing here loops over triples in Python: ``TripleFiles.sql()`` returns a SELECT that DuckDB
streams over the files (gzip handled by DuckDB, ``compression='auto'``), one row per line.

Formats (one triple per line; blank lines and # comments are skipped; other lines that do not
parse give a row with ``s IS NULL`` so callers can count, report and skip them):
- ``nt``:  N-Triples ``<s> <p> <o> .`` (objects may be literals or blank nodes);
- ``ttl``: Turtle with one triple per line (YAGO 4.5 style): ``@prefix``/``PREFIX`` lines anywhere
  in the files (read in a first, cheap pass), prefixed names (``yago:Paris``), ``a`` for
  rdf:type; ``;``/``,`` lists are not supported;
- ``tsv``: ``subject<TAB>predicate<TAB>object[<TAB>...]`` (extra columns ignored); terms may be
  ``<uri>``, prefixed or bare.
Terms come out expanded: an IRI without its angle brackets, a prefixed name expanded with the
files' prefixes (and ``DEFAULT_PREFIXES`` for prefixes the files do not define; in ``nt`` and ``ttl``
a prefixed name whose prefix neither defines makes the line malformed, as in a Turtle parser, while
``tsv`` keeps such a term as written), a literal as
written (quotes, escapes, ``@lang``/``^^type`` kept), a blank node as ``_:x``.
"""

from __future__ import annotations

import os

from ..errors import UserError
from ..inputs import check_inputs
from ..sqlfiles import body, ident, literal, path_sql, read_sql

DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "yago": "http://yago-knowledge.org/resource/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
}
RDF_TYPE = DEFAULT_PREFIXES["rdf"] + "type"
FORMATS = ("nt", "ttl", "tsv")
SQL = "ctxprior.covariates"
_EXTENSIONS = {".nt": "nt", ".ttl": "ttl", ".turtle": "ttl", ".tsv": "tsv", ".tab": "tsv"}

# one RDF term: <iri> | _:blank | "literal"(@lang|^^type)? | prefixed:name / bare token
TERM_RE = r'(<[^>]*>|_:[^\s]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^[^\s]+)?|[^\s"<]+)'
LITERAL_RE = r'"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^[^\s]+)?'
# a line's body (trailing white space and one final '.' removed) holding exactly three terms
BODY_RE = r"^\s*" + TERM_RE + r"\s+" + TERM_RE + r"\s+" + TERM_RE + r"\s*$"
PREFIX_RE = r"^\s*@?[Pp][Rr][Ee][Ff][Ii][Xx]\s+([A-Za-z0-9_.-]*):\s*<([^>]*)>"


def format_of(path: str) -> str:
    """nt | ttl | tsv from the file name (a .gz suffix is ignored)."""
    n = path.lower().removesuffix(".gz")
    for ext, fmt in _EXTENSIONS.items():
        if n.endswith(ext):
            return fmt
    raise UserError(
        f"{path}: cannot tell the triple format from the name (.nt, .ttl, .tsv, optionally .gz); "
        "pass --format nt|ttl|tsv"
    )


def triple_files(inputs: list[str]) -> list[str]:
    """Absolute paths of the given files and of the triple files inside given folders (sorted)."""
    out = []
    for p in inputs:
        if os.path.isdir(p):
            found = sorted(
                os.path.join(r, f)
                for r, _, fs in os.walk(p)
                for f in fs
                if f.lower().removesuffix(".gz").endswith(tuple(_EXTENSIONS))
            )
            if not found:
                raise UserError(f"{p}: folder has no .nt/.ttl/.tsv(.gz) files")
            out += found
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise UserError(f"{p}: no such file or folder")
    files = [os.path.abspath(p) for p in dict.fromkeys(out)]
    check_inputs(files)  # never the warehouse (a link of it): ctxprior/inputs.py
    return files


def lines_sql(files: list[str], line_numbers: bool = False) -> str:
    """A read_csv of whole lines with the columns filename, [line_no,] line (blank lines kept as
    NULL, so line_no is the 1-based line number; it costs order-preserving reads). A line DuckDB
    cannot read as text (not UTF-8, over 100 MB) gives no row; it is recorded in DuckDB's
    reject tables (``TripleFiles.rejected``), and line_no counts it (see ``true_line``)."""

    def one(fs: list[str]) -> str:
        lst = "[" + ", ".join(path_sql(f) for f in fs) + "]"  # each names one file: no globbing
        return (
            f"read_csv({lst}, columns={{'line': 'VARCHAR'}}, header=false, delim=E'\\x01\\x02', quote='', "
            "escape='', auto_detect=false, max_line_size=100000000, compression='auto', filename=true, "
            "ignore_errors=true, store_rejects=true)"
        )

    if not line_numbers:
        return f"(SELECT filename, line FROM {one(files)})"
    parts = [f"SELECT filename, row_number() OVER () AS line_no, line FROM {one([f])}" for f in files]
    return "(" + " UNION ALL ".join(parts) + ")"


def true_line(row_number: int, rejected: list[int]) -> int:
    """The 1-based line number of a file's ``row_number``-th row, given the (sorted) line numbers
    of its rejected lines, which have no row."""
    line = row_number
    for r in rejected:
        if r <= line:
            line += 1
    return line


def expand_sql(col: str, prefixes: dict[str, str]) -> str:
    """SQL expression: the raw RDF term in ``col`` expanded (see the module docstring); NULL for
    a prefixed name whose prefix is not in ``prefixes``."""
    cases = " ".join(f"WHEN {literal(k)} THEN {literal(v)}" for k, v in sorted(prefixes.items()))
    return body(read_sql(SQL, "sql/expand_term.sql")).format(
        col=ident(col), cases=cases, rdf_type=literal(RDF_TYPE)
    )


class TripleFiles:
    """Triple files (any mix of formats) and the SQL that streams them as (s, p, o) rows."""

    def __init__(self, con, inputs: list[str], fmt: str = "auto"):
        if fmt not in ("auto", *FORMATS):
            raise UserError(f"--format {fmt}: expected auto, nt, ttl or tsv")
        self.con = con
        self.files = triple_files(inputs)
        self.by_format: dict[str, list[str]] = {}
        for f in self.files:
            self.by_format.setdefault(format_of(f) if fmt == "auto" else fmt, []).append(f)
        self._prefixes: dict[str, str] | None = None

    @property
    def prefixes(self) -> dict[str, str]:
        """Prefix -> IRI: the Turtle files' own (read on first use), then DEFAULT_PREFIXES."""
        if self._prefixes is None:
            self._prefixes = self._read_prefixes()
        return self._prefixes

    @property
    def formats(self) -> list[str]:
        return sorted(self.by_format)

    def _read_prefixes(self) -> dict[str, str]:
        """@prefix / PREFIX lines of the Turtle files (a cheap first pass), over DEFAULT_PREFIXES."""
        found: dict[str, str] = {}
        ttl = self.by_format.get("ttl")
        if ttl:
            rows = self.run(
                body(read_sql(SQL, "sql/ttl_prefixes.sql")).format(
                    prefix_re=literal(PREFIX_RE), lines=lines_sql(ttl)
                ),
                ttl,
            ).fetchall()
            for p, i in rows:
                if p in found and found[p] != i:
                    raise UserError(
                        f"{ttl[0]}: prefix '{p}:' is defined twice (<{found[p]}> and <{i}>); "
                        "ctxprior applies prefixes to whole files, so keep one definition"
                    )
                found[p] = i
        return {**DEFAULT_PREFIXES, **found}

    def raw_sql(self, line_numbers: bool = False) -> str:
        """SELECT filename, [line_no,] s, p, o, rdf -- raw terms; s IS NULL for a line that is not a
        triple; rdf: the line is N-Triples / Turtle (not TSV)."""
        keep = "filename, line_no" if line_numbers else "filename"
        parts = []
        for fmt, files in sorted(self.by_format.items()):
            name = "sql/triples_tsv.sql" if fmt == "tsv" else "sql/triples_rdf.sql"
            raw = read_sql(SQL, name).format(
                keep=keep,
                lines=lines_sql(files, line_numbers),
                prefix_re=literal(PREFIX_RE),
                literal_re=literal(LITERAL_RE),
                body_re=literal(BODY_RE),
            )
            rdf = "true" if fmt != "tsv" else "false"
            parts.append("SELECT *, " + rdf + " AS rdf FROM (" + raw + ")")
        return "\nUNION ALL\n".join(f"({p})" for p in parts)

    def sql(self, line_numbers: bool = False) -> str:
        """SELECT filename, [line_no,] s, p, o -- expanded terms; s IS NULL for a malformed line,
        which in N-Triples / Turtle includes a line with a prefixed name of an undeclared prefix
        (a TSV term with an unknown prefix is kept as written)."""
        keep = "filename, line_no" if line_numbers else "filename"
        return body(read_sql(SQL, "sql/triples_expand.sql")).format(
            keep=keep,
            s_=expand_sql("s", self.prefixes),
            p_=expand_sql("p", self.prefixes),
            o_=expand_sql("o", self.prefixes),
            raw=self.raw_sql(line_numbers),
        )

    def rejected(self) -> dict[str, list[tuple[int, str]]]:
        """Per file, the (line number, DuckDB error type) of the lines the last statement could not
        read as text: INVALID ENCODING (not UTF-8), LINE SIZE OVER MAXIMUM, ... (filled once that
        statement is finished: fetch all of its result first)."""
        try:
            rows = self.con.execute(read_sql(SQL, "sql/rejected_lines.sql")).fetchall()
        except Exception:
            return {}
        out: dict[str, list[tuple[int, str]]] = {}
        for path, line, kind in rows:
            out.setdefault(os.path.abspath(path), []).append((int(line), str(kind)))
        return out

    def run(self, sql: str, files: list[str] | None = None, params=None):
        """Execute ``sql`` on the connection; a DuckDB read error becomes a one-line UserError."""
        import duckdb

        for t in ("reject_errors", "reject_scans"):  # DuckDB appends to them: keep this statement's only
            if self.con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND temporary", [t]
            ).fetchone()[0]:
                self.con.execute(f"DELETE FROM temp.{ident(t)}")
        try:
            return self.con.execute(sql, params or [])
        except (duckdb.IOException, duckdb.InvalidInputException) as e:
            first = str(e).splitlines()[0]
            what = self._culprit(str(e), files or self.files)
            raise UserError(
                f"{what}: cannot read the triples ({first}); check the file format (--format) and compression"
            ) from None

    def _culprit(self, message: str, files: list[str]) -> str:
        """The file a DuckDB read error is about: the one its message names, else the first of
        ``files`` that fails alone (only on this error path), else all of them."""
        named = [f for f in sorted(files, key=len, reverse=True) if f in message]
        if named or len(files) == 1:
            return (named or files)[0]
        for f in files:
            try:
                self.con.execute(f"SELECT count(*) FROM {lines_sql([f])}").fetchone()
            except Exception:
                return f
        return f"one of {', '.join(files)}"
