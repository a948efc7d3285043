"""Co-occurrence counting: word splitting, exact planted counts, shards, resume, executors, bad input."""

from __future__ import annotations

import json
import random
import string

import pytest
from covariates_helpers import FACTS, build_warehouse, count_texts, oracle, write_jsonl

from ctxprior.covariates.counting import CountSpec
from ctxprior.covariates.text import normalize, normalize_batch, words
from ctxprior.storage import open_store

FILL = " ".join(["filler"] * 49)  # 49 words between two names -> distance 50

# Planted documents: (text, note). Expected counts per fact are checked by hand below and by the oracle.
DOCS_SHARD1 = [
    "Paris Hilton was born in New York.",  # overlap: Paris inside Paris Hilton
    "Paris, France.",  # punctuation; France-Paris distance 1
    f"France {FILL} Paris",  # window edge: distance 50 counts
]
DOCS_SHARD2 = [
    f"France {FILL} filler Paris",  # distance 51: does not count
    "the U.S. capital is Washington, D.C. indeed",  # punctuation inside names
    "apple pie in Cupertino",  # case: only with --ignore-case
]
DOCS_SHARD3 = [
    "We flew to France",  # ends with France ...
    "Paris was lovely. New",  # ... next doc starts with Paris: no pair
    "York Hilton Hilton Hilton",  # New | York across documents: no match
]
TXT_SHARD = "Paris Paris\nFrance\n\nthe PARIS france Paris\n"  # two paragraphs = two documents
ALL_DOCS = DOCS_SHARD1 + DOCS_SHARD2 + DOCS_SHARD3 + ["Paris Paris\nFrance", "the PARIS france Paris"]


def make_corpus(root):
    write_jsonl(
        root / "s1.jsonl.zst",
        [{"text": d, "meta": {"i": i}} for i, d in enumerate(DOCS_SHARD1)] + ["{not json"],
    )
    write_jsonl(
        root / "s2.jsonl.gz",
        [{"text": DOCS_SHARD2[0]}, {"meta": "no text here"}] + [{"text": d} for d in DOCS_SHARD2[1:]],
    )
    write_jsonl(root / "more" / "s3.jsonl", [{"text": d} for d in DOCS_SHARD3])
    (root / "more" / "s4.txt").write_text(TXT_SHARD)
    (root / "more" / "README.md").write_text("not a corpus file; ignored in folders")
    return root


@pytest.fixture
def toy(db_path, tmp_path):
    build_warehouse(db_path)
    return make_corpus(tmp_path / "corpus")


def view_rows(db_path, name):
    with open_store(db_path, read_only=True) as store:
        rows = store.query(
            f'SELECT relation, entity, answer, cooccurrence, entity_count, answer_count, "window" '
            f"FROM cov_{name} ORDER BY relation, entity, answer"
        )
    return {(r[0], r[1], r[2]): r[3:] for r in rows}


# -- word splitting -----------------------------------------------------------------------------
def test_words_follow_the_paper():
    assert words("Paris, France.") == ["Paris", "France"]
    assert words("the U.S. (and) Hilton's “dog” — ok") == ["the", "US", "and", "Hiltons", "dog", "ok"]
    assert words("Hilton's dog", punctuation="space") == ["Hilton", "s", "dog"]
    assert words("New\tYork\u00a0City\n") == ["New", "York", "City"]
    assert normalize("Washington, D.C.") == "Washington DC"
    assert normalize("PARIS", ignore_case=True) == "paris"
    assert normalize("!!!") == ""


@pytest.mark.parametrize("punctuation", ["delete", "space"])
def test_batch_normalization_equals_per_document(punctuation):
    rnd = random.Random(7)
    alphabet = string.ascii_letters + string.punctuation + "  \t\n" + "éß’“”—…\u00a0\u2003\u3000Ωж中!"
    docs = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80))) for _ in range(300)]
    docs += ["", "   ", "...", "a\x00b"]
    for ic in (False, True):
        s, buf, starts = normalize_batch(docs, ignore_case=ic, punctuation=punctuation)
        text = buf.tobytes().decode("utf-8")
        assert s.encode("latin-1") == buf.tobytes()
        got = [d.split() for d in text.split("\x00")]
        assert got == [words(d, ic, punctuation) for d in docs]
        assert len(starts) == len(docs) and all(buf[i] == 32 for i in starts)


# -- counting engine vs brute force -------------------------------------------------------------
def test_counter_equals_bruteforce_oracle():
    rnd = random.Random(3)
    vocab = [
        "Paris",
        "Hilton",
        "France",
        "New",
        "York",
        "x",
        "y",
        "the",
        "paris",
        "U.S.",
        "D.C.",
        "Washington",
    ]
    names = ["Paris", "Paris Hilton", "France", "New York", "Hilton", "US", "Washington DC", "York New York"]
    pairs_named = [
        ("Paris", "France"),
        ("Paris Hilton", "New York"),
        ("Hilton", "Hilton"),
        ("US", "Washington DC"),
        ("Paris", "Paris Hilton"),
        ("York New York", "New York"),
        ("Hilton", "France"),
    ]
    docs = [
        " ".join(rnd.choice(vocab) + rnd.choice(["", "", ",", "."]) for _ in range(rnd.randint(0, 40)))
        for _ in range(200)
    ]
    for window in (1, 3, 7):
        for ic in (False, True):
            ns = sorted({normalize(n, ic) for n in names})
            idx = {n: i for i, n in enumerate(ns)}
            pairs = sorted(
                {tuple(sorted((idx[normalize(a, ic)], idx[normalize(b, ic)]))) for a, b in pairs_named}
            )
            c = count_texts(CountSpec(ns, pairs, window=window, ignore_case=ic), docs)
            for a, b in pairs_named:
                p = pairs.index(tuple(sorted((idx[normalize(a, ic)], idx[normalize(b, ic)]))))
                co, na, nb = oracle(docs, a, b, window, ic)
                assert (
                    c.pair_counts[p],
                    c.name_counts[idx[normalize(a, ic)]],
                    c.name_counts[idx[normalize(b, ic)]],
                ) == (co, na, nb), (a, b, window, ic)


# -- end to end through the CLI -----------------------------------------------------------------
def test_planted_counts_exact(toy, run_cli, db_path):
    r = run_cli(
        "covariates",
        "cooccurrence",
        toy / "s1.jsonl.zst",
        toy / "s2.jsonl.gz",
        toy / "more",
        "--name",
        "toy_cooc",
        "--workers",
        "1",
    )
    assert r.exit_code == 0, r.output
    assert "shards: 4 counted, 0 already counted (skipped), 0 failed, of 4" in r.output
    assert "skipped 1 non-JSON lines and 1 lines without a string 'text' field" in r.output
    assert "s1.jsonl.zst line 4: not JSON" in r.output
    v = view_rows(db_path, "toy_cooc")
    # France-Paris: "Paris, France" (1) + window edge 50 (1) + txt doc 1 "Paris Paris France" (2);
    #   distance 51 (0), across documents (0), "PARIS france Paris" (other case, 0).
    # Paris: Paris Hilton, Paris, (edge) Paris, (51) Paris, Paris was, Paris Paris, ... Paris = 8
    assert v[("capital", "France", "Paris")] == (4, 5, 8, 50)
    assert v[("reverse-capital", "Paris", "France")] == (4, 8, 5, 50)  # symmetric
    # Paris Hilton - New York: doc 1 only; "New | York" across documents never matches
    assert v[("birthPlace", "Paris Hilton", "New York")] == (1, 1, 1, 50)
    assert v[("capital", "U.S.", "Washington, D.C.")] == (1, 1, 1, 50)
    assert v[("headquarters", "Apple", "Cupertino")] == (0, 0, 1, 50)  # case-sensitive by default
    assert v[("capital", "Zorbania", "Paris")] == (0, 0, 8, 50)  # fake entity never seen
    # Hilton-Hilton: "Hilton Hilton Hilton" = 3 unordered pairs; Hilton inside Paris Hilton counts too
    assert v[("capital", "Hilton", "Hilton")] == (3, 4, 4, 50)
    assert v[("capital", "!!!", "Paris")] == (None, None, 8, 50)  # no words after punctuation removal
    for (rel, ent, ans), (co, ne, na, _) in v.items():
        if co is not None:
            assert (co, ne, na) == oracle(ALL_DOCS, ent, ans, 50), (ent, ans)
    with open_store(db_path, read_only=True) as store:
        cat = store.query(
            "SELECT kind, status, key_columns, value_columns, n_rows FROM covariate WHERE name='toy_cooc'"
        )
        assert cat == [
            (
                "cooccurrence",
                "complete",
                "dataset,relation,entity,answer",
                "cooccurrence,entity_count,answer_count,window",
                len(FACTS),
            )
        ]
        assert store.scalar("SELECT sum(n_bad_json) FROM cooccurrence_shard") == 1
        assert store.scalar("SELECT sum(n_missing_text) FROM cooccurrence_shard") == 1
        assert store.scalar("SELECT sum(n_documents) FROM cooccurrence_shard") == len(ALL_DOCS)
        cols = [d[0] for d in store.execute("SELECT * FROM cov_toy_cooc LIMIT 0").description]
        assert cols == [
            "dataset",
            "relation",
            "entity",
            "answer",
            "cooccurrence",
            "entity_count",
            "answer_count",
            "window",
        ]


def test_ignore_case_window_and_punctuation_options(toy, run_cli, db_path):
    r = run_cli(
        "covariates",
        "cooccurrence",
        toy,
        "--name",
        "ci",
        "--ignore-case",
        "--window",
        "1",
        "--punctuation",
        "space",
        "--workers",
        "1",
    )
    assert r.exit_code == 0, r.output
    v = view_rows(db_path, "ci")
    for (rel, ent, ans), (co, ne, na, w) in v.items():
        if co is not None:
            assert (co, ne, na) == oracle(ALL_DOCS, ent, ans, 1, True, "space"), (ent, ans)
    assert v[("headquarters", "Apple", "Cupertino")][:3] == (0, 1, 1)
    assert (
        v[("capital", "France", "Paris")][0] == 4
    )  # Paris,France | Paris France | PARIS france | france Paris


def test_resume_skips_counted_shards_and_merges_exactly(toy, run_cli, db_path):
    r = run_cli("covariates", "cooccurrence", toy / "s1.jsonl.zst", "--name", "part", "--workers", "1")
    assert r.exit_code == 0, r.output
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT status FROM covariate WHERE name='part'") == "complete"
    r = run_cli("covariates", "cooccurrence", toy, "--name", "part", "--workers", "1")
    assert r.exit_code == 0, r.output
    assert "shards: 3 counted, 1 already counted (skipped)" in r.output
    r = run_cli("covariates", "cooccurrence", toy, "--name", "full", "--workers", "1")
    assert view_rows(db_path, "part") == view_rows(db_path, "full")
    r = run_cli("covariates", "cooccurrence", toy, "--name", "part", "--workers", "1")
    assert "shards: 0 counted, 4 already counted (skipped)" in r.output
    with open_store(db_path, read_only=True) as store:
        assert (
            store.scalar(
                "SELECT count(*) FROM cooccurrence_shard WHERE covariate_id = "
                "(SELECT covariate_id FROM covariate WHERE name='part')"
            )
            == 4
        )
    # other settings under the same name are refused; --restart recounts
    r = run_cli("covariates", "cooccurrence", toy, "--name", "part", "--window", "5")
    assert r.exit_code == 2 and "window: 50 -> 5" in r.output
    r = run_cli(
        "covariates", "cooccurrence", toy, "--name", "part", "--window", "5", "--restart", "--workers", "1"
    )
    assert r.exit_code == 0, r.output
    assert all(w == 5 for *_, w in view_rows(db_path, "part").values())


def test_local_pool_equals_serial(toy, run_cli, db_path):
    assert run_cli("covariates", "cooccurrence", toy, "--name", "serial", "--workers", "1").exit_code == 0
    r = run_cli("covariates", "cooccurrence", toy, "--name", "pool", "--workers", "2")
    assert r.exit_code == 0, r.output
    assert view_rows(db_path, "serial") == view_rows(db_path, "pool")


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time (tests/test_ray.py)
def test_ray_equals_local(toy, run_cli, db_path):
    pytest.importorskip("ray")
    assert run_cli("covariates", "cooccurrence", toy, "--name", "loc", "--workers", "1").exit_code == 0
    r = run_cli("covariates", "cooccurrence", toy, "--name", "ray", "--executor", "ray", "--workers", "2")
    assert r.exit_code == 0, r.output
    assert view_rows(db_path, "ray") == view_rows(db_path, "loc")
    with open_store(db_path, read_only=True) as store:
        a = store.query(
            "SELECT path, sha256, n_documents, n_words FROM cooccurrence_shard s JOIN covariate c "
            "USING (covariate_id) WHERE c.name='loc' ORDER BY path"
        )
        b = store.query(
            "SELECT path, sha256, n_documents, n_words FROM cooccurrence_shard s JOIN covariate c "
            "USING (covariate_id) WHERE c.name='ray' ORDER BY path"
        )
    assert a == b and len(a) == 4


# -- bad input ----------------------------------------------------------------------------------
def catalog_rows(db_path):
    with open_store(db_path, read_only=True) as store:
        return store.query("SELECT * FROM covariate ORDER BY covariate_id")


def test_unreadable_zst_is_a_clear_error_and_changes_nothing(toy, run_cli, db_path, tmp_path):
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(b"this is not zstd at all" * 10)
    before = catalog_rows(db_path)
    r = run_cli("covariates", "cooccurrence", toy, bad, "--name", "x", "--workers", "1")
    assert r.exit_code == 2
    assert "bad.jsonl.zst: cannot read it as a zstd file" in r.output
    assert r.output.count("\n") == 1
    assert catalog_rows(db_path) == before


@pytest.mark.parametrize("ext", ["gz", "zst"])
def test_truncated_shard_fails_that_shard_only(toy, run_cli, db_path, tmp_path, ext):
    rows = [{"text": f"Paris France {i} " * 300} for i in range(300)]
    good = write_jsonl(tmp_path / "c2" / f"big.jsonl.{ext}", rows)
    data = good.read_bytes()
    trunc = tmp_path / "c2" / f"trunc.jsonl.{ext}"
    trunc.write_bytes(data[: len(data) // 2])
    r = run_cli("covariates", "cooccurrence", good, trunc, "--name", "t", "--workers", "1")
    assert r.exit_code == 2
    assert "1 shard(s) failed and were not stored" in r.output and f"trunc.jsonl.{ext}" in r.output
    assert "EOFError" in r.output
    with open_store(db_path, read_only=True) as store:
        assert store.query("SELECT status FROM covariate WHERE name='t'") == [("partial",)]
        assert store.scalar("SELECT count(*) FROM cooccurrence_shard") == 1


def test_missing_text_field_everywhere_is_reported(db_path, run_cli, tmp_path):
    build_warehouse(db_path)
    f = write_jsonl(tmp_path / "c.jsonl", [{"content": "Paris France"}, {"content": "x"}, [1, 2], "null"])
    r = run_cli("covariates", "cooccurrence", f, "--name", "m", "--workers", "1")
    assert r.exit_code == 0, r.output
    assert "skipped 0 non-JSON lines and 4 lines without a string 'text' field" in r.output
    r = run_cli("covariates", "cooccurrence", f, "--name", "m2", "--text-field", "content", "--workers", "1")
    assert view_rows(db_path, "m2")[("capital", "France", "Paris")][:3] == (1, 1, 1)


@pytest.mark.parametrize(
    "args, message",
    [
        # out-of-range and unknown values of declared options: tests/test_command_options.py's walk
        (["--dataset", "nope"], "--dataset nope: no such dataset; the warehouse has toy"),
        (["--name", "Bad-Name"], "--name 'Bad-Name': use lower-case letters"),
    ],
)
def test_bad_options(toy, run_cli, db_path, args, message):
    before = catalog_rows(db_path)
    base = ["covariates", "cooccurrence", str(toy)]
    if "--name" not in args:
        base += ["--name", "ok"]
    r = run_cli(*base, *args)
    assert r.exit_code == 2 and message in r.output, r.output
    assert catalog_rows(db_path) == before


def test_not_a_corpus_file(db_path, run_cli, tmp_path):
    build_warehouse(db_path)
    f = tmp_path / "x.csv"
    f.write_text("a,b\n")
    r = run_cli("covariates", "cooccurrence", f, "--name", "x")
    assert r.exit_code == 2 and "x.csv: not a corpus file" in r.output
    r = run_cli("covariates", "cooccurrence", tmp_path / "nope", "--name", "x")
    assert r.exit_code == 2 and "no such file or folder" in r.output


def test_empty_warehouse(run_cli, tmp_path):
    f = write_jsonl(tmp_path / "c.jsonl", [{"text": "x"}])
    r = run_cli("covariates", "cooccurrence", f, "--name", "x")
    assert r.exit_code == 2 and "has no dataset" in r.output


def test_view_joins_with_susceptibility_shape(toy, run_cli, db_path):
    """The documented join: USING (dataset, relation, entity, answer) gives one row per fact."""
    run_cli("covariates", "cooccurrence", toy, "--name", "j", "--workers", "1")
    with open_store(db_path, read_only=True) as store:
        n = store.scalar(
            "SELECT count(*) FROM v_entity v JOIN cov_j c USING (dataset, relation, entity, answer)"
        )
        assert n == len(FACTS)
        assert json.loads(store.scalar("SELECT params_json FROM covariate WHERE name='j'"))["window"] == 50


def test_pair_enumeration_in_chunks_is_exact(monkeypatch):
    """Dense names (every word a name) are paired in bounded chunks; chunk size never changes counts."""
    import ctxprior.covariates.counting as counting

    rnd = random.Random(1)
    docs = [" ".join(rnd.choice("abcdex") for _ in range(rnd.randint(0, 300))) for _ in range(50)]
    names = sorted(["a", "b", "c", "d", "e", "a b"])
    idx = {n: i for i, n in enumerate(names)}
    pairs = sorted({tuple(sorted((idx[x], idx[y]))) for x in names for y in names})
    spec = CountSpec(names, pairs, window=7)
    ref = count_texts(spec, docs)
    assert ref.pair_counts.sum() > 10000
    for chunk in (1, 3, 17):
        monkeypatch.setattr(counting, "CHUNK", chunk)
        got = count_texts(spec, docs)
        assert (got.pair_counts == ref.pair_counts).all() and (got.name_counts == ref.name_counts).all()
    co, na, nb = oracle(docs, "a b", "c", 7)
    assert ref.pair_counts[pairs.index(tuple(sorted((idx["a b"], idx["c"]))))] == co


def test_library_call_with_progress_bar(toy, db_path, capsys):
    from ctxprior.covariates.cooccurrence import cooccurrence

    with open_store(db_path) as store:
        rep = cooccurrence(store, [str(toy)], name="lib", workers=1, progress=True)
    assert rep.shards_counted == 4 and rep.bytes_text > 0 and rep.bytes_counted > 0
    assert "cooccurrence lib" in capsys.readouterr().err
