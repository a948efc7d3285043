"""`ctxprior fakes`: parsing and screening names, placement, the OpenAI-compatible client against a
local stand-in (tests/chat_mock.py), user files, provenance, and `sample` picking the fakes up."""

from __future__ import annotations

import json
import random
import string

import pytest
from chat_mock import ChatMock
from hypothesis import given, settings
from hypothesis import strategies as st
from warehouse_helpers import snapshot

from ctxprior.errors import UserError
from ctxprior.fakes import Screen, add_fakes, generate_fakes
from ctxprior.fakes.parse import name_key, name_problem, normalize_name, parse_names
from ctxprior.fakes.plan import class_counts
from ctxprior.fakes.prompts import PAPER_CLASS_PROMPTS, PAPER_SYSTEM, build_messages, plural_words
from ctxprior.ingest.demo import demo_path
from ctxprior.storage import open_store

KEY = "sk-test-0123456789secret"
KEY_ENV = "CTXPRIOR_TEST_CHAT_KEY"
GOOD = ["Velmoria", "Kestrania", "Ostravelia", "Quellara", "Zalovia", "Brennmark", "Tarvosk"]


def numbered(names) -> str:
    return "Here are some names:\n\n" + "\n".join(f"{i + 1}. {n}" for i, n in enumerate(names)) + "\n\nEnjoy!"


# -- parsing and normalization -------------------------------------------------------------------
@pytest.mark.quick
@pytest.mark.parametrize(
    "text,expected",
    [
        (numbered(["Velmoria", "Kestrania"]), ["Velmoria", "Kestrania"]),
        (
            "Sure! Here you go:\n- **Velmoria** - a small island nation in the north\n* Kestrania (fictional)\n• Udo König.",
            ["Velmoria", "Kestrania", "Udo König"],
        ),
        ('```json\n["Velmoria", "Kestrania"]\n```', ["Velmoria", "Kestrania"]),
        ('{"names": [{"name": "Velmoria"}, "Kestrania"]}', ["Velmoria", "Kestrania"]),
        ("Velmoria\n\nKestrania\n", ["Velmoria", "Kestrania"]),
        ("Velmoria, Kestrania, Ostravelia", ["Velmoria", "Kestrania", "Ostravelia"]),
        (
            "1) “Velmoria”\n2) 'Kestrania',\n(3) Brightvane Dynamics Inc.",
            ["Velmoria", "Kestrania", "Brightvane Dynamics Inc."],
        ),
        (
            "1. The Glass Orchard: Tales\n2. Dune: the story of a desert planet and its spice",
            ["The Glass Orchard: Tales", "Dune"],
        ),
        ("2001: A Space Odyssey\nBlade Runner", ["2001: A Space Odyssey", "Blade Runner"]),
        ("1. A: Velmoria\n2. Q: Kestrania", ["Velmoria", "Kestrania"]),
        ("I cannot help with that.", []),
        ("One example is France - one of the names, but not real, the answer is France", []),
        (
            "Velmoria\nbut not real\nLord of the Rings\niPhone Max",
            ["Velmoria", "Lord of the Rings", "iPhone Max"],
        ),
        (
            "1. Quercus fakeii\n2. but numbered lists are trusted",
            ["Quercus fakeii", "but numbered lists are trusted"],
        ),
        ("Sure, I can do that\nOkavia", ["Okavia"]),
        ("", []),
    ],
)
def test_parse_names(text, expected):
    assert [normalize_name(x) for x in parse_names(text)] == expected


@pytest.mark.parametrize(
    "raw,expected",
    [
        ('  "Velmoria"  ', "Velmoria"),
        ("Velmoria.", "Velmoria"),
        ("Velmoria,;", "Velmoria"),
        ("«Kestrania»", "Kestrania"),
        ("Ostra   velia", "Ostra velia"),
        ("Acme Ltd.", "Acme Ltd."),
        ('"Velmoria".', "Velmoria"),
        ("O'Brien", "O'Brien"),
        ("\u200bVelmoria\t", "Velmoria"),
        ("...", ""),
    ],
)
def test_normalize_name(raw, expected):
    assert normalize_name(raw) == expected


def test_name_problem():
    assert name_problem("") == "empty"
    assert name_problem("1234") == "not_a_name"
    assert name_problem("word " * 13) == "not_a_name"
    assert name_problem("x" * 101) == "not_a_name"
    assert name_problem("Udo König") is None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalize_is_idempotent(s):
    once = normalize_name(s)
    assert normalize_name(once) == once
    assert once == once.strip() and "  " not in once


WORD = st.text(alphabet=string.ascii_letters + "éüøß", min_size=1, max_size=8).map(
    lambda w: w[0].upper() + w[1:]
)
NAME = st.lists(WORD, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(NAME, min_size=1, max_size=12, unique_by=name_key),
    st.sampled_from(["num", "bullet", "json", "lines"]),
)
def test_parse_round_trip(names, fmt):
    if fmt == "num":
        text = numbered(names)
    elif fmt == "bullet":
        text = "Names:\n" + "\n".join(f"- {n}" for n in names)
    elif fmt == "json":
        text = "```json\n" + json.dumps(names, ensure_ascii=False) + "\n```"
    else:
        text = "\n".join(names)
    if fmt == "lines" and len(names) == 1 and names[0].count(",") >= 2:
        return
    got = [normalize_name(x) for x in parse_names(text)]
    assert got == [normalize_name(n) for n in names]


@settings(max_examples=200, deadline=None)
@given(NAME)
def test_screen_is_case_insensitive(name):
    s = Screen({})
    assert s.check(name) == normalize_name(name)
    assert s.check(f'  "{name.swapcase()}".') is None
    assert s.summary()["duplicate"]["count"] == 1


def test_screen_reasons():
    s = Screen({name_key("France"): "real_entity", name_key("Paris"): "answer"})
    assert [
        s.check(x)
        for x in [
            "france",
            "PARIS",
            "Velmoria",
            "velmoria",
            "",
            "42",
            "France: Paris",
            "England, France",
            "Kestrel - paris",
            "Paris Hilton",
            "Velmoria: Kestrel City",
        ]
    ] == [
        None,
        None,
        "Velmoria",
        None,
        None,
        None,
        None,
        None,
        None,
        "Paris Hilton",
        "Velmoria: Kestrel City",
    ]
    assert {r: v["count"] for r, v in s.summary().items()} == {
        "real_entity": 1,
        "answer": 1,
        "duplicate": 1,
        "empty": 1,
        "not_a_name": 1,
        "contains_real": 3,
    }
    assert s.n_rejected == 8


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200), st.lists(st.floats(0.001, 1.0), min_size=1, max_size=6))
def test_class_counts_add_up_and_stay_near_quota(n, fracs):
    classes = [(f"C{i}", f) for i, f in enumerate(fracs)]
    counts = dict(class_counts(n, classes))
    assert sum(counts.values()) == n
    total = sum(fracs)
    for c, f in classes:
        assert abs(counts.get(c, 0) - n * f / total) < 1


def test_prompts():
    assert plural_words("Country") == "countries"
    assert plural_words("FictionalEntity") == "fictional entities"
    assert plural_words("Box") == "boxes" and plural_words("River") == "rivers"
    paper = build_messages(
        "http://schema.org/Person", 1000, "paper", "birthPlace", "Q: x {entity}", ["Adele"]
    )
    assert paper == [
        {"role": "system", "content": PAPER_SYSTEM},
        {"role": "user", "content": PAPER_CLASS_PROMPTS["Person"].format(1000)},
    ]
    rel = build_messages(
        "City",
        7,
        "relation",
        "reverse-capital",
        "Q: Which country has {entity} as capital?\nA:",
        ["Prague", "Brussels"],
    )
    user = rel[1]["content"]
    assert user.startswith("Give me a list of 7 names of cities that are not real")
    assert "'reverse-capital'" in user and "Q: Which country has X as capital? A:" in user
    assert "Prague; Brussels" in user and "numbered list" in user


# -- fixtures ------------------------------------------------------------------------------------
def _demo_without_fakes(path, degrees: bool = False):
    data = json.loads(demo_path("demo").read_text())
    rng = random.Random(0)
    for rd in data.values():
        rd.pop("gpt_fake_entities", None)
        rd.pop("fake_entity_classes", None)
        if degrees:
            rd["entity_uri_to_degree"] = [rng.randrange(1000) for _ in rd["entities"]]
    path.write_text(json.dumps(data))
    return data


@pytest.fixture
def nofakes(tmp_path, run_cli):
    """The bundled demo facts without their fakes, ingested as dataset 'nofakes'."""
    data = _demo_without_fakes(tmp_path / "nofakes.json")
    assert run_cli("ingest", "yago-qec", tmp_path / "nofakes.json", "--name", "nofakes").exit_code == 0
    return data


@pytest.fixture
def mock():
    with ChatMock(default=("ok", numbered(GOOD)), key=KEY) as m:
        yield m


@pytest.fixture
def gen(run_cli, mock, monkeypatch):
    """run `fakes generate` against the stand-in: gen("--n", 5, ...) -> click Result."""
    monkeypatch.setenv(KEY_ENV, KEY)

    def _gen(*args, relation="capital", dataset="nofakes"):
        return run_cli(
            "fakes",
            "generate",
            "--dataset",
            dataset,
            "--relation",
            relation,
            "--model",
            "openai:mock-model",
            "--base-url",
            mock.url,
            "--api-key-env",
            KEY_ENV,
            *args,
        )

    return _gen


def fake_rows(db, relation="capital"):
    with open_store(db, read_only=True) as store:
        return store.query(
            "SELECT f.position, e.name, e.entity_class, a.name, re.name FROM fact f "
            "JOIN relation r USING (relation_id) JOIN entity e USING (entity_id) LEFT JOIN answer a USING (answer_id) "
            "JOIN fact rf ON rf.relation_id = f.relation_id AND rf.position = f.position AND rf.entity_kind = 'real' "
            "JOIN entity re ON re.entity_id = rf.entity_id "
            "WHERE r.short_name = ? AND f.entity_kind = 'fake' ORDER BY f.position",
            [relation],
        )


def one_line_error(res, *fragments):
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    for f in fragments:
        assert f in lines[0], res.output
    assert KEY not in res.output


# -- the OpenAI-compatible path ------------------------------------------------------------------
def test_generate_stores_fakes_with_borrowed_answers_and_provenance(gen, mock, db_path, nofakes):
    res = gen("--n", 5, "--seed", 7)
    assert res.exit_code == 0, res.output
    assert "5 of 5 fakes stored for 'capital'" in res.output and "rejected: none" in res.output
    rows = fake_rows(db_path)
    rd = nofakes["http://yago-knowledge.org/resource/capital"]
    # no degrees in this file: the first five positions; each fake borrows that real fact's answer
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4]
    assert [r[1] for r in rows] == GOOD[:5]
    assert [r[3] for r in rows] == rd["answers"][:5] and [r[4] for r in rows] == rd["entities"][:5]
    assert {r[2] for r in rows} == {"Country"}  # the real entity's class
    # what was sent
    (req,) = mock.requests
    assert req["path"] == "/v1/chat/completions" and req["headers"]["Authorization"] == f"Bearer {KEY}"
    body = req["body"]
    assert body["model"] == "mock-model" and body["seed"] == 7 and body["temperature"] == 1.0
    assert body["messages"][0]["content"] == PAPER_SYSTEM
    assert "France; Germany; Italy; Spain; Japan" in body["messages"][1]["content"]
    # provenance, and never the key
    with open_store(db_path, read_only=True) as store:
        g = store.df("SELECT * FROM fake_generation").iloc[0]
        links = store.query(
            "SELECT position, raw_name, call_index, class_name FROM fake_generation_fact ORDER BY position"
        )
    assert g.method == "model" and g.model == "openai:mock-model" and g.endpoint == mock.url
    assert g.model_revision == "mock-model fp_mock" and g.seed == 7 and g.status == "complete"
    assert (g.n_requested, g.n_accepted, g.n_rejected) == (5, 5, 0)
    calls = json.loads(g.calls_json)
    assert (
        len(calls) == 1
        and calls[0]["messages"] == body["messages"]
        and calls[0]["response"] == numbered(GOOD)
    )
    assert json.loads(g.params_json)["timeout"] == 120.0
    assert links == [(i, GOOD[i], 0, "Country") for i in range(5)]
    assert all(KEY not in str(v) for v in g.values)
    assert KEY not in open(db_path, "rb").read().decode("latin-1")


def test_duplicates_and_real_collisions_are_rejected_and_counted(gen, mock, db_path, nofakes):
    mock.script = [
        ("ok", numbered(["France", "Velmoria", "VELMORIA", "Paris", "Kestrania", "1234"])),
        ("ok", numbered(["kestrania", "Prague", "Ostravelia", "Zalovia"])),
    ]
    res = gen("--n", 3, "--seed", 3)
    assert res.exit_code == 0, res.output
    assert "rejected: answer 1, duplicate 2, not_a_name 1, real_entity 2" in res.output
    assert [r[1] for r in fake_rows(db_path)] == ["Velmoria", "Kestrania", "Ostravelia"]
    assert [r["body"]["seed"] for r in mock.requests] == [3, 4]  # call k uses seed + k
    with open_store(db_path, read_only=True) as store:
        rej = json.loads(store.scalar("SELECT rejected_json FROM fake_generation"))
    assert rej["real_entity"] == {
        "count": 2,
        "examples": ["France", "Prague"],
    }  # Prague: reverse-capital entity
    assert rej["duplicate"]["examples"] == ["VELMORIA", "kestrania"]
    # a second call may not reuse the fakes it just stored
    mock.script = [("ok", numbered(["Velmoria", "Zalovia"]))]
    res = gen("--n", 1)
    assert res.exit_code == 0 and "existing_fake 1" in res.output
    res = gen("--n", 1, relation="officialLanguage")
    assert res.exit_code == 0 and "fake_elsewhere 3" in res.output, (
        res.output
    )  # Velmoria, Kestrania, Ostravelia


def test_paper_prompt_style_sends_the_authors_prompt(gen, mock, nofakes):
    assert gen("--n", 2, "--prompt-style", "paper", relation="reverse-author").exit_code == 0
    msgs = mock.requests[0]["body"]["messages"]
    assert msgs[1]["content"] == PAPER_CLASS_PROMPTS["Person"].format(
        2
    )  # exactly the names needed, as the authors


def test_http_500_is_retried(gen, mock, db_path, nofakes):
    mock.script = [("status", 500), ("status", 503), ("status", 429)]
    res = gen("--n", 2, "--retries", 3)
    assert res.exit_code == 0, res.output
    assert len(mock.requests) == 4 and len(fake_rows(db_path)) == 2


@pytest.mark.parametrize("case", ["http_500", "timeout", "garbage", "no_names", "bad_key", "not_found"])
def test_endpoint_failures_one_line_exit_2_warehouse_unchanged(
    case, gen, mock, db_path, nofakes, monkeypatch
):
    args = ["--n", 3, "--max-rounds", 2]
    expect = {
        "http_500": ("HTTP 500 after 2 attempt(s)",),
        "timeout": ("no answer within 0.3 s", "--timeout"),
        "garbage": ("not an OpenAI chat completion", "<html>"),
        "no_names": ("accepted 0 of 3", "no usable names", "nothing stored"),
        "bad_key": ("HTTP 401", "check the API key", "***"),
        "not_found": ("HTTP 404", "--base-url"),
    }[case]
    if case == "http_500":
        mock.default, args = ("status", 500), args + ["--retries", 1]
    elif case == "timeout":
        mock.default, args = ("sleep", 2.0, numbered(GOOD)), args + ["--timeout", 0.3, "--retries", 0]
    elif case == "garbage":
        mock.default = ("raw", b"<html>502 Bad Gateway</html>")
    elif case == "no_names":
        mock.default = ("ok", "I cannot help with that.")
    elif case == "bad_key":
        monkeypatch.setenv(KEY_ENV, KEY + "-wrong")
    elif case == "not_found":
        mock.url = mock.url.removesuffix("/v1")  # the client then posts to /chat/completions
    before = snapshot(db_path)
    res = gen(*args)  # --base-url is read from mock.url at call time
    one_line_error(res, *expect)
    if case == "bad_key":
        assert KEY + "-wrong" not in res.output
    if case == "no_names":
        assert len(mock.requests) == 2  # --max-rounds
    assert snapshot(db_path) == before


def test_partial(gen, mock, db_path, nofakes):
    mock.default = ("ok", numbered(["Velmoria", "Kestrania"]))
    before = snapshot(db_path)
    one_line_error(gen("--n", 4, "--max-rounds", 2), "accepted 2 of 4", "--allow-partial")
    assert snapshot(db_path) == before
    res = gen("--n", 4, "--max-rounds", 2, "--allow-partial")
    assert res.exit_code == 0 and "2 of 4 fakes stored" in res.output and "partial" in res.output
    with open_store(db_path, read_only=True) as store:
        assert store.scalar("SELECT status FROM fake_generation") == "partial"


@pytest.mark.parametrize(
    "args,fragments",
    [
        (("--dataset", "nope"), ("unknown dataset 'nope'",)),
        (("--relation", "capitol"), ("unknown relation 'capitol'", "did you mean")),
        (("--n", 31), ("--n 31", "only 30 real entities without a fake")),
        (("--n", 0), ("--n 0",)),
        (("--api-key-env", "CTXPRIOR_NO_SUCH_VAR"), ("CTXPRIOR_NO_SUCH_VAR is not set",)),
        (("--prompt-style", "paper", "--max-rounds", 0), ("--max-rounds 0",)),
        (("--temperature", -1), ("--temperature -1",)),
    ],
)
def test_bad_options_one_line_exit_2_warehouse_unchanged(
    args, fragments, run_cli, db_path, mock, nofakes, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY)
    opts = {"--dataset": "nofakes", "--relation": "capital", "--n": 3, "--api-key-env": KEY_ENV}
    rest = []
    it = iter(args)
    for a in it:
        if a in opts:
            opts[a] = next(it)
        else:
            rest.append(a)
    before = snapshot(db_path)
    res = run_cli(
        "fakes",
        "generate",
        "--model",
        "openai:m",
        "--base-url",
        mock.url,
        *[x for kv in opts.items() for x in kv],
        *rest,
    )
    one_line_error(res, *fragments)
    assert snapshot(db_path) == before
    assert not mock.requests


def test_missing_openai_key_for_openai_com(run_cli, db_path, nofakes, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = snapshot(db_path)
    res = run_cli(
        "fakes",
        "generate",
        "--dataset",
        "nofakes",
        "--relation",
        "capital",
        "--n",
        5,
        "--model",
        "openai:gpt-4",
    )
    one_line_error(res, "OPENAI_API_KEY is not set")
    assert snapshot(db_path) == before


def test_relation_full_of_fakes(gen, run_cli, db_path, mock):
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    before = snapshot(db_path)
    one_line_error(gen("--n", 1, dataset="demo"), "already has a fake for every real entity")
    assert snapshot(db_path) == before


def test_endpoint_url_is_stored_without_credentials():
    from ctxprior.fakes.llm import OpenAIChat, public_url

    assert public_url("https://user:pw@example.org:8443/v1/?key=abc#x") == "https://example.org:8443/v1"
    chat = OpenAIChat("m", "http://localhost:11434/v1/", api_key=KEY)
    assert (
        chat.url == "http://localhost:11434/v1/chat/completions"
        and chat.endpoint == "http://localhost:11434/v1"
    )
    assert KEY not in repr(vars(chat).get("endpoint")) and chat._safe(f"echo {KEY}") == "echo ***"
    with pytest.raises(UserError, match="expected an http"):
        OpenAIChat("m", "ftp://example.org")


def _everything_stored(db: str) -> str:
    """Every cell of every table and view of the warehouse, as text."""
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return "\n".join(repr(con.execute(f'SELECT * FROM "{t}"').fetchall()) for t in names)
    finally:
        con.close()


@pytest.mark.parametrize("how", ["bearer", "basic"])
def test_an_echoed_secret_is_never_printed_stored_or_exported(
    run_cli, db_path, nofakes, monkeypatch, tmp_path, how
):
    """Issue 19 D2/D10: an endpoint that echoes the bearer token (or the basic-auth credentials
    of --base-url http://user:pass@...) in content, model and system_fingerprint: the secret
    reaches neither the output, nor any stored row, nor `export parquet`; the rest still works."""
    import pyarrow.parquet as pq

    monkeypatch.setenv(KEY_ENV, KEY)
    with ChatMock(default=("ok", numbered(GOOD)), key=KEY if how == "bearer" else None, echo=True) as m:
        if how == "bearer":
            args, secrets = ["--base-url", m.url, "--api-key-env", KEY_ENV], [KEY]
        else:
            url = m.url.replace("http://", "http://lab:pa55-w0rd-xyz@")
            args, secrets = ["--base-url", url], ["pa55-w0rd-xyz", "bGFiOnBhNTUtdzByZC14eXo="]
        res = run_cli(
            "fakes",
            "generate",
            "--dataset",
            "nofakes",
            "--relation",
            "capital",
            "--n",
            3,
            "--model",
            "openai:mock-model",
            *args,
        )
        sent = m.requests[0]["headers"].get("Authorization")
    assert res.exit_code == 0, res.output
    assert sent == (f"Bearer {KEY}" if how == "bearer" else "Basic bGFiOnBhNTUtdzByZC14eXo=")
    out = tmp_path / "export"
    exported = run_cli("export", "parquet", out)
    assert exported.exit_code == 0, exported.output
    files = [f for f in out.rglob("*") if f.is_file()]
    texts = [
        res.output,
        exported.output,
        _everything_stored(db_path),
        open(db_path, "rb").read().decode("latin-1"),
    ]
    texts += [f.read_bytes().decode("latin-1") for f in files]
    texts += [repr(pq.read_table(f).to_pylist()) for f in files if f.suffix == ".parquet"]
    for secret in secrets:
        assert not any(secret in t for t in texts), secret
    assert [r[1] for r in fake_rows(db_path)] == GOOD[:3]
    rev = _everything_stored(db_path)
    assert (
        "fp_***" in rev and "http://127.0.0.1:" in rev and "lab:" not in rev
    )  # endpoint without credentials


def test_base_url_with_query_and_credentials(run_cli, db_path, nofakes, monkeypatch):
    """Issue 19 D10: a query string stays after /chat/completions (and is neither printed nor
    stored); user:password is basic auth; with a key named as well, one clear line."""
    from ctxprior.fakes.llm import OpenAIChat, mask_secrets

    # an echo cut short is masked too (12 characters of a secret are enough)
    assert mask_secrets("provided: XNlcjpwYTU1d29yZA==.", ["dXNlcjpwYTU1d29yZA=="]) == "provided: ***."
    chat = OpenAIChat("m", "http://127.0.0.1:9/v1/?api-version=2024&api_key=q-secret-1", api_key=None)
    assert chat.url == "http://127.0.0.1:9/v1/chat/completions?api-version=2024&api_key=q-secret-1"
    assert chat.endpoint == "http://127.0.0.1:9/v1" and chat._safe("x q-secret-1") == "x ***"
    ipv6 = OpenAIChat("m", "http://u:p@[::1]:8000/v1")
    assert ipv6.url == "http://[::1]:8000/v1/chat/completions" and ipv6._auth == "Basic dTpw"
    monkeypatch.setenv(KEY_ENV, KEY)
    with ChatMock(default=("ok", numbered(GOOD))) as m:
        res = run_cli(
            "fakes",
            "generate",
            "--dataset",
            "nofakes",
            "--relation",
            "capital",
            "--n",
            2,
            "--model",
            "openai:m",
            "--base-url",
            m.url + "?api_key=q-secret-1&x=1",
        )
        assert res.exit_code == 0, res.output
        assert m.requests[0]["path"] == "/v1/chat/completions?api_key=q-secret-1&x=1"
        assert "q-secret-1" not in res.output and "q-secret-1" not in _everything_stored(db_path)
        before = _everything_stored(db_path)
        url = m.url.replace("http://", "http://lab:pw@")
        res = run_cli(
            "fakes",
            "generate",
            "--dataset",
            "nofakes",
            "--relation",
            "capital",
            "--n",
            2,
            "--model",
            "openai:m",
            "--base-url",
            url,
            "--api-key-env",
            KEY_ENV,
        )
        one_line_error(res, "give one of them")
        assert "pw" not in res.output and _everything_stored(db_path) == before


def test_local_endpoint_needs_no_key(run_cli, db_path, nofakes, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatMock(default=("ok", numbered(GOOD))) as m:
        res = run_cli(
            "fakes",
            "generate",
            "--dataset",
            "nofakes",
            "--relation",
            "capital",
            "--n",
            2,
            "--model",
            "openai:llama3",
            "--base-url",
            m.url,
        )
        assert res.exit_code == 0, res.output
        assert "Authorization" not in m.requests[0]["headers"]


def test_store_rechecks_the_relation_after_generating(db_path, nofakes, tmp_path):
    """Another process adds fakes while the model is writing: nothing of ours is stored."""
    other = tmp_path / "other.txt"
    other.write_text("Velmoria\n")

    class Racing:
        endpoint, revision = None, "stub"

        def complete(self, messages, seed, n_names):
            with open_store(db_path) as wh2:
                add_fakes(wh2, other, "nofakes", "capital")
            return numbered(["Zalovia", "Quellara"])

    with open_store(db_path) as store, pytest.raises(UserError, match="changed while the fakes were made"):
        generate_fakes(store, "nofakes", "capital", n=2, chat=Racing())
    assert [r[1] for r in fake_rows(db_path)] == ["Velmoria"]


# -- sample picks them up ------------------------------------------------------------------------
def test_sample_pairs_generated_fakes_with_their_real_entities(tmp_path, run_cli, db_path, mock, monkeypatch):
    """With degrees, fakes go to the top-degree real entities, and `sample` selects exactly those pairs."""
    data = _demo_without_fakes(tmp_path / "deg.json", degrees=True)
    assert run_cli("ingest", "yago-qec", tmp_path / "deg.json", "--name", "deg").exit_code == 0
    monkeypatch.setenv(KEY_ENV, KEY)
    res = run_cli(
        "fakes",
        "generate",
        "--dataset",
        "deg",
        "--relation",
        "capital",
        "--n",
        5,
        "--model",
        "openai:m",
        "--base-url",
        mock.url,
        "--api-key-env",
        KEY_ENV,
    )
    assert res.exit_code == 0, res.output
    rd = data["http://yago-knowledge.org/resource/capital"]
    deg = rd["entity_uri_to_degree"]
    top = sorted(range(len(deg)), key=lambda i: (-deg[i], i))[:5]
    # the best-ranked real entity gets the first accepted name
    assert sorted((r[0], r[1]) for r in fake_rows(db_path)) == sorted((p, GOOD[k]) for k, p in enumerate(top))
    res = run_cli("sample", "--dataset", "deg", "--relation", "capital", "--entities", 10, "--contexts", 60)
    assert res.exit_code == 0, res.output
    sid = int(res.output.strip().splitlines()[-1])
    with open_store(db_path, read_only=True) as store:
        ents = store.query(
            "SELECT entity, entity_kind, answer FROM v_sample_entity WHERE sample_id = ? ORDER BY ordinal",
            [sid],
        )
        mentioned = {
            r[0] for r in store.query("SELECT DISTINCT entity FROM v_context WHERE sample_id = ?", [sid])
        }
    fakes = {(r[0], r[2]) for r in ents if r[1] == "fake"}
    assert fakes == {(GOOD[k], rd["answers"][p]) for k, p in enumerate(top)}
    assert {r[0] for r in ents if r[1] == "real"} == {rd["entities"][p] for p in top}
    assert {f for f, _ in fakes} <= mentioned


# -- a user's own list ---------------------------------------------------------------------------
def test_add_from_text_and_csv(run_cli, db_path, nofakes, tmp_path):
    txt = tmp_path / "gpt4.txt"  # a preamble with a comma and the word 'names' is not a CSV header
    txt.write_text(
        "Here are 4 names of places that are not real, but could sound plausibly real:\n\n"
        + numbered(["Velmoria", "France", "Kestrania", "kestrania"])
    )
    res = run_cli("fakes", "add", txt, "--dataset", "nofakes", "--relation", "capital")
    assert res.exit_code == 0, res.output
    assert "2 of 4 fakes stored" in res.output and "duplicate 1, real_entity 1" in res.output
    before = snapshot(db_path)
    res = run_cli("fakes", "add", txt, "--dataset", "nofakes", "--relation", "capital")  # rerun: no-op
    assert res.exit_code == 0 and "nothing to do" in res.output, res.output
    assert snapshot(db_path) == before
    with open_store(db_path, read_only=True) as store:
        g = store.df("SELECT * FROM fake_generation").iloc[0]
    import hashlib

    assert g.method == "file" and g.source_path == str(txt.resolve()) and g.model is None
    assert g.source_sha256 == hashlib.sha256(txt.read_bytes()).hexdigest()

    csv_path = tmp_path / "mine.txt"  # a CSV by its header line
    csv_path.write_text('id,Name\n1,Ostravelia\n2,"Quellara, Upper"\n3,Zalovia\n')
    res = run_cli(
        "fakes",
        "add",
        csv_path,
        "--dataset",
        "nofakes",
        "--relation",
        "capital",
        "--n",
        2,
        "--entity-class",
        "MicroState",
    )
    assert res.exit_code == 0, res.output
    rows = fake_rows(db_path)
    assert [(r[0], r[1]) for r in rows] == [
        (0, "Velmoria"),
        (1, "Kestrania"),
        (2, "Ostravelia"),
        (3, "Quellara, Upper"),
    ]
    assert [r[2] for r in rows] == ["Country", "Country", "MicroState", "MicroState"]


def test_add_more_names_than_free_positions(run_cli, db_path, nofakes, tmp_path):
    names = [f"Fakeland {c}{d}" for c in "ABCDEFGH" for d in "xyzuv"][:35]
    path = tmp_path / "many.txt"
    path.write_text("\n".join(names))
    res = run_cli("fakes", "add", path, "--dataset", "nofakes", "--relation", "capital")
    assert res.exit_code == 0, res.output
    assert "30 of 35 fakes stored" in res.output and "no_free_position 5" in res.output
    assert len(fake_rows(db_path)) == 30
    res = run_cli("fakes", "add", path, "--dataset", "nofakes", "--relation", "capital")
    assert res.exit_code == 0 and "nothing to do" in res.output


@pytest.mark.parametrize(
    "content,fragments",
    [
        (None, ("no such file",)),
        ("", ("file is empty",)),
        ("id,label\n1,Velmoria\n", ("no 'name' column",)),
        (numbered(["France", "Paris", "France"]), ("no usable names", "real_entity 2", "answer 1")),
        (b"\xff\xfeV\x00", ("not UTF-8",)),
    ],
)
def test_add_bad_files_one_line_exit_2_warehouse_unchanged(
    content, fragments, run_cli, db_path, nofakes, tmp_path
):
    path = tmp_path / ("bad.csv" if content and "label" in str(content) else "bad.txt")
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    before = snapshot(db_path)
    one_line_error(run_cli("fakes", "add", path, "--dataset", "nofakes", "--relation", "capital"), *fragments)
    assert snapshot(db_path) == before


def test_list(gen, run_cli, nofakes, tmp_path):
    assert gen("--n", 2).exit_code == 0
    res = run_cli("fakes", "list", "--dataset", "nofakes")
    assert res.exit_code == 0
    line = next(ln for ln in res.output.splitlines() if ln.startswith("capital "))
    assert line.split() == ["capital", "30", "2", "0", "2", "0"]
    res = run_cli("fakes", "list", "--dataset", "nofakes", "--relation", "capital", "--format", "json")
    rows = json.loads(res.output)
    assert [(r["fake"], r["real_entity"], r["answer"], r["source"]) for r in rows] == [
        ("Velmoria", "France", "Paris", "model 1"),
        ("Kestrania", "Germany", "Berlin", "model 1"),
    ]
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    res = run_cli("fakes", "list", "--dataset", "demo", "--relation", "capital")
    assert res.exit_code == 0 and "ingest" in res.output and "(30 rows)" in res.output


# -- the local path, real SmolLM2 ----------------------------------------------------------------
@pytest.mark.slow
def test_generate_with_local_smollm2(tmp_path):
    from ctxprior.fakes.llm import LocalChat

    chat = LocalChat("smollm2-135m")
    results = []
    for k in range(2):  # the same seed twice, into two fresh warehouses: the same answers
        src = tmp_path / f"nofakes{k}.json"
        _demo_without_fakes(src)
        db = str(tmp_path / f"w{k}.duckdb")
        from ctxprior.ingest.yago_qec import load_yago_qec, write_yago_qec

        with open_store(db) as store:
            write_yago_qec(store, load_yago_qec(src, name="nofakes"))
            try:
                res = generate_fakes(
                    store,
                    "nofakes",
                    "capital",
                    n=2,
                    model="smollm2-135m",
                    seed=5,
                    max_rounds=2,
                    allow_partial=True,
                    chat=chat,
                )
            except UserError as e:  # a 135M model may find no usable name: still a clean error
                assert "no usable names" in str(e)
                res = None
            calls = store.query("SELECT calls_json, model_revision FROM fake_generation")
        results.append((res.accepted if res else None, calls))
    assert results[0] == results[1]
    accepted, calls = results[0]
    if accepted:
        ((calls_json, revision),) = calls
        assert revision.startswith("sha256:")
        c = json.loads(calls_json)
        assert 1 <= len(c) <= 2 and all(x["messages"][0]["content"] == PAPER_SYSTEM for x in c)
        assert all(isinstance(x["response"], str) and x["seed"] == 5 + i for i, x in enumerate(c))
        for pos, name, real in accepted:
            assert name == normalize_name(name) and name_problem(name) is None and 0 <= pos < 30


def test_add_to_a_case_study_rejects_its_labels(run_cli, db_path, tmp_path):
    """friend_enemy: no classes, facts labelled friend / enemy; a label is not a fake name."""
    assert run_cli("ingest", "demo", "--only", "friend_enemy").exit_code == 0
    path = tmp_path / "names.txt"
    path.write_text("Enemy\nHarry Potter\nMarlowe Quint\n")
    res = run_cli("fakes", "add", path, "--dataset", "friend_enemy", "--relation", "friend_enemy")
    assert res.exit_code == 0, res.output
    assert "1 of 3 fakes stored" in res.output and "label 1, real_entity 1" in res.output
    with open_store(db_path, read_only=True) as store:
        row = store.query(
            "SELECT e.name, e.entity_class, f.position, f.answer_id = rf.answer_id FROM fact f "
            "JOIN entity e USING (entity_id) JOIN fact rf ON rf.relation_id = f.relation_id "
            "AND rf.position = f.position AND rf.entity_kind = 'real' WHERE f.entity_kind = 'fake'"
        )
    assert row == [("Marlowe Quint", None, 0, True)]


def test_paper_prompts_for_a_kg_build_ask_for_the_rdf_type_class(gen, mock, run_cli):
    """A build-dataset relation without class filters gets its entity classes from rdf:type, so
    the paper's prompt asks for that class (the paper conditions fakes on the real entities'
    classes), not for "names of entities"."""
    from importlib import resources
    from pathlib import Path

    triples = Path(__file__).parent / "fixtures" / "kg" / "countries.nt"
    rels = str(resources.files("ctxprior.ingest").joinpath("data/kg_relations.yaml"))
    r = run_cli(
        "build-dataset", triples, "--name", "countries", "--relations", rels, "--entities-per-relation", 10
    )
    assert r.exit_code == 0, r.output
    res = gen("--n", 2, "--prompt-style", "paper", relation="capital_of", dataset="countries")
    assert res.exit_code == 0, res.output
    assert mock.requests[0]["body"]["messages"][1]["content"] == PAPER_CLASS_PROMPTS["Place"].format(2)
