"""`ctxprior covariates kg-degree`: relation-dependent KG degree (Du et al. 2024, App. F.3), in DuckDB.

delta(e, q) = |{a : (e, q, a) in G} U {a : (a, q, e) in G}| -- the distinct neighbours of entity e
along predicate q in either direction -- for every warehouse entity URI and predicate, plus the
entity's total degree (distinct triples with e as subject or object). Everything runs as SQL over
the triple files (read line by line by DuckDB, gzip handled by DuckDB); no Python loop over triples.

Formats: N-Triples, one-triple-per-line Turtle and TSV, plain or gzip; the files are read by
``ctxprior.covariates.triples.TripleFiles`` (shared with `build-dataset`; the formats are described
there). Unparseable lines are counted and reported.
Entity URIs are compared with the warehouse's ``entity.uri``; a relation ``reverse-<uri>`` uses
the degree of ``<uri>`` (delta is direction-free).
"""

from __future__ import annotations

import hashlib
import json

from ..digest import sha256_file
from ..errors import UserError
from ..sqlfiles import body, ident, literal, read_sql
from . import catalog
from .triples import DEFAULT_PREFIXES, TripleFiles  # noqa: F401  (DEFAULT_PREFIXES: re-exported)

SQL = "ctxprior.covariates"
KEY_COLUMNS = ["dataset", "relation", "entity", "answer"]
VALUE_COLUMNS = ["degree", "total_degree"]


def kg_degree(
    store,
    triples: list[str],
    name: str,
    fmt: str = "auto",
    dataset: str | None = None,
    replace: bool = False,
    description: str | None = None,
    source: str | None = None,
) -> dict:
    """KG degrees from ``triples`` (files or folders) as covariate ``name``; ``source``: what to
    record as the input (the paths the user gave, when ``triples`` are private copies of them)."""
    catalog.check_name(name)
    did = catalog.dataset_id(store, dataset)
    tf, fmt_ = _open_triples(store, triples, fmt)
    existing = catalog.get(store, name)
    if existing is not None and not replace and existing["kind"] != "kg_degree":
        raise UserError(f"--name {name}: already used by a {existing['kind']} covariate; choose another name")
    digest = _files_digest(tf.files)
    if existing is not None and not replace:
        if existing["source_sha256"] == digest:
            n_triples = json.loads(existing["params_json"]).get("n_triples")
            return _summary(store, existing["covariate_id"], name, did, tf.files, n_triples, unchanged=True)
        raise UserError(f"--name {name}: already computed from other files; pass --replace to recompute")
    _check_entity_uris(store, did)
    n_lines, n_bad = _load_triples(store.con, tf, did)
    n_triples = n_lines - n_bad
    if n_lines and n_bad == n_lines:
        raise UserError(f"{tf.files[0]}: no line parsed as a {fmt_} triple ({n_bad} lines); check --format")
    params = {
        "format": fmt_,
        "dataset": dataset,
        "n_triples": n_triples,
        "n_unparsed_lines": n_bad,
        "definition": "degree = |{a:(e,q,a)} U {a:(a,q,e)}|; total_degree = "
        "distinct triples with e as subject or object",
    }
    rep = _store(
        store, name, did, existing, params, source or " ".join(triples), digest, description, tf.files
    )
    rep["n_unparsed_lines"] = n_bad
    rep["format"] = fmt_
    for t in ("_kg_t", "_kg_uri"):
        store.con.execute(f"DROP TABLE IF EXISTS {ident(t)}")
    return rep


def _open_triples(store, triples: list[str], fmt: str) -> tuple[TripleFiles, str]:
    """The triple files and their one format (mixed formats are an error)."""
    tf = TripleFiles(store.con, list(triples), fmt)
    if len(tf.formats) > 1:
        raise UserError(
            f"{', '.join(triples)}: mixed triple formats ({', '.join(tf.formats)}); "
            "run once per format with different --name values"
        )
    return tf, tf.formats[0]


def _files_digest(files: list[str]) -> str:
    """sha256 of the one file, or of the sorted sha256s of several."""
    shas = [sha256_file(f) for f in files]
    return shas[0] if len(shas) == 1 else hashlib.sha256("\n".join(sorted(shas)).encode()).hexdigest()


def _check_entity_uris(store, did: int | None) -> None:
    """Fail unless some warehouse entity (of the dataset) has a URI to look up."""
    n_uris = store.scalar(
        "SELECT count(*) FROM entity WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)", [did, did]
    )
    if not n_uris:
        raise UserError(
            "no entity in the warehouse has a URI to look up; KG degrees need entity URIs "
            "(ingest yago_qec.json, or add degrees with `covariates add`)"
        )


def _load_triples(con, tf: TripleFiles, did: int | None) -> tuple[int, int]:
    """Temp tables ``_kg_uri`` (the entity URIs) and ``_kg_t`` (the distinct triples touching one);
    returns the number of lines read and of lines that did not parse."""
    con.execute(read_sql(SQL, "sql/kg_entity_uris.sql"), [did, did])
    parsed = tf.sql()
    # fetchall, not fetchone: DuckDB fills its reject tables when the statement is finished
    n_lines, n_bad = tf.run(f"SELECT count(*), count(*) FILTER (WHERE s IS NULL) FROM ({parsed})").fetchall()[
        0
    ]
    n_rejected = sum(len(v) for v in tf.rejected().values())  # lines that are not UTF-8 text, ...
    n_lines, n_bad = n_lines + n_rejected, n_bad + n_rejected
    tf.run(body(read_sql(SQL, "sql/kg_triples_touching.sql")).format(parsed=parsed))
    return n_lines, n_bad


def _store(
    store,
    name: str,
    did: int | None,
    existing: dict | None,
    params: dict,
    source_path: str,
    digest: str,
    description: str | None,
    files: list[str],
) -> dict:
    """One transaction: drop the old degrees, the catalog row, the degree tables, the view, the counts."""
    with store.transaction():
        if existing is not None:
            store.execute("DELETE FROM kg_degree WHERE covariate_id = ?", [existing["covariate_id"]])
            store.execute("DELETE FROM kg_entity_degree WHERE covariate_id = ?", [existing["covariate_id"]])
            if existing["kind"] != "kg_degree":
                raise UserError(
                    f"--name {name}: already used by a {existing['kind']} covariate; choose another name"
                )
        cid = catalog.upsert(
            store,
            name=name,
            kind="kg_degree",
            dataset_id=did,
            key_columns=KEY_COLUMNS,
            value_columns=VALUE_COLUMNS,
            params=params,
            source_path=source_path,
            source_sha256=digest,
            description=description or "relation-dependent KG degree delta(e,q) and total degree",
            data_table="kg_degree",
        )
        _insert_degrees(store, cid)
        catalog.create_view(store, name, view_sql(cid, did))
        rep = _summary(store, cid, name, did, files, params["n_triples"])
        store.execute(
            "UPDATE covariate SET n_rows = ?, n_matched = ? WHERE covariate_id = ?",
            [rep["n_facts"], rep["n_facts_with_degree"], cid],
        )
    return rep


def _insert_degrees(store, cid: int) -> None:
    """delta(e, q) into ``kg_degree`` and each entity's total degree into ``kg_entity_degree``, from ``_kg_t``."""
    store.execute(read_sql(SQL, "sql/kg_degree_insert.sql"), [cid])
    store.execute(read_sql(SQL, "sql/kg_entity_degree_insert.sql"), [cid])


def view_sql(cid: int, dataset_id: int | None) -> str:
    where = "" if dataset_id is None else "WHERE v.dataset_id = " + literal(int(dataset_id))
    return body(read_sql(SQL, "sql/kg_degree_view.sql")).format(covariate_id=literal(int(cid)), where=where)


def _summary(store, cid, name, did, files, n_triples, unchanged: bool = False) -> dict:
    v = catalog.view_name(name)
    n_facts, n_deg = store.execute(
        f"SELECT count(*), count(*) FILTER (WHERE degree > 0) FROM {ident(v)}"
    ).fetchone()
    n_uris = store.scalar(
        "SELECT count(DISTINCT uri) FROM entity WHERE uri IS NOT NULL AND (? IS NULL OR dataset_id = ?)",
        [did, did],
    )
    found = store.scalar("SELECT count(*) FROM kg_entity_degree WHERE covariate_id = ?", [cid])
    return {
        "view": v,
        "n_files": len(files),
        "n_triples": n_triples,
        "n_entity_uris": int(n_uris),
        "n_entities_found": int(found),
        "n_facts": int(n_facts),
        "n_facts_with_degree": int(n_deg),
        "unchanged": unchanged,
    }
