"""Issue 33 part 3: `ingest table` reads files as the ecosystem does (pandas, json, pyarrow), so
U+2028, U+0085, form feed, NUL, CR/LF line ends, a BOM and quoted newlines never cut a row; bad
files are refused in one line (duplicated header names or JSON keys, JSON nested too deeply).
Issue 33 part 5: each preset on the fixtures of tests/fixtures/tables (README.md there: sources,
licences)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ctxprior
from ctxprior.errors import UserError
from ctxprior.ingest.table_read import read_table

TABLES = Path(__file__).parent / "fixtures" / "tables"
TRICKY = {  # str.splitlines breaks at each of these; CSV writers leave most of them unquoted
    "u2028": "\u2028",
    "u2029": "\u2029",
    "u0085": "\u0085",
    "formfeed": "\x0c",
    "vtab": "\x0b",
    "fs": "\x1c",
    "nul": "\x00",
}


def _cell(v: str, sep: str, quote: bool) -> str:
    return '"' + v.replace('"', '""') + '"' if quote or any(c in v for c in (sep, '"', "\n", "\r")) else v


def _write(path: Path, rows: list[list[str]], sep: str, eol: str, bom: bool, quote: bool) -> Path:
    text = eol.join(sep.join(_cell(v, sep, quote) for v in r) for r in rows) + eol
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def _pandas(path: Path, sep: str) -> list[dict]:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig").to_dict(
        "records"
    )


def _rows(ch: str) -> list[list[str]]:
    return [
        ["id", "question", "passage", "answer"],
        ["1", f"when{ch}was it founded", f"It was founded in 1977{ch}by Jane.", "1977"],
        ["2", "where is it", f"quoted\nnewline and {ch} and\r\nCRLF", "New York"],
        ["3", "007?", "", "007"],
    ]


@pytest.mark.quick
@pytest.mark.parametrize("char", sorted(TRICKY))
@pytest.mark.parametrize("kind, sep", [("csv", ","), ("tsv", "\t")])
@pytest.mark.parametrize(
    "eol, bom, quote", [("\n", False, False), ("\r\n", True, False), ("\r", False, True)]
)
def test_tricky_characters_read_as_pandas_reads_them(tmp_path, char, kind, sep, eol, bom, quote):
    path = _write(tmp_path / f"t.{kind}", _rows(TRICKY[char]), sep, eol, bom, quote)
    recs = read_table(str(path)).records
    want = _pandas(path, sep)
    assert [r.data for r in recs] == want and len(want) == 3
    assert [r.row for r in recs] == [1, 2, 3]
    assert (
        recs[0].data["answer"] == "1977"
        and recs[2].data["question"] == "007?"
        and recs[2].data["passage"] == ""
    )
    if char != "nul":  # DuckDB's reader agrees on rows and values too (it stops strings at NUL)
        db = duckdb.connect()
        got = db.execute(
            "SELECT * FROM read_csv(?, delim=?, header=true, all_varchar=true, quote='\"', escape='\"')",
            [str(path), sep],
        ).fetchall()
        assert [tuple(v or "" for v in r) for r in got] == [tuple(r.values()) for r in want]


@pytest.mark.quick
@pytest.mark.parametrize("char", sorted(c for c in TRICKY if c not in ("formfeed", "vtab", "fs", "nul")))
def test_json_lines_and_arrays_keep_line_separator_characters(tmp_path, char):
    """JSON allows U+2028, U+2029 and U+0085 raw in strings (control characters only escaped)."""
    rows = [{"q": f"a{TRICKY[char]}b", "n": "1977"}, {"q": "\x0c\x00 escaped", "n": "007"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows)
    (tmp_path / "t.jsonl").write_text(text, encoding="utf-8", newline="")
    recs = read_table(str(tmp_path / "t.jsonl")).records
    assert [r.data for r in recs] == pd.read_json(io.StringIO(text), lines=True, dtype=False).to_dict(
        "records"
    )
    assert [r.data for r in recs] == rows and [r.row for r in recs] == [1, 2]
    (tmp_path / "t.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    assert [r.data for r in read_table(str(tmp_path / "t.json")).records] == rows
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "t.parquet")
    assert [r.data for r in read_table(str(tmp_path / "t.parquet")).records] == rows


def test_tricky_table_through_the_cli_keeps_every_passage(tmp_path, run_cli, db_path):
    path = _write(tmp_path / "t.tsv", _rows("\u2028\u0085\x0c"), "\t", "\r\n", True, False)
    r = run_cli("ingest", "table", path, "--item", "id", "--question", "question", "--gold", "answer",
                "--context", "gold=passage:answer")  # fmt: skip
    assert (
        r.exit_code == 2 and "t.tsv: row 3, column 'passage': empty" in r.output
    )  # row 3 as pandas' index 2
    rows = _rows("\u2028\u0085\x0c")
    rows[3][2] = "Agent 007."
    path = _write(tmp_path / "t.tsv", rows, "\t", "\r\n", True, False)
    r = run_cli("ingest", "table", path, "--item", "id", "--question", "question", "--gold", "answer",
                "--context", "gold=passage:answer")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "3 items, 3 context passages" in r.output
    got = ctxprior.open(db_path).sql("SELECT text FROM fixed_context ORDER BY 1")["text"].tolist()
    assert sorted(got) == sorted(d["passage"] for d in _pandas(path, "\t"))


@pytest.mark.parametrize(
    "name, data, expect",
    [
        ("dup.csv", b"a,b,a\n1,2,3\n", "dup.csv: column 'a' appears twice in the header"),
        ("dup.tsv", b"q\tq\n1\t2\n", "dup.tsv: column 'q' appears twice in the header"),
        (
            "key.jsonl",
            b'{"q": 1}\n{"q": 1, "q": 2}\n',
            "key.jsonl: line 2: a JSON object has the key 'q' twice",
        ),
        ("key.json", b'[{"q": {"a": 1, "a": 2}}]', "key.json: a JSON object has the key 'a' twice"),
        ("deep.json", b"[" * 200_000 + b"]" * 200_000, "deep.json: JSON nested too deeply to read"),
        (
            "deep.jsonl",
            b'{"q": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n",
            "deep.jsonl: line 1: JSON nested",
        ),
        ("wide.csv", b'q,g\n1,2\n\n"x\ny",3\n4,5,6\n', "wide.csv: row 3: 3 values, more than the header's 2"),
        ("open.csv", b'q,g\n1,2\n\n3,"x\n', "open.csv: row 2: a quote is opened and never closed"),
        ("latin.csv", "q,g\ncafé,1\n".encode("latin-1"), "latin.csv: not UTF-8 text"),
        ("blank.csv", b"\r\n\n", "blank.csv: file is empty"),
    ],
)
def test_bad_files_one_line_exit_2_warehouse_unchanged(tmp_path, run_cli, db_path, name, data, expect):
    (tmp_path / name).write_bytes(data)
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    before = Path(db_path).read_bytes()
    r = run_cli("ingest", "table", tmp_path / name, "--question", "q", "--gold", "g", "--context", "gold=q")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and expect in r.output, r.output
    assert Path(db_path).read_bytes() == before
    with pytest.raises(UserError, match=re.escape(expect.split(": ", 1)[1])):
        read_table(str(tmp_path / name))


def test_druid_file_with_u2028_in_evidence_keeps_every_passage(tmp_path, run_cli, db_path):
    """The DRUID case of the issue: the old reader cut row 2 in two at U+2028 (9 rows, 6 passages)."""
    src = TABLES / "druid.tsv"
    assert "\u2028" in src.read_text(encoding="utf-8")
    frame = pd.read_csv(src, sep="\t", dtype=str, keep_default_na=False)
    assert len(frame) == 8 and len(read_table(str(src)).records) == 8
    r = run_cli("ingest", "druid", src)
    assert r.exit_code == 0, r.output
    assert "ingested dataset 'druid': 3 items, 7 context passages" in r.output
    assert "left out 1 of 8 rows: claims without a factcheck_verdict" in r.output
    wh = ctxprior.open(db_path)
    texts = wh.sql("SELECT text FROM fixed_context")["text"].tolist()
    want = [f'Evidence: "{e}"' for e, v in zip(frame["evidence"], frame["factcheck_verdict"]) if v]
    assert sorted(texts) == sorted(want)


def test_presets_on_the_real_format_fixtures(run_cli, db_path):
    """Each preset on tests/fixtures/tables: counts, types and answers (years, multi-word answers)."""
    for args, out in [
        (("nq-swap", TABLES / "nq-swap"), "3 items, 6 context passages"),
        (("conflictqa", TABLES / "conflictQA-popQA-chatgpt.json"), "2 items, 4 context passages"),
        (
            ("conflictqa", TABLES / "conflictQA-strategyQA-chatgpt.json", "--name", "cqa_sqa"),
            "3 items, 6 context",
        ),
        (("counterfact", TABLES / "counterfact.json"), "3 items, 6 context passages"),
        (("druid", TABLES / "druid.tsv"), "3 items, 7 context passages"),
    ]:
        r = run_cli("ingest", *args)
        assert r.exit_code == 0 and out in r.output, r.output
    wh = ctxprior.open(db_path)
    got = wh.sql(
        "SELECT d.name, i.item_key, a.name AS gold, t.context_type, t.label, coalesce(sa.name, '-') AS says "
        "FROM fixed_item i JOIN dataset d USING (dataset_id) JOIN answer a ON a.answer_id = i.gold_answer_id "
        "JOIN fixed_context t USING (fact_id, dataset_id) LEFT JOIN answer sa ON sa.answer_id = t.answer_id "
        "ORDER BY d.name, i.source_row, t.ordinal"
    ).values.tolist()
    by = {}
    for name, item, gold, typ, label, says in got:
        by.setdefault(name, []).append((item, gold, typ, label, says))
    assert by["nq_swap"][:4] == [
        ("1", "1977", "gold", "gold", "1977"),
        ("1", "1977", "conflicting", "conflicting", "1967"),
        ("2", "New York", "gold", "gold", "New York"),
        ("2", "New York", "conflicting", "conflicting", "New Delhi"),
    ]
    assert by["counterfact"][2:4] == [
        ("1", "New York", "gold", "gold", "New York"),
        ("1", "New York", "conflicting", "conflicting", "New Delhi"),
    ]
    assert by["conflictqa"][0][1] == "Washington, D.C." and by["cqa_sqa"][0][1] == "True"
    assert by["druid"] == [
        ("factly-101", "True", "gold", "supports", "True"),
        ("factly-101", "True", "gold", "supports", "True"),
        ("factly-101", "True", "irrelevant", "not_applicable", "-"),
        ("politifact-202", "False", "gold", "refutes", "False"),
        ("politifact-202", "False", "conflicting", "insufficient-neutral", "None"),
        ("checkyourfact-303", "None", "conflicting", "refutes", "False"),
        ("checkyourfact-303", "None", "conflicting", "insufficient-supports", "None"),  # CUB App. B.3
    ]
    forms = wh.sql(
        "SELECT q.template FROM query_form q JOIN relation r USING (relation_id) JOIN dataset d USING (dataset_id) "
        "WHERE d.name = 'druid' ORDER BY q.query_form_id LIMIT 1"
    )["template"].tolist()
    assert forms == [
        "Is the following claim True or False? If you are not sure or cannot answer, say None.\n\n"
        'Claimant: Social media users\nClaim: "The Eiffel Tower was completed in 1889."\nAnswer:'
    ]
