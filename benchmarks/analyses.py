"""The analysis suite at paper scale, against a straightforward per-test loop.

Builds a synthetic warehouse in DuckDB SQL: 125 relations x 4 query forms x 100 entities (50 real +
50 fake) x 600 contexts (each entity in 6: 2 base, 2 assertive, 2 negation) = 30M persuasion rows
per model, plus 30M labelled generations, 50k susceptibility rows, for 6 models (180M + 180M rows
by default), with planted effects. Then times `analyze(..., k=10_000)` over all runs (every
analysis: relevance, assertive, negation, familiarity, answer-groups, mr, reliability, degree)
and reports seconds per model.

The baseline is the straightforward loop: pandas reads the raw rows, groupby builds the units,
and one `scipy.stats.ttest_ind(..., method=PermutationMethod(n_resamples=k))` call runs per test
(scipy >= 1.15 replaced the `permutations=` argument by `method=`). It is measured on a subset of
relations of one model in the same run and extrapolated to the number of permutation tests the
suite ran.

    python benchmarks/analyses.py [--models 6] [--relations 125] [--k 10000] [--naive-relations 3]
                                  [--db PATH] [--keep]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

N_QF, N_ENT, N_CTX = 4, 100, 600


def build(wh, n_rel: int, n_models: int) -> None:
    """Every table through INSERT ... SELECT over range(): no Python rows."""
    con = wh.con
    t0 = time.perf_counter()
    with wh.transaction():
        con.execute(
            """INSERT INTO dataset VALUES (1, 'bench', 'yago_qec', NULL, NULL, NULL, 'bench', now()::TIMESTAMP)"""
        )
        con.execute(f"""INSERT INTO relation SELECT r + 1, 1, 'http://schema.org/rel' || r, 'rel' || r, false, r
                        FROM range({n_rel}) t(r)""")
        # entity e of relation r: id r*100 + e + 1; e < 50 real, else fake (borrowing answer e - 50)
        con.execute(f"""INSERT INTO entity (entity_id, dataset_id, name, kind, entity_class)
                        SELECT r * {N_ENT} + e + 1, 1, 'E' || r || '_' || e, CASE WHEN e < 50 THEN 'real' ELSE 'fake' END,
                               'Person' FROM range({n_rel}) a(r), range({N_ENT}) b(e)""")
        con.execute(f"""INSERT INTO answer (answer_id, dataset_id, name)
                        SELECT r * 50 + e + 1, 1, 'A' || r || '_' || e FROM range({n_rel}) a(r), range(50) b(e)""")
        con.execute(f"""INSERT INTO fact (fact_id, relation_id, position, entity_id, answer_id, entity_kind, predicate_degree)
                        SELECT r * {N_ENT} + e + 1, r + 1, e % 50, r * {N_ENT} + e + 1, r * 50 + e % 50 + 1,
                               CASE WHEN e < 50 THEN 'real' ELSE 'fake' END,
                               CASE WHEN e < 50 THEN 1 + (hash(r, e) % 500) ELSE 0 END
                        FROM range({n_rel}) a(r), range({N_ENT}) b(e)""")
        con.execute(f"""INSERT INTO query_form SELECT r * {N_QF} + q + 1, r + 1,
                               CASE WHEN q < 2 THEN 'open' ELSE 'closed' END, q % 2,
                               CASE WHEN q < 2 THEN 'open_' ELSE 'closed_' END || (q % 2), 'Q {{entity}}'
                        FROM range({n_rel}) a(r), range({N_QF}) b(q)""")
        con.execute(f"""INSERT INTO context_template SELECT r * 3 + t + 1, r + 1, ['base', 'assertive', 'negation'][t + 1], 0, 'x'
                        FROM range({n_rel}) a(r), range(3) b(t)""")
        con.execute(
            """INSERT INTO sample VALUES (1, 1, 'paper', 11, 100, 600, 'base,assertive,negation', '{}', 'bench', now()::TIMESTAMP)"""
        )
        # context o of relation r mentions entity o // 6; type (o % 6) // 2
        con.execute(f"""INSERT INTO context SELECT r * {N_CTX} + o + 1, 1, r + 1, o, r * 3 + (o % 6) // 2 + 1,
                               ['base', 'assertive', 'negation'][(o % 6) // 2 + 1], r * {N_ENT} + o // 6 + 1,
                               r * 50 + hash(r, o) % 50 + 1, 'ctx ' || r || ' ' || o
                        FROM range({n_rel}) a(r), range({N_CTX}) b(o)""")
        con.execute(f"""INSERT INTO sample_fact SELECT 1, r * {N_ENT} + e + 1, r + 1, e
                        FROM range({n_rel}) a(r), range({N_ENT}) b(e)""")
    print(f"  dataset tables: {time.perf_counter() - t0:.1f} s", flush=True)
    for m in range(n_models):
        t0 = time.perf_counter()
        run_id = m + 1
        with wh.transaction():
            con.execute(f"""INSERT INTO run (run_id, kind, sample_id, dataset_id, model, estimator, seed, config_json,
                                             ctxprior_version, status, started_at)
                            VALUES ({run_id}, 'persuasion', 1, 1, 'bench-model-{m}', 'first-token', 11, '{{}}', 'bench',
                                    'done', now()::TIMESTAMP)""")
            # psi = noise + relevant 0.8 + assertive 0.1 (closed only) + fake 0.2 + model-size trend
            con.execute(f"""INSERT INTO persuasion
                SELECT {run_id}, r * {N_QF} + q + 1, r * {N_ENT} + e + 1, r * {N_CTX} + o + 1,
                       (hash({run_id}, r, q, e, o) % 1000000) / 1e6 * 0.5
                       + CASE WHEN o // 6 = e THEN 0.8 + 0.05 * {m} ELSE 0 END
                       + CASE WHEN (o % 6) // 2 = 1 AND q >= 2 THEN 0.1 ELSE 0 END
                       + CASE WHEN e >= 50 THEN 0.2 ELSE 0 END,
                       1.0
                FROM range({n_rel}) a(r), range({N_QF}) b(q), range({N_ENT}) c(e), range({N_CTX}) d(o)""")
            con.execute(f"""INSERT INTO susceptibility
                SELECT run_id, query_form_id, fact_id, avg(persuasion), 1.0, 1.0, count(*), NULL, NULL
                FROM persuasion WHERE run_id = {run_id} GROUP BY ALL""")
            con.execute(f"""INSERT INTO generation
                SELECT run_id, query_form_id, fact_id, context_id, '',
                       CASE WHEN persuasion > 0.9 THEN 'CONTEXT' WHEN persuasion < 0.3 THEN 'ORIGINAL' ELSE 'OTHER' END
                FROM persuasion WHERE run_id = {run_id}""")
        print(
            f"  model {m}: 30M persuasion + generation rows in {time.perf_counter() - t0:.1f} s", flush=True
        )


def naive(wh, run_id: int, n_rel: int, k: int) -> tuple[float, int]:
    """pandas groupby + one scipy ttest_ind(permutation) per test, on `n_rel` relations of one run.

    Runs the relevance, assertive, negation and familiarity tests (open and closed) of those
    relations; returns (seconds, tests)."""
    import numpy as np
    import scipy.stats as st

    t0 = time.perf_counter()
    df = wh.df(f"""SELECT p.persuasion, p.fact_id, q.query_type, f.relation_id, c.context_type,
                          (c.entity_id = f.entity_id) AS relevant, f.entity_kind
                   FROM persuasion p JOIN fact f USING (fact_id) JOIN query_form q USING (query_form_id)
                   JOIN context c USING (context_id)
                   WHERE p.run_id = {run_id} AND f.relation_id <= {n_rel}""")
    chi = wh.df(f"""SELECT s.susceptibility, f.relation_id, q.query_type, f.entity_kind
                    FROM susceptibility s JOIN fact f USING (fact_id) JOIN query_form q USING (query_form_id)
                    WHERE s.run_id = {run_id} AND f.relation_id <= {n_rel}""")
    df["query_form_id"] = 0
    tests = 0
    rng = np.random.default_rng(0)

    def ttest(a, b, alt):
        return st.ttest_ind(a, b, alternative=alt, method=st.PermutationMethod(n_resamples=k, rng=rng)).pvalue

    for (rel, qt), d in df.groupby(["relation_id", "query_type"]):
        u = d.groupby(["fact_id", "relevant"])["persuasion"].mean().reset_index()
        ttest(u.loc[u.relevant, "persuasion"], u.loc[~u.relevant, "persuasion"], "greater")
        u = d.groupby(["fact_id", "context_type"])["persuasion"].mean().reset_index()
        ttest(
            u.loc[u.context_type == "assertive", "persuasion"],
            u.loc[u.context_type == "base", "persuasion"],
            "greater",
        )
        ttest(
            u.loc[u.context_type == "negation", "persuasion"],
            u.loc[u.context_type == "base", "persuasion"],
            "two-sided",
        )
        c = chi[(chi.relation_id == rel) & (chi.query_type == qt)]
        ttest(
            c.loc[c.entity_kind == "fake", "susceptibility"],
            c.loc[c.entity_kind == "real", "susceptibility"],
            "greater",
        )
        tests += 4
    return time.perf_counter() - t0, tests


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=6)
    ap.add_argument("--relations", type=int, default=125)
    ap.add_argument("--k", type=int, default=10_000)
    ap.add_argument("--naive-relations", type=int, default=3)
    ap.add_argument(
        "--db", help="warehouse path (default: a temp file); an existing benchmark file is reused"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temp warehouse")
    ap.add_argument("--analyze-runs", type=int, help="analyze only the first N runs (default: all)")
    a = ap.parse_args(argv)

    from ctxprior.analyses.driver import analyze
    from ctxprior.storage import open_store

    tmp = None
    path = a.db
    if path is None:
        tmp = tempfile.mkdtemp(prefix="ctxprior-bench-")
        path = os.path.join(tmp, "bench.duckdb")
    fresh = not os.path.exists(path)
    wh = open_store(path)
    if fresh:
        print(
            f"building {a.models} models x {a.relations} relations x {N_QF} query forms x {N_ENT} entities x "
            f"{N_CTX} contexts in {path}",
            flush=True,
        )
        t0 = time.perf_counter()
        build(wh, a.relations, a.models)
        print(f"built in {time.perf_counter() - t0:.1f} s", flush=True)
    n_runs = wh.scalar("SELECT count(*) FROM run")
    n_rows = wh.scalar("SELECT count(*) FROM persuasion")
    print(f"warehouse: {n_runs} runs, {n_rows:,} persuasion rows", flush=True)

    only = [
        "relevance",
        "assertive",
        "negation",
        "familiarity",
        "answer-groups",
        "mr",
        "reliability",
        "degree",
    ]
    run_ids = [r[0] for r in wh.query("SELECT run_id FROM run ORDER BY 1")][: a.analyze_runs or None]
    n_runs = len(run_ids)
    t0, c0 = time.perf_counter(), time.process_time()
    timings: dict = {}
    analyze(wh, run_ids, only=only, k=a.k, seed=0, log=lambda m: print("  " + m, flush=True), timings=timings)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    print("  " + ", ".join(f"{n} {s:.1f} s" for n, s in timings.items()), flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  machine: {os.cpu_count()} cores, load average {load:.1f} during the run", flush=True)
    ids = ", ".join(map(str, run_ids))
    n_perm = wh.scalar(
        f"SELECT count(*) FROM analysis_result WHERE k IS NOT NULL AND skip_reason IS NULL "
        f"AND run_id IN ({ids})"
    )
    n_all = wh.scalar(f"SELECT count(*) FROM analysis_result WHERE run_id IN ({ids})")
    per_model = total / n_runs
    print(
        f"suite (k={a.k}): {total:.1f} s wall, {cpu:.1f} s CPU (all threads) for {n_runs} models = "
        f"{per_model:.1f} s wall per model; {n_perm} permutation tests, {n_all} result rows",
        flush=True,
    )

    c1 = time.process_time()
    secs, tests = naive(wh, 1, a.naive_relations, a.k)
    naive_cpu = time.process_time() - c1
    per_test = secs / tests
    naive_total = per_test * n_perm
    print(
        f"naive loop: {secs:.1f} s for {tests} tests on {a.naive_relations} relations of one model "
        f"({per_test:.3f} s/test) -> extrapolated {naive_total:.0f} s for the suite's {n_perm} tests "
        f"({naive_total / n_runs:.0f} s per model)"
    )
    naive_cpu_total = naive_cpu / tests * n_perm
    print(f"naive CPU: {naive_cpu:.1f} s -> extrapolated {naive_cpu_total:.0f} s CPU")
    print(
        f"ratio naive / batched: {naive_total / total:.1f}x wall, {naive_cpu_total / cpu:.1f}x CPU "
        f"(target: < 120 s per model, >= 10x)"
    )
    wh.close()
    if tmp and not a.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
