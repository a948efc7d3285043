"""`ctxprior covariates kg-degree`: relation-dependent KG degree (Du et al. 2024, App. F.3), in DuckDB.

delta(e, q) = |{a : (e, q, a) in G} U {a : (a, q, e) in G}| -- the distinct neighbours of entity e
along predicate q in either direction -- for every warehouse entity URI and predicate, plus the
entity's total degree (distinct triples with e as subject or object). Everything runs as SQL over
the triple files (read line by line by DuckDB, gzip handled by DuckDB); no Python loop over triples.

Formats (one triple per line; blank lines and # comments ignored; other unparseable lines are
counted and reported):
- ``nt``:  N-Triples ``<s> <p> <o> .`` (objects may be literals or blank nodes);
- ``ttl``: Turtle with one triple per line (YAGO 4.5 style): ``@prefix``/``PREFIX`` lines anywhere
  in the files, prefixed names (``yago:Paris``), ``a`` for rdf:type; ``;``/``,`` lists are not supported;
- ``tsv``: ``subject<TAB>predicate<TAB>object[<TAB>...]`` (extra columns ignored); terms may be
  ``<uri>``, prefixed or bare.
Entity URIs are compared with the warehouse's ``entity.uri``; a relation ``reverse-<uri>`` uses
the degree of ``<uri>`` (delta is direction-free).
"""

from __future__ import annotations

import hashlib
import os

from ..errors import UserError
from . import catalog
from .catalog import sha256_file

DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "schema": "http://schema.org/",
    "yago": "http://yago-knowledge.org/resource/",
    "wd": "http://www.wikidata.org/entity/",
}
KEY_COLUMNS = ["dataset", "relation", "entity", "answer"]
VALUE_COLUMNS = ["degree", "total_degree"]

# one RDF term: <iri> | _:blank | "literal"(@lang|^^type)? | prefixed:name / bare token
_TERM = r'(<[^>]*>|_:[^\s]+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^[^\s]+)?|[^\s"<]+)'
_LINE_RE = r"^\s*" + _TERM + r"\s+" + _TERM + r"\s+" + _TERM + r"\s*\.?\s*$"
_PREFIX_RE = r"^\s*@?[Pp][Rr][Ee][Ff][Ii][Xx]\s+([A-Za-z0-9_.-]*):\s*<([^>]*)>"


def _format_of(path: str) -> str:
    n = path.lower().removesuffix(".gz")
    if n.endswith(".nt"):
        return "nt"
    if n.endswith((".ttl", ".turtle")):
        return "ttl"
    if n.endswith((".tsv", ".tab")):
        return "tsv"
    raise UserError(f"{path}: cannot tell the triple format from the name (.nt, .ttl, .tsv, optionally .gz); "
                    "pass --format nt|ttl|tsv")


def _files(inputs: list[str]) -> list[str]:
    out = []
    for p in inputs:
        if os.path.isdir(p):
            found = sorted(os.path.join(r, f) for r, _, fs in os.walk(p) for f in fs
                           if f.lower().removesuffix(".gz").endswith((".nt", ".ttl", ".turtle", ".tsv", ".tab")))
            if not found:
                raise UserError(f"{p}: folder has no .nt/.ttl/.tsv(.gz) files")
            out += found
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise UserError(f"{p}: no such file or folder")
    return [os.path.abspath(p) for p in dict.fromkeys(out)]


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _lines_sql(files: list[str]) -> str:
    lst = "[" + ", ".join(_sql_str(f) for f in files) + "]"
    return (f"read_csv({lst}, columns={{'line': 'VARCHAR'}}, header=false, delim=E'\\x01\\x02', quote='', "
            "escape='', auto_detect=false, max_line_size=100000000, compression='auto')")


def _prefix_of(col: str) -> str:
    """SQL expression: the prefix of a prefixed name (NULL for IRIs, literals, blank nodes)."""
    return (f"CASE WHEN NOT starts_with({col}, '<') AND NOT starts_with({col}, '\"') "
            f"AND NOT starts_with({col}, '_:') AND contains({col}, ':') THEN split_part({col}, ':', 1) END")


def _expand(col: str, pref: str) -> str:
    """SQL expression: an RDF term -> IRI (angle brackets stripped, prefixes expanded) or as is."""
    return f"""CASE
      WHEN starts_with({col}, '<') AND ends_with({col}, '>') THEN substr({col}, 2, length({col}) - 2)
      WHEN {col} = 'a' THEN 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
      WHEN {pref}.iri IS NOT NULL THEN {pref}.iri || substr({col}, strpos({col}, ':') + 1)
      ELSE {col} END"""


def kg_degree(wh, triples: list[str], name: str, fmt: str = "auto", dataset: str | None = None,
              replace: bool = False, description: str | None = None) -> dict:
    catalog.check_name(name)
    did = catalog.dataset_id(wh, dataset)
    files = _files(triples)
    fmts = {(_format_of(f) if fmt == "auto" else fmt) for f in files}
    if len(fmts) > 1:
        raise UserError(f"{', '.join(triples)}: mixed triple formats ({', '.join(sorted(fmts))}); "
                        "run once per format with different --name values")
    fmt_ = fmts.pop()
    existing = catalog.get(wh, name)
    if existing is not None and not replace:
        if existing["kind"] != "kg_degree":
            raise UserError(f"--name {name}: already used by a {existing['kind']} covariate; choose another name")
    shas = [sha256_file(f) for f in files]
    digest = shas[0] if len(shas) == 1 else hashlib.sha256("\n".join(sorted(shas)).encode()).hexdigest()
    if existing is not None and not replace:
        if existing["source_sha256"] == digest:
            return _summary(wh, existing["covariate_id"], name, did, files, None, unchanged=True)
        raise UserError(f"--name {name}: already computed from other files; pass --replace to recompute")
    n_uris = wh.scalar("SELECT count(*) FROM entity WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)",
                       [did, did])
    if not n_uris:
        raise UserError("no entity in the warehouse has a URI to look up; KG degrees need entity URIs "
                        "(ingest yago_qec.json, or add degrees with `covariates add`)")
    con = wh.con
    con.execute("CREATE OR REPLACE TEMP TABLE _kg_uri AS SELECT DISTINCT uri FROM entity "
                "WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)", [did, did])
    con.execute("CREATE OR REPLACE TEMP TABLE _kg_prefix (prefix VARCHAR, iri VARCHAR)")
    try:
        if fmt_ == "tsv":
            raw = f"""SELECT string_split(line, chr(9)) AS t FROM {_lines_sql(files)}
                      WHERE line IS NOT NULL AND trim(line) <> '' AND NOT starts_with(ltrim(line), '#')"""
            parsed = f"""SELECT CASE WHEN len(t) >= 3 THEN trim(t[1]) END AS s,
                                CASE WHEN len(t) >= 3 THEN trim(t[2]) END AS p,
                                CASE WHEN len(t) >= 3 THEN regexp_replace(trim(t[3]), '\\s*\\.$', '') END AS o
                         FROM ({raw})"""
        else:
            con.execute(f"""INSERT INTO _kg_prefix
                SELECT DISTINCT x.p, x.i FROM (
                  SELECT regexp_extract(line, {_sql_str(_PREFIX_RE)}, ['p', 'i']) AS x FROM {_lines_sql(files)}
                  WHERE regexp_matches(line, {_sql_str(_PREFIX_RE)}))""")
            raw = f"""SELECT line FROM {_lines_sql(files)}
                      WHERE line IS NOT NULL AND trim(line) <> '' AND NOT starts_with(ltrim(line), '#')
                        AND NOT regexp_matches(line, {_sql_str(_PREFIX_RE)})"""
            parsed = f"""SELECT x.s, x.p, x.o FROM (
                           SELECT CASE WHEN regexp_matches(line, {_sql_str(_LINE_RE)})
                                       THEN regexp_extract(line, {_sql_str(_LINE_RE)}, ['s', 'p', 'o']) END AS x
                           FROM ({raw}))"""
        con.executemany("INSERT INTO _kg_prefix SELECT ?, ? WHERE ? NOT IN (SELECT prefix FROM _kg_prefix)",
                        [[k, v, k] for k, v in DEFAULT_PREFIXES.items()])
        n_lines, n_bad = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE s IS NULL OR s = '') FROM ({parsed})").fetchone()
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _kg_t AS
            WITH t AS (SELECT s, p, o FROM ({parsed}) WHERE s IS NOT NULL AND s <> ''),
            x AS (SELECT {_expand('t.s', 'ps')} AS s, {_expand('t.p', 'pp')} AS p, {_expand('t.o', 'po')} AS o
                  FROM t
                  LEFT JOIN _kg_prefix ps ON ps.prefix = {_prefix_of('t.s')}
                  LEFT JOIN _kg_prefix pp ON pp.prefix = {_prefix_of('t.p')}
                  LEFT JOIN _kg_prefix po ON po.prefix = {_prefix_of('t.o')})
            SELECT DISTINCT s, p, o FROM x
            WHERE s IN (SELECT uri FROM _kg_uri) OR o IN (SELECT uri FROM _kg_uri)""")
    except Exception as e:
        import duckdb

        if isinstance(e, duckdb.Error):
            raise UserError(f"{files[0]}: cannot read the triples ({str(e).splitlines()[0]}); "
                            "check the file format (--format) and compression") from None
        raise
    n_triples = n_lines - n_bad
    if n_lines and n_bad == n_lines:
        raise UserError(f"{files[0]}: no line parsed as a {fmt_} triple ({n_bad} lines); check --format")
    with wh.transaction():
        if existing is not None:
            wh.execute("DELETE FROM kg_degree WHERE covariate_id = ?", [existing["covariate_id"]])
            wh.execute("DELETE FROM kg_entity_degree WHERE covariate_id = ?", [existing["covariate_id"]])
            if existing["kind"] != "kg_degree":
                raise UserError(f"--name {name}: already used by a {existing['kind']} covariate; choose another name")
        cid = catalog.upsert(wh, name=name, kind="kg_degree", dataset_id=did, key_columns=KEY_COLUMNS,
                             value_columns=VALUE_COLUMNS,
                             params={"format": fmt_, "dataset": dataset, "n_triples": n_triples,
                                     "n_unparsed_lines": n_bad,
                                     "definition": "degree = |{a:(e,q,a)} U {a:(a,q,e)}|; total_degree = "
                                                   "distinct triples with e as subject or object"},
                             source_path=" ".join(triples), source_sha256=digest,
                             description=description or "relation-dependent KG degree delta(e,q) and total degree",
                             data_table="kg_degree")
        wh.execute(f"""INSERT INTO kg_degree
            SELECT {cid}, e, p, count(*) FROM (
              SELECT s AS e, p, o AS a FROM _kg_t WHERE s IN (SELECT uri FROM _kg_uri)
              UNION
              SELECT o AS e, p, s AS a FROM _kg_t WHERE o IN (SELECT uri FROM _kg_uri))
            GROUP BY e, p""")
        wh.execute(f"""INSERT INTO kg_entity_degree
            SELECT {cid}, e, count(*), count(DISTINCT p) FROM (
              SELECT s, p, o, s AS e FROM _kg_t WHERE s IN (SELECT uri FROM _kg_uri)
              UNION
              SELECT s, p, o, o AS e FROM _kg_t WHERE o IN (SELECT uri FROM _kg_uri))
            GROUP BY e""")
        catalog.create_view(wh, name, view_sql(cid, did))
        rep = _summary(wh, cid, name, did, files, n_triples)
        wh.execute("UPDATE covariate SET n_rows = ?, n_matched = ? WHERE covariate_id = ?",
                   [rep["n_facts"], rep["n_facts_with_degree"], cid])
    rep["n_unparsed_lines"] = n_bad
    rep["format"] = fmt_
    for t in ("_kg_t", "_kg_uri", "_kg_prefix"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    return rep


def view_sql(cid: int, dataset_id: int | None) -> str:
    where = f"WHERE v.dataset_id = {int(dataset_id)}" if dataset_id is not None else ""
    return f"""SELECT v.dataset, v.relation, v.entity, v.entity_kind, v.answer,
       (CASE WHEN ked.entity_uri IS NOT NULL THEN coalesce(kd.degree, 0) END)::BIGINT AS degree,
       ked.total_degree,
       v.entity_uri, v.relation_uri, v.fact_id, v.relation_id, v.entity_id, v.answer_id
FROM v_entity v
LEFT JOIN kg_entity_degree ked ON ked.covariate_id = {cid} AND ked.entity_uri = v.entity_uri
LEFT JOIN kg_degree kd ON kd.covariate_id = {cid} AND kd.entity_uri = v.entity_uri
      AND kd.relation_uri = regexp_replace(v.relation_uri, '^reverse-', '')
{where}"""


def _summary(wh, cid, name, did, files, n_triples, unchanged: bool = False) -> dict:
    v = catalog.view_name(name)
    n_facts, n_deg = wh.execute(f'SELECT count(*), count(*) FILTER (WHERE degree > 0) FROM "{v}"').fetchone()
    n_uris = wh.scalar("SELECT count(DISTINCT uri) FROM entity WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)",
                       [did, did])
    found = wh.scalar("SELECT count(*) FROM kg_entity_degree WHERE covariate_id = ?", [cid])
    if n_triples is None:
        n_triples = __import__("json").loads(catalog.get(wh, name)["params_json"]).get("n_triples")
    return {"view": v, "n_files": len(files), "n_triples": n_triples, "n_entity_uris": int(n_uris),
            "n_entities_found": int(found), "n_facts": int(n_facts), "n_facts_with_degree": int(n_deg),
            "unchanged": unchanged}
