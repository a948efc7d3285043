"""`ctxprior covariates cooccurrence`: entity–answer co-occurrence counts over a corpus.

Plan (names and pairs from the warehouse's facts) -> count shards in parallel (local processes or
Ray tasks; one task = one shard file) -> store each shard's counts in its own transaction as it
finishes (so a rerun skips counted shards) -> the view ``cov_<name>`` sums the shards.
Definitions of occurrence and window: ``counting.py``; word splitting: ``text.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import UserError
from ..sqlfiles import body, ident, literal, read_sql
from ..storage.store import utcnow
from . import catalog
from .corpus import ShardStats, _one_line, check_shard, find_shards
from .counting import CountSpec
from .text import normalize
from .worker import _init_worker, _pool_task, _ray_task, count_shard

SQL = "ctxprior.covariates"

KEY_COLUMNS = ["dataset", "relation", "entity", "answer"]
VALUE_COLUMNS = ["cooccurrence", "entity_count", "answer_count", "window"]


# -- planning ------------------------------------------------------------------------------------
@dataclass
class Plan:
    spec: CountSpec
    facts: dict[str, list]  # fact_id, entity_name_id, answer_name_id, pair_id (None allowed)
    n_unnamed: int = 0  # facts whose entity or answer has no words after normalization
    digest: str = ""


def plan(
    store, dataset_id: int | None, window: int, ignore_case: bool, punctuation: str, text_field: str = "text"
) -> Plan:
    rows = store.query(read_sql(SQL, "sql/cooccurrence_facts.sql"), [dataset_id, dataset_id])
    if not rows:
        raise UserError("the dataset has no facts to count; ingest a dataset with entities and answers first")
    norm: dict[str, str] = {}
    for _, e, a in rows:
        for x in (e, a):
            if x is not None and x not in norm:
                norm[x] = normalize(x, ignore_case, punctuation)
    names = sorted({v for v in norm.values() if v})
    nid = {n: i for i, n in enumerate(names)}
    pair_set: set[tuple[int, int]] = set()
    fact_cols: dict[str, list] = {"fact_id": [], "entity_name_id": [], "answer_name_id": [], "pair_id": []}
    raw_pairs = []
    n_unnamed = 0
    for fid, e, a in rows:
        ei = nid.get(norm.get(e, ""))
        ai = nid.get(norm.get(a, "")) if a is not None else None
        if ei is None or (a is not None and ai is None):
            n_unnamed += 1
        p = (min(ei, ai), max(ei, ai)) if ei is not None and ai is not None else None
        if p is not None:
            pair_set.add(p)
        raw_pairs.append(p)
        fact_cols["fact_id"].append(fid)
        fact_cols["entity_name_id"].append(ei)
        fact_cols["answer_name_id"].append(ai)
    pairs = sorted(pair_set)
    pid = {p: i for i, p in enumerate(pairs)}
    fact_cols["pair_id"] = [pid[p] if p is not None else None for p in raw_pairs]
    spec = CountSpec(
        names=names,
        pairs=pairs,
        window=window,
        ignore_case=ignore_case,
        punctuation=punctuation,
        text_field=text_field,
    )
    h = hashlib.sha256(json.dumps([names, pairs]).encode()).hexdigest()
    return Plan(spec=spec, facts=fact_cols, n_unnamed=n_unnamed, digest=h)


# -- executors: yield results as shards finish ---------------------------------------------------
def run_local(spec: CountSpec, paths: list[str], workers: int, bar=None):
    if not paths:
        return
    if workers <= 1 or len(paths) == 1:
        for p in paths:
            yield count_shard(spec, p, (bar.update if bar is not None else None))
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")  # never fork a process that holds a DuckDB connection
    counter = ctx.Value("q", 0)
    shown = 0
    with ProcessPoolExecutor(
        max_workers=min(workers, len(paths)),
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(spec, counter),
    ) as pool:
        futures = {pool.submit(_pool_task, p): p for p in paths}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                if bar is not None:
                    v = counter.value
                    bar.update(v - shown)
                    shown = v
                for fut in done:
                    try:
                        yield fut.result()
                    except Exception as e:  # e.g. a worker killed by the OS (BrokenProcessPool)
                        yield {
                            "path": futures[fut],
                            "error": f"{futures[fut]}: worker failed ({_one_line(e)})",
                        }
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def ray_connect(workers: int, address: str | None = None) -> bool:
    """Join the Ray cluster at ``address`` or start a local instance; True when we started it."""
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray; install it with `pip install 'ctxprior[ray]'`") from None
    if ray.is_initialized():
        return False
    kw: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False)
    if address:
        kw["address"] = address
    else:
        kw["num_cpus"] = max(1, workers)
    try:
        ray.init(**kw)
    except Exception as e:
        raise UserError(
            f"--address {address or '(local)'}: cannot start or join Ray ({_one_line(e)})"
        ) from None
    return True


def _ray_shutdown(started: bool) -> None:
    if started:
        import ray

        ray.shutdown()


def run_ray(
    spec: CountSpec,
    paths: list[str],
    workers: int,
    address: str | None = None,
    bar=None,
    sizes: dict[str, int] | None = None,
    started: bool | None = None,
):
    """Yield shard results from Ray tasks. ``started``: whether to shut Ray down at the end
    (None: connect here)."""
    if not paths:
        return
    if started is None:
        started = ray_connect(workers, address)
    import ray

    try:
        task = ray.remote(num_cpus=1, max_retries=1)(_ray_task)
        spec_ref = ray.put(spec)
        refs = {task.remote(spec_ref, p): p for p in paths}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
            for r in done:
                p = refs.pop(r)
                try:
                    res = ray.get(r)
                except Exception as e:
                    res = {"path": p, "error": f"{p}: Ray task failed ({_one_line(e)})"}
                if bar is not None and sizes:
                    bar.update(sizes.get(p, 0))
                yield res
    finally:
        if started:
            ray.shutdown()


# -- storing -------------------------------------------------------------------------------------
def view_sql(cid: int, window: int) -> str:
    return body(read_sql(SQL, "sql/cooccurrence_view.sql")).format(
        covariate_id=literal(int(cid)), window=literal(int(window))
    )


def _store_plan(store, cid: int, pl: Plan) -> None:
    sp = pl.spec
    store.insert_arrow(
        "cooccurrence_name",
        {
            "covariate_id": [cid] * len(sp.names),
            "name_id": list(range(len(sp.names))),
            "name": sp.names,
            "n_words": [n.count(" ") + 1 for n in sp.names],
        },
    )
    store.insert_arrow(
        "cooccurrence_pair",
        {
            "covariate_id": [cid] * len(sp.pairs),
            "pair_id": list(range(len(sp.pairs))),
            "name_id_lo": [p[0] for p in sp.pairs],
            "name_id_hi": [p[1] for p in sp.pairs],
        },
    )
    import pyarrow as pa

    f = pl.facts
    store.insert_arrow(
        "cooccurrence_fact",
        pa.table(
            {
                "covariate_id": pa.array([cid] * len(f["fact_id"]), pa.int32()),
                "fact_id": pa.array(f["fact_id"], pa.int32()),
                "entity_name_id": pa.array(f["entity_name_id"], pa.int32()),
                "answer_name_id": pa.array(f["answer_name_id"], pa.int32()),
                "pair_id": pa.array(f["pair_id"], pa.int32()),
            }
        ),
    )


def _store_shard(store, cid: int, res: dict, size: int, mtime_ns: int) -> None:
    st: ShardStats = res["stats"]
    with store.transaction():
        sid = store.next_id("cooccurrence_shard", "shard_id")
        store.insert_arrow(
            "cooccurrence_shard",
            {
                "covariate_id": [cid],
                "shard_id": [sid],
                "path": [res["path"]],
                "size_bytes": [size],
                "mtime_ns": [mtime_ns],
                "sha256": [st.sha256],
                "n_lines": [st.n_lines],
                "n_documents": [st.n_documents],
                "n_words": [res["n_words"]],
                "n_bad_json": [st.n_bad_json],
                "n_missing_text": [st.n_missing_text],
                "bad_examples": ["; ".join(st.bad_examples) or None],
                "seconds": [res["seconds"]],
                "worker": [res["worker"]],
                "finished_at": [utcnow()],
            },
        )
        n = len(res["pair_ids"])
        store.insert_arrow(
            "cooccurrence_pair_count",
            {
                "covariate_id": np.full(n, cid, np.int32),
                "shard_id": np.full(n, sid, np.int32),
                "pair_id": res["pair_ids"],
                "count": res["pair_counts"],
            },
        )
        n = len(res["name_ids"])
        store.insert_arrow(
            "cooccurrence_name_count",
            {
                "covariate_id": np.full(n, cid, np.int32),
                "shard_id": np.full(n, sid, np.int32),
                "name_id": res["name_ids"],
                "count": res["name_counts"],
            },
        )


@dataclass
class Report:
    name: str
    view: str
    shards_total: int = 0
    shards_skipped: int = 0
    shards_counted: int = 0
    failed: list[str] = field(default_factory=list)
    n_documents: int = 0
    n_words: int = 0
    n_bad_json: int = 0
    n_missing_text: int = 0
    bad_examples: list[str] = field(default_factory=list)
    bytes_counted: int = 0  # shard file bytes
    bytes_text: int = 0  # decompressed bytes (JSON lines / text)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    n_facts: int = 0
    n_names: int = 0
    n_pairs: int = 0
    n_unnamed: int = 0
    pairs_seen: int = 0


def cooccurrence(
    store,
    corpus: list[str],
    name: str,
    window: int = 50,
    dataset: str | None = None,
    executor: str = "local",
    workers: int | None = None,
    address: str | None = None,
    ignore_case: bool = False,
    punctuation: str = "delete",
    text_field: str = "text",
    restart: bool = False,
    description: str | None = None,
    progress: bool | None = None,
) -> Report:
    """Count (or resume counting) co-occurrences of every fact's entity and answer in ``corpus``."""
    _check_options(name, punctuation, window, executor, workers)
    workers = workers or os.cpu_count() or 1
    did = catalog.dataset_id(store, dataset)
    paths = find_shards(list(corpus))
    for p in paths:
        check_shard(p)
    pl = plan(store, did, window, ignore_case, punctuation, text_field)
    params = _params(window, ignore_case, punctuation, text_field, dataset, pl.digest)
    existing = catalog.get(store, name)
    _check_existing(name, existing, params, restart)
    stats = _file_stats(paths)
    done = (
        _counted_shards(store, name, existing, paths, stats) if existing is not None and not restart else {}
    )
    todo = [p for p in paths if p not in done]
    ray_started = ray_connect(workers, address) if executor == "ray" and todo else False

    # one transaction: catalog row (partial), names/pairs/facts, view
    try:
        cid = _begin(store, name, did, params, corpus, existing, restart, description, window, pl)
    except BaseException:
        _ray_shutdown(ray_started)
        raise

    rep = Report(
        name=name,
        view=catalog.view_name(name),
        shards_total=len(paths),
        shards_skipped=len(paths) - len(todo),
        n_facts=len(pl.facts["fact_id"]),
        n_names=len(pl.spec.names),
        n_pairs=len(pl.spec.pairs),
        n_unnamed=pl.n_unnamed,
    )
    bar = _progress_bar(sum(stats[p][0] for p in todo), name, progress)
    t0 = time.perf_counter()
    try:
        _count(store, cid, pl.spec, todo, stats, executor, workers, address, bar, rep)
    finally:
        bar.close()
        rep.seconds = time.perf_counter() - t0
        _ray_shutdown(ray_started)
        _finish(store, cid, name, paths, rep)
    return rep


def _check_options(name: str, punctuation: str, window: int, executor: str, workers: int | None) -> None:
    """Fail on a bad name, punctuation mode, window, executor or number of workers (the declared
    checks of ``covariates/options.py``)."""
    from ..options import check_options
    from .options import COOCCURRENCE_OPTIONS

    catalog.check_name(name)
    values = {"punctuation": punctuation, "window": window, "executor": executor, "workers": workers}
    check_options(COOCCURRENCE_OPTIONS, values)


def _params(
    window: int, ignore_case: bool, punctuation: str, text_field: str, dataset: str | None, names_sha256: str
) -> dict:
    """The covariate's stored parameters: the counting settings and the definition counted."""
    return {
        "window": window,
        "ignore_case": ignore_case,
        "punctuation": punctuation,
        "text_field": text_field,
        "dataset": dataset,
        "names_sha256": names_sha256,
        "definition": "pairs of non-overlapping whole-word occurrences in one document with "
        "1 <= start(later) - end(earlier) <= window words (App. F.2 word splitting)",
    }


def _check_existing(name: str, existing: dict | None, params: dict, restart: bool) -> None:
    """Fail when ``name`` belongs to another kind of covariate, or (unless ``restart``) was counted
    with other settings or other entity/answer names."""
    if existing is not None and existing["kind"] != "cooccurrence":
        raise UserError(f"--name {name}: already used by a {existing['kind']} covariate; choose another name")
    if existing is not None and not restart:
        old = json.loads(existing["params_json"])
        diff = [
            k
            for k in ("window", "ignore_case", "punctuation", "text_field", "dataset", "names_sha256")
            if old.get(k) != params[k]
        ]
        if diff:
            what = ", ".join(f"{k}: {old.get(k)!r} -> {params[k]!r}" for k in diff if k != "names_sha256")
            if "names_sha256" in diff:
                what = (what + ", " if what else "") + "the dataset's entity/answer names changed"
            raise UserError(
                f"--name {name}: already counted with different settings ({what}); "
                "use another --name, or --restart to count from scratch"
            )


def _file_stats(paths: list[str]) -> dict[str, tuple[int, int]]:
    """Each shard's (size in bytes, mtime in ns)."""
    stats = {}
    for p in paths:
        st = os.stat(p)
        stats[p] = (st.st_size, st.st_mtime_ns)
    return stats


def _counted_shards(
    store, name: str, existing: dict, paths: list[str], stats: dict[str, tuple[int, int]]
) -> dict[str, tuple[int, int]]:
    """The shards already counted for ``existing`` -> their (size, mtime) then; fails when one of
    ``paths`` changed since."""
    done: dict[str, tuple[int, int]] = {}
    for path, size, mtime in store.query(
        "SELECT path, size_bytes, mtime_ns FROM cooccurrence_shard WHERE covariate_id = ?",
        [existing["covariate_id"]],
    ):
        done[path] = (size, mtime)
    changed = [p for p in paths if p in done and done[p] != stats[p]]
    if changed:
        raise UserError(
            f"{changed[0]}: changed since it was counted for {name} "
            f"({len(changed)} shard(s) changed); use --restart to count from scratch"
        )
    return done


def _progress_bar(total_bytes: int, name: str, progress: bool | None):
    """A tqdm bar over the shard bytes to count (``progress`` None: shown on a terminal only)."""
    from tqdm import tqdm

    return tqdm(
        total=total_bytes,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=f"cooccurrence {name}",
        disable=(None if progress is None else not progress),
        smoothing=0.1,
    )


def _count(
    store,
    cid: int,
    spec: CountSpec,
    todo: list[str],
    stats: dict[str, tuple[int, int]],
    executor: str,
    workers: int,
    address: str | None,
    bar,
    rep: Report,
) -> None:
    """Count the ``todo`` shards on the executor, storing each shard as it finishes (its own transaction)
    and adding it to ``rep``; a failed shard is recorded in ``rep.failed``."""
    if executor == "ray":
        results = run_ray(
            spec, todo, workers, address, bar, {p: stats[p][0] for p in todo}, started=False
        )  # connected by the caller, which shuts Ray down
    else:
        results = run_local(spec, todo, workers, bar)
    for res in results:
        if res.get("error"):
            rep.failed.append(res["error"])
            continue
        size, mtime = stats[res["path"]]
        _store_shard(store, cid, res, size, mtime)
        _add_shard(rep, res, size)


def _add_shard(rep: Report, res: dict, size: int) -> None:
    """Add one counted shard's statistics to ``rep``."""
    st: ShardStats = res["stats"]
    rep.shards_counted += 1
    rep.n_documents += st.n_documents
    rep.n_words += res["n_words"]
    rep.n_bad_json += st.n_bad_json
    rep.n_missing_text += st.n_missing_text
    rep.bad_examples += [f"{res['path']} {x}" for x in st.bad_examples]
    rep.bytes_counted += size
    rep.bytes_text += st.bytes_decompressed
    rep.cpu_seconds += res["cpu_seconds"]


def _begin(store, name, did, params, corpus, existing, restart, description, window, pl: Plan) -> int:
    """Catalog row (partial), names / pairs / fact mapping, the view: one transaction."""
    with store.transaction():
        if existing is not None and restart:
            cid0 = existing["covariate_id"]
            for t in (
                "cooccurrence_name",
                "cooccurrence_pair",
                "cooccurrence_fact",
                "cooccurrence_shard",
                "cooccurrence_pair_count",
                "cooccurrence_name_count",
            ):
                store.execute(f"DELETE FROM {ident(t)} WHERE covariate_id = ?", [cid0])
        cid = catalog.upsert(
            store,
            name=name,
            kind="cooccurrence",
            dataset_id=did,
            key_columns=KEY_COLUMNS,
            value_columns=VALUE_COLUMNS,
            params=params,
            status="partial",
            source_path=" ".join(corpus),
            source_sha256=existing["source_sha256"] if existing and not restart else None,
            description=description
            or (existing and existing["description"])
            or f"entity-answer co-occurrence within {window} words",
            n_rows=len(pl.facts["fact_id"]),
            data_table="cooccurrence_pair_count",
        )
        if existing is None or restart:
            _store_plan(store, cid, pl)
        catalog.create_view(store, name, view_sql(cid, window))
    return cid


def _finish(store, cid: int, name: str, paths: list[str], rep: Report) -> None:
    counted = {
        r[0]: r[1]
        for r in store.query("SELECT path, sha256 FROM cooccurrence_shard WHERE covariate_id = ?", [cid])
    }
    complete = all(p in counted for p in paths)
    digest = hashlib.sha256("\n".join(sorted(counted.values())).encode()).hexdigest() if counted else None
    seen = store.scalar(f"SELECT count(*) FROM {ident(catalog.view_name(name))} WHERE cooccurrence > 0")
    rep.pairs_seen = int(seen or 0)
    with store.transaction():
        store.execute(
            read_sql(SQL, "sql/cooccurrence_finish.sql"),
            ["complete" if complete else "partial", digest, rep.pairs_seen, utcnow(), cid],
        )
