"""Issue 29 part 1: `ctxprior ingest table` (templated facts, fixed contexts) and its presets
(nq-swap, conflictqa, counterfact, druid), each on a fixture written here in the published format,
from a file, a folder, hf://datasets/... (tests/hub_mock.py) or a URL (a local http.server);
`sample --design fixed` makes the items scorable by `score` unchanged, and templated facts score
as yago-qec does."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ctxprior
from ctxprior.errors import UserError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

NQ_SWAP = [  # pminervini/NQ-Swap: question, org_context, org_answer (list), sub_context, sub_answer
    {
        "question": "who wrote the hobbit",
        "org_context": "The Hobbit is a novel by J. R. R. Tolkien.",
        "org_answer": ["J. R. R. Tolkien", "Tolkien"],
        "sub_context": "The Hobbit is a novel by Jane Austen.",
        "sub_answer": ["Jane Austen"],
    },
    {
        "question": "what is the capital of france",
        "org_context": "Paris is the capital of France.",
        "org_answer": ["Paris"],
        "sub_context": "Lyon is the capital of France.",
        "sub_answer": ["Lyon"],
    },
]

CONFLICTQA = [  # osunlp/ConflictQA (JSON lines in a .json file)
    {
        "question": "What is George Rankin's occupation?",
        "popularity": 142,
        "ground_truth": ["politician", "political figure"],
        "memory_answer": "photographer",
        "parametric_memory": "As a professional photographer, George Rankin ...",
        "counter_answer": "politician",
        "counter_memory": "George Rankin has been involved in politics ...",
        "parametric_memory_aligned_evidence": "George Rankin has a website showing his photographs.",
        "counter_memory_aligned_evidence": "Major General George Rankin was an Australian politician.",
    },
    {
        "question": "In what country is Lyon?",
        "popularity": 9000,
        "ground_truth": ["France"],
        "memory_answer": "France",
        "parametric_memory": "Lyon is a city in France.",
        "counter_answer": "Italy",
        "counter_memory": "Lyon is a city in Italy.",
        "parametric_memory_aligned_evidence": "Lyon is the third-largest city of France.",
        "counter_memory_aligned_evidence": "Lyon is a city in northern Italy.",
    },
]


def _cf(case_id, prompt, subject, true, new):
    return {
        "case_id": case_id,
        "pararel_idx": 1000 + case_id,
        "requested_rewrite": {
            "prompt": prompt,
            "relation_id": "P103",
            "target_new": {"str": new, "id": "Q1"},
            "target_true": {"str": true, "id": "Q2"},
            "subject": subject,
        },
        "paraphrase_prompts": ["..."],
        "neighborhood_prompts": ["..."],
        "attribute_prompts": [],
        "generation_prompts": [],
    }


COUNTERFACT = [  # ROME's counterfact.json: a JSON array
    _cf(0, "The mother tongue of {} is", "Danielle Darrieux", "French", "English"),
    _cf(1, "{} is a native speaker of", "Thomas Joannes Stieltjes", "Dutch", "English"),
]


def nq_swap_folder(root: Path, rows=NQ_SWAP) -> Path:
    """A Hub download of NQ-Swap: README.md and data/dev-00000-of-00001.parquet."""
    (root / "data").mkdir(parents=True)
    (root / "README.md").write_text("---\nlicense: mit\n---\n")
    pq.write_table(pa.Table.from_pylist(rows), root / "data" / "dev-00000-of-00001.parquet")
    return root


def jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_nq_swap_preset_hub_folder_sample_fixed(tmp_path, run_cli, db_path):
    folder = nq_swap_folder(tmp_path / "NQ-Swap")
    r = run_cli("ingest", "nq-swap", folder)
    assert r.exit_code == 0, r.output
    assert "ingested dataset 'nq_swap': 2 items, 4 context passages" in r.output
    assert "sha256 " in r.output and "dev-00000-of-00001.parquet" in r.output
    r = run_cli("sample", "--dataset", "nq_swap", "--design", "fixed")
    assert r.exit_code == 0, r.output
    sid = int(r.output.split()[-1])
    wh = ctxprior.open(db_path)
    ctx = wh.sql(
        "SELECT item, context_label, supported_answer, supports_gold, gold_answer FROM stg_fixed_context "
        "WHERE sample_id = ? ORDER BY item, ordinal",
        [sid],
    )
    assert ctx.values.tolist() == [
        ["1", "gold", "J. R. R. Tolkien", True, "J. R. R. Tolkien"],
        ["1", "conflicting", "Jane Austen", False, "J. R. R. Tolkien"],
        ["2", "gold", "Paris", True, "Paris"],
        ["2", "conflicting", "Lyon", False, "Paris"],
    ]
    # each item is its own relation: its fact and exactly its two contexts, the question as query forms
    per_rel = wh.sql(
        "SELECT c.relation_id, count(*) AS n, any_value(c.entity_id = f.entity_id) AS rel "
        "FROM context c JOIN sample_fact sf USING (sample_id, relation_id) JOIN fact f USING (fact_id) "
        "WHERE c.sample_id = ? GROUP BY 1 ORDER BY 1",
        [sid],
    )
    assert per_rel["n"].tolist() == [2, 2] and per_rel["rel"].all()
    forms = wh.sql("SELECT template FROM query_form ORDER BY query_form_id")["template"].tolist()
    assert forms[:2] == ["Q: who wrote the hobbit\nA:", "Q: who wrote the hobbit Is it {answer}?\nA:"]
    ds = wh.sql("SELECT source_format, source_path, source_sha256 FROM dataset").iloc[0]
    assert ds["source_format"] == "nq-swap" and len(ds["source_sha256"]) == 64
    r = run_cli("sample", "--dataset", "nq_swap", "--design", "fixed", "--items", "1")
    assert r.exit_code == 0 and "1 relations" in r.output


def test_conflictqa_preset_json_lines(tmp_path):
    path = jsonl(tmp_path / "conflictQA-popQA-chatgpt.json", CONFLICTQA)
    wh = ctxprior.open(tmp_path / "w.duckdb", write=True)
    s = wh.datasets.ingest("conflictqa", str(path))
    assert (s["dataset"], s["facts"], s["context_templates"]) == ("conflictqa", 2, 4)
    rows = wh.sql(
        "SELECT fi.item_key, ga.name AS gold, fc.label, a.name AS supports FROM fixed_context fc "
        "JOIN fixed_item fi USING (fact_id) JOIN answer ga ON ga.answer_id = fi.gold_answer_id "
        "JOIN answer a ON a.answer_id = fc.answer_id ORDER BY fi.source_row, fc.ordinal"
    ).values.tolist()
    assert rows == [
        ["1", "politician", "parametric", "photographer"],
        ["1", "politician", "counter", "politician"],
        ["2", "France", "parametric", "France"],
        ["2", "France", "counter", "Italy"],
    ]


def test_counterfact_preset_json_array(tmp_path):
    path = tmp_path / "counterfact.json"
    path.write_text(json.dumps(COUNTERFACT))
    wh = ctxprior.open(tmp_path / "w.duckdb", write=True)
    wh.datasets.ingest("counterfact", str(path), name="cf")
    sid = wh.samples.draw("cf", design="fixed")
    items = wh.sql("SELECT item, question, entity, gold_answer FROM stg_fixed_item ORDER BY source_row")
    assert items.values.tolist()[0] == [
        "0",
        "The mother tongue of Danielle Darrieux is",
        "Danielle Darrieux",
        "French",
    ]
    ctx = wh.sql(
        "SELECT context_type, context FROM stg_fixed_context WHERE sample_id = ? AND item = '1'", [sid]
    )
    assert ctx.values.tolist() == [
        ["gold", "Thomas Joannes Stieltjes is a native speaker of Dutch."],
        ["conflicting", "Thomas Joannes Stieltjes is a native speaker of English."],
    ]
    forms = wh.sql("SELECT query_type, template FROM query_form").values.tolist()
    assert forms[0] == ["open", "The mother tongue of Danielle Darrieux is"] and len(forms) == 2


def _long_csv(path: Path, rows) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "q", "gold", "passage", "stance", "says"])
        w.writerows(rows)
    return path


LONG = [
    ["a", "Who founded Rome?", "Romulus", "Romulus founded Rome.", "supports", "Romulus"],
    ["a", "Who founded Rome?", "Romulus", "Remus founded Rome.", "refutes", "Remus"],
    ["a", "Who founded Rome?", "Romulus", "Cats sleep a lot.", "unrelated", ""],
    ["b", "Where is Kyoto?", "Japan", "Kyoto is in Japan.", "supports", "Japan"],
]
LONG_OPTS = ("--item", "id", "--question", "q", "--gold", "gold", "--context-text", "passage",
             "--context-label", "stance", "--context-answer", "says", "--label", "supports=gold",
             "--label", "refutes=conflicting", "--label", "unrelated=irrelevant")  # fmt: skip


def test_table_long_csv_with_labels_mapped(tmp_path, run_cli, db_path):
    path = _long_csv(tmp_path / "t.csv", LONG)
    r = run_cli("ingest", "table", path, "--name", "mine", *LONG_OPTS)
    assert r.exit_code == 0, r.output
    assert "2 items, 4 context passages" in r.output
    got = ctxprior.open(db_path).sql(
        "SELECT fi.item_key, fc.label, fc.context_type, fc.answer_id IS NULL AS no_answer "
        "FROM fixed_context fc JOIN fixed_item fi USING (fact_id) ORDER BY fc.context_template_id"
    )
    assert got.values.tolist() == [
        ["a", "supports", "gold", False],
        ["a", "refutes", "conflicting", False],
        ["a", "unrelated", "irrelevant", True],
        ["b", "supports", "gold", False],
    ]


def test_table_nested_list_from_a_spec_file_yaml_and_json(tmp_path):
    rows = [
        {"qid": 7, "question": "Who painted the Mona Lisa?", "answer": "Leonardo da Vinci",
         "ctxs": [{"text": "Leonardo painted it.", "type": "gold", "ans": "Leonardo da Vinci"},
                  {"text": "Raphael painted it.", "type": "counter", "ans": "Raphael"}]},
    ]  # fmt: skip
    path = jsonl(tmp_path / "t.jsonl", rows)
    spec = {"item": "qid", "question": "question", "gold": "answer", "context_list": "ctxs",
            "context_text": "text", "context_label": "type", "context_answer": "ans",
            "labels": {"gold": "gold", "counter": "conflicting"}}  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "spec.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in spec.items()))
    for i, sp in enumerate(("spec.json", "spec.yaml")):
        wh = ctxprior.open(tmp_path / f"w{i}.duckdb", write=True)
        s = wh.datasets.ingest("table", str(path), spec=str(tmp_path / sp))
        assert (s["facts"], s["context_templates"]) == (1, 2)
        assert wh.sql("SELECT item_key FROM fixed_item").values.tolist() == [["7"]]


def test_table_templated_facts_sample_as_yago(tmp_path, run_cli, db_path):
    path = tmp_path / "facts.csv"
    path.write_text(
        "rel,subject,object\ncapital,France,Paris\ncapital,Japan,Tokyo\ncapital,Peru,Lima\n"
        "language,France,French\nlanguage,Japan,Japanese\nlanguage,Peru,Spanish\n"
    )
    r = run_cli(
        "ingest", "table", path, "--shape", "facts", "--name", "facts", "--relation", "rel",
        "--entity", "subject", "--answer", "object", "--query-template", "Q: What is {entity}'s {answer}?",
        "--query-template", "{entity} is known for", "--context-template", "base={entity} is linked to {answer}.",
        "--context-template", "assertive=Definitely, {entity} is linked to {answer}.",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "2 relations, 6 facts, 4 query forms, 4 context templates" in r.output
    r = run_cli("sample", "--dataset", "facts", "--entities", "2", "--contexts", "4",
                "--context-types", "base,assertive", "--answer-sampling", "distinct")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "2 relations, 4 entities, 8 contexts" in r.output
    types = ctxprior.open(db_path).sql("SELECT query_type, count(*) n FROM query_form GROUP BY 1 ORDER BY 1")
    assert types.values.tolist() == [["closed", 2], ["open", 2]]


@pytest.mark.parametrize(
    "kind, expect",
    [
        ("missing column", "t.csv: row 1, column 'stance': no such column"),
        ("unknown label", "t.csv: row 2, column 'stance': context label 'maybe' is not in the mapping"),
        ("empty passage", "t.csv: row 3, column 'passage': empty"),
        ("other question", "t.csv: row 2, column 'q': item 'a' has another question"),
    ],
)
def test_bad_tables_exit_2_one_line_warehouse_unchanged(tmp_path, run_cli, db_path, kind, expect):
    rows = [list(r) for r in LONG]
    if kind == "unknown label":
        rows[1][4] = "maybe"
    elif kind == "empty passage":
        rows[2][3] = ""
    elif kind == "other question":
        rows[1][1] = "Who built Rome?"
    path = _long_csv(tmp_path / "t.csv", rows)
    opts = list(LONG_OPTS)
    if kind == "missing column":
        path.write_text(path.read_text().replace("stance", "position"))
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    before = Path(db_path).read_bytes()
    r = run_cli("ingest", "table", path, *opts)
    assert r.exit_code == 2
    line = r.output.strip()
    assert "\n" not in line and expect in line, line
    assert Path(db_path).read_bytes() == before
    with pytest.raises(UserError, match="row"):  # the API refuses what the CLI refuses
        ctxprior.open(db_path, write=True).datasets.ingest("table", str(path), **_kw(opts))
    assert Path(db_path).read_bytes() == before


def _kw(opts: list[str]) -> dict:
    """CLI options -> API keywords (repeatable --label -> labels)."""
    kw: dict = {}
    for flag, v in zip(opts[::2], opts[1::2]):
        key = {"--label": "labels"}.get(flag, flag[2:].replace("-", "_"))
        if key == "labels":
            kw.setdefault(key, []).append(v)
        else:
            kw[key] = v
    return kw


def test_bad_presets_wrong_type_empty_list_duplicates(tmp_path, run_cli, db_path):
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    before = Path(db_path).read_bytes()
    bad_type = [dict(CONFLICTQA[0]), {**CONFLICTQA[1], "question": 42}]
    r = run_cli("ingest", "conflictqa", jsonl(tmp_path / "c.json", bad_type))
    assert r.exit_code == 2 and "row 2, column 'question': expected text, got int" in r.output
    cf = [COUNTERFACT[0], COUNTERFACT[1], {**COUNTERFACT[0]}]
    (tmp_path / "cf.json").write_text(json.dumps(cf))
    r = run_cli("ingest", "counterfact", tmp_path / "cf.json")
    assert r.exit_code == 2 and "row 3, column 'case_id': duplicate item '0' (first at row 1)" in r.output
    nested = [{"q": "x?", "g": "y", "ctxs": []}]
    r = run_cli("ingest", "table", jsonl(tmp_path / "n.jsonl", nested), "--question", "q", "--gold", "g",
                "--context-list", "ctxs", "--context-text", "t", "--context-label", "l", "--label", "gold")  # fmt: skip
    assert r.exit_code == 2 and "row 1, column 'ctxs': empty context list" in r.output
    r = run_cli("ingest", "nq-swap", nq_swap_folder(tmp_path / "nq", [{**NQ_SWAP[0], "sub_context": None}]))
    assert r.exit_code == 2 and "row 1, column 'sub_context': empty" in r.output
    r = run_cli("ingest", "table", tmp_path / "c.json", "--question", "question")
    assert r.exit_code == 2 and "--gold" in r.output
    assert Path(db_path).read_bytes() == before
    with pytest.raises(UserError, match="duplicate item"):
        ctxprior.open(db_path, write=True).datasets.ingest("counterfact", str(tmp_path / "cf.json"))
    assert Path(db_path).read_bytes() == before


def test_every_table_option_has_help(run_cli):
    from ctxprior.api import ingest_sources

    for name in ("table", "nq-swap", "conflictqa", "counterfact", "druid"):
        src = ingest_sources()[name]
        out = run_cli("ingest", name, "--help").output
        for p in src.params:
            if p.flag:
                assert p.flag in out and p.help, (name, p.name)
    assert "--design [paper|all|fixed]" in run_cli("sample", "--help").output


def test_fixed_sample_scores_with_a_tiny_model(tmp_path, db_path):
    from scale_helpers import make_tiny_folder

    model = make_tiny_folder(tmp_path / "tiny")
    wh = ctxprior.open(db_path, write=True)
    wh.datasets.ingest("nq-swap", str(nq_swap_folder(tmp_path / "nq")))
    sid = wh.samples.draw("nq_swap", design="fixed")
    wh.runs.score(sid, model=model, device="cpu", progress=False)
    psi = wh.sql(
        "SELECT f.item, f.context_label, p.query_form, p.persuasion FROM stg_persuasion p "
        "JOIN stg_fixed_context f USING (context_id) ORDER BY 1, 2, 3"
    )
    assert len(psi) == 8 and (psi["persuasion"] >= 0).all()
    chi = wh.sql(
        "SELECT i.item, s.susceptibility, s.n_contexts FROM stg_susceptibility s JOIN stg_fixed_item i "
        "USING (fact_id) WHERE s.query_form = 'open_0' ORDER BY 1"
    )
    assert chi["n_contexts"].tolist() == [2, 2]
    wh.datasets.ingest("demo", only=["demo"])
    with pytest.raises(UserError, match="no fixed-context items"):
        wh.samples.draw("demo", design="fixed")
    with pytest.raises(UserError, match="--items 2: only with --design fixed"):
        wh.samples.draw("nq_swap", items=2)


def test_publish_and_export_write_the_fixed_tables(tmp_path, run_cli, db_path):
    """`publish` (dry run) and `export-parquet` carry fixed_item / fixed_context, described in the card."""
    from scale_helpers import make_tiny_folder

    model = make_tiny_folder(tmp_path / "tiny")
    wh = ctxprior.open(db_path, write=True)
    wh.datasets.ingest("conflictqa", str(jsonl(tmp_path / "c.json", CONFLICTQA)))
    wh.runs.score(wh.samples.draw("conflictqa", design="fixed"), model=model, device="cpu", progress=False)
    out = tmp_path / "repo"
    r = run_cli("publish", "lab/fixed", "--dry-run", out)
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    rows = {e["name"]: e["rows"] for e in m["tables"]}
    assert rows["fixed_item"] == 2 and rows["fixed_context"] == 4
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "### `fixed_context`" in card and "the answer the passage supports" in card
    ex = tmp_path / "export"
    r = run_cli("export", "parquet", ex)
    assert r.exit_code == 0, r.output
    assert list((ex / "data" / "fixed_item").glob("*.parquet"))


def test_closed_format_empty_means_open_form_only(tmp_path, run_cli, db_path):
    """`--closed-format ""` (CLI), closed_format="" (API) and `closed_format: ""` in a spec turn the
    closed query form off; a non-empty option still wins over the spec's empty one."""
    path = _long_csv(tmp_path / "t.csv", LONG)
    r = run_cli("ingest", "table", path, "--name", "cli", "--closed-format", "", *LONG_OPTS)
    assert r.exit_code == 0, r.output
    wh = ctxprior.open(db_path, write=True)
    wh.datasets.ingest("table", str(path), name="api", closed_format="", **_kw(list(LONG_OPTS)))
    (tmp_path / "spec.yaml").write_text('closed_format: ""\n')
    wh.datasets.ingest(
        "table", str(path), name="spec", spec=str(tmp_path / "spec.yaml"), **_kw(list(LONG_OPTS))
    )
    wh.datasets.ingest(
        "table", str(path), name="wins", spec=str(tmp_path / "spec.yaml"),
        closed_format="{question} {answer}?", **_kw(list(LONG_OPTS)),
    )  # fmt: skip
    forms = wh.sql(
        "SELECT d.name, list(q.query_type ORDER BY q.query_type) AS types FROM query_form q "
        "JOIN relation r USING (relation_id) JOIN dataset d USING (dataset_id) GROUP BY 1 ORDER BY 1"
    )
    assert {n: list(t) for n, t in forms.values.tolist()} == {
        "api": ["open"] * 2, "cli": ["open"] * 2, "spec": ["open"] * 2,
        "wins": ["closed", "closed", "open", "open"],
    }  # fmt: skip
    assert "'' (empty) for none" in run_cli("ingest", "table", "--help").output


FACTS_CSV = (
    "rel,subject,object\ncapital,France,Paris\ncapital,Japan,Tokyo\ncapital,Peru,Lima\n"
    "language,France,French\nlanguage,Japan,Japanese\nlanguage,Peru,Spanish\n"
)
FACTS_MAPPING = {
    "shape": "facts",
    "relation": "rel",
    "entity": "subject",
    "answer": "object",
    "query_templates": ["Q: What is {entity}'s {answer}?", "{entity} is known for"],
    "context_templates": [
        "base={entity} is linked to {answer}.",
        "assertive=Definitely, {entity} is {answer}.",
    ],
}


def test_templated_facts_scored_end_to_end_with_a_tiny_model(tmp_path, db_path):
    """--shape facts: ingest -> the paper's sample design -> score; ψ and χ rows exist and
    v_reliance has a row per ψ row (the same pass stores the field's other measures)."""
    from scale_helpers import make_tiny_folder

    model = make_tiny_folder(tmp_path / "tiny")
    (tmp_path / "facts.csv").write_text(FACTS_CSV)
    wh = ctxprior.open(db_path, write=True)
    s = wh.datasets.ingest("table", str(tmp_path / "facts.csv"), name="facts", **FACTS_MAPPING)
    assert (s["relations"], s["facts"], s["shape"]) == (2, 6, "facts")
    sid = wh.samples.draw(
        "facts", entities=2, contexts=4, context_types=("base", "assertive"), answer_sampling="distinct"
    )
    assert wh.sql("SELECT design FROM sample WHERE sample_id = ?", [sid]).iloc[0, 0] == "paper"
    wh.runs.score(sid, model=model, device="cpu", progress=False)

    def one(q: str):
        return wh.sql(q, [sid]).iloc[0, 0]

    n_psi = one("SELECT count(*) FROM stg_persuasion WHERE sample_id = ?")
    n_chi = one("SELECT count(*) FROM stg_susceptibility WHERE sample_id = ?")
    # 2 relations x 2 entities x 4 contexts x 2 query forms (open, closed); χ per (fact, query form)
    assert (n_psi, n_chi) == (32, 8)
    assert one("SELECT count(*) FROM v_reliance WHERE sample_id = ?") == n_psi
    assert one("SELECT count(*) FROM v_reliance WHERE sample_id = ? AND (persuasion < 0 OR jsd IS NULL)") == 0


# ---- sources: the Hub (hf://datasets/...) and URLs, as the other sources take them ----------------


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A local stand-in for the Hub (tests/hub_mock.py) and a fresh Hugging Face cache; no network."""
    from hub_mock import local_hub

    yield from local_hub(monkeypatch, tmp_path)


def _parquet_bytes(rows) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue().to_pybytes()


def test_presets_and_table_from_the_hub_record_the_commit(hub, run_cli, db_path):
    nq = _parquet_bytes(NQ_SWAP)
    first = hub.add_dataset(
        "lab/NQ-Swap", {"README.md": b"---\n---\n", "data/dev-00000-of-00001.parquet": nq}
    )
    cqa = "".join(json.dumps(r) + "\n" for r in CONFLICTQA).encode()
    head = hub.add_dataset("lab/NQ-Swap", {"conflictQA-popQA-chatgpt.json": cqa}, summary="second file")
    spec = f"hf://datasets/lab/NQ-Swap@{first}/data/dev-00000-of-00001.parquet"
    r = run_cli("ingest", "nq-swap", spec)
    assert r.exit_code == 0, r.output
    assert f"source: {spec} (sha256 {hashlib.sha256(nq).hexdigest()})" in r.output
    wh = ctxprior.open(db_path, write=True)
    s = wh.datasets.ingest("table", "hf://datasets/lab/NQ-Swap/conflictQA-popQA-chatgpt.json", name="mine",
                           question="question", gold="ground_truth",
                           contexts=["counter=counter_memory_aligned_evidence:counter_answer"])  # fmt: skip
    assert (s["facts"], s["context_templates"]) == (2, 2)
    rows = wh.sql("SELECT name, source_path, source_sha256 FROM dataset ORDER BY dataset_id").values.tolist()
    assert rows == [
        ["nq_swap", spec, hashlib.sha256(nq).hexdigest()],
        ["mine", f"hf://datasets/lab/NQ-Swap@{head}/conflictQA-popQA-chatgpt.json", hashlib.sha256(cqa).hexdigest()],
    ]  # fmt: skip
    before = Path(db_path).read_bytes()
    r = run_cli("ingest", "nq-swap", "hf://datasets/lab/NQ-Swap/data/missing.parquet")
    assert r.exit_code == 2 and "has no file data/missing.parquet" in r.output
    assert Path(db_path).read_bytes() == before


def test_presets_and_table_from_a_url(tmp_path, monkeypatch, run_cli, db_path):
    """A file served by a local http.server: downloaded, cached, recorded with its URL and sha256;
    the --sha256 check and the bad-row errors name the URL."""
    from hub_mock import StaticServer, go_online

    go_online(monkeypatch)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    site = tmp_path / "site"
    site.mkdir()
    (site / "counterfact.json").write_text(json.dumps(COUNTERFACT))
    _long_csv(site / "t.csv", LONG)
    _long_csv(site / "bad.csv", [*LONG[:1], [*LONG[1][:4], "maybe", "Remus"]])
    web = StaticServer(site)
    try:
        sha = hashlib.sha256((site / "counterfact.json").read_bytes()).hexdigest()
        url = f"{web.url}/counterfact.json"
        r = run_cli("ingest", "counterfact", url, "--sha256", sha)
        assert r.exit_code == 0, r.output
        assert f"source: {url} (sha256 {sha})" in r.output
        r = run_cli("ingest", "table", f"{web.url}/t.csv", "--name", "mine", *LONG_OPTS)
        assert r.exit_code == 0, r.output
        before = Path(db_path).read_bytes()
        r = run_cli("ingest", "table", f"{web.url}/bad.csv", "--name", "bad", *LONG_OPTS)
        assert r.exit_code == 2 and f"{web.url}/bad.csv: row 2, column 'stance'" in r.output, r.output
        r = run_cli("ingest", "counterfact", url, "--name", "cf2", "--sha256", "0" * 64)
        assert r.exit_code == 2 and f"sha256 is {sha} but --sha256 expects" in r.output, r.output
        assert Path(db_path).read_bytes() == before
    finally:
        web.close()
    rows = ctxprior.open(db_path).sql("SELECT name, source_path, source_sha256 FROM dataset ORDER BY 1")
    assert rows.values.tolist() == [
        ["counterfact", url, sha],
        ["mine", f"{web.url}/t.csv", hashlib.sha256((site / "t.csv").read_bytes()).hexdigest()],
    ]


DRUID_COLUMNS = ["id", "claim_id", "claim_source", "claim", "claimant", "claim_date", "evidence_source",
                 "evidence", "evidence_data", "factcheck_verdict", "is_gold", "relevant", "evidence_stance"]  # fmt: skip


def _druid_row(i, claim_id, claim, verdict, evidence, stance, relevant=True, is_gold=False):
    src = claim_id.split("-")[0]
    return [f"{claim_id}-{i}", claim_id, src, claim, "Viral post" if verdict else "", "2021-03-01",
            f"https://example.org/{i}", evidence, "2021-02-01", verdict, is_gold, relevant, stance]  # fmt: skip


DRUID = [  # copenlu/druid's druid.tsv: a row per (claim, evidence), tab-separated, as pandas writes it
    _druid_row(0, "politifact-1", "5G causes cancer.", "False", "No study links 5G to cancer.", "refutes",
               is_gold=True),
    _druid_row(1, "politifact-1", "5G causes cancer.", "False", "Some worry about 5G.", "insufficient-neutral"),
    _druid_row(2, "politifact-1", "5G causes cancer.", "False", "5G gave me cancer, says a blog.", "supports"),
    _druid_row(3, "politifact-1", "5G causes cancer.", "False", "Recipes for pancakes.", "not_applicable",
               relevant=False),
    _druid_row(4, "factly-2", "Paris is in France.", "True", "Paris is the capital of France.", "supports"),
    _druid_row(5, "factly-2", "Paris is in France.", "True", "Paris is a city in Texas.", "insufficient-refutes"),
    _druid_row(6, "borderlines-3", "Crimea belongs to Ukraine.", "", "Crimea is disputed.", "insufficient-neutral"),
    _druid_row(7, "checkyourfact-4", "Taxes rose 10%.", "Half True", "Taxes rose 4%.", "refutes"),
    _druid_row(8, "checkyourfact-4", "Taxes rose 10%.", "Half True", "Some taxes rose.", "insufficient-supports"),
]  # fmt: skip


def druid_tsv(path: Path, rows=DRUID) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(DRUID_COLUMNS)
        w.writerows(rows)
    return path


def test_druid_preset_claims_evidence_by_stance(tmp_path, run_cli, db_path):
    r = run_cli("ingest", "druid", druid_tsv(tmp_path / "druid.tsv"))
    assert r.exit_code == 0, r.output
    assert "ingested dataset 'druid': 3 items, 8 context passages" in r.output
    assert "left out 1 of 9 rows: claims without a factcheck_verdict (no gold answer)" in r.output
    r = run_cli("sample", "--dataset", "druid", "--design", "fixed")
    assert r.exit_code == 0, r.output
    wh = ctxprior.open(db_path)
    got = wh.sql(
        "SELECT item, gold_answer, context_label, context_type, coalesce(supported_answer, '-') FROM stg_fixed_context "
        "ORDER BY context_id"
    )
    assert got.values.tolist() == [
        ["politifact-1", "False", "refutes", "gold", "False"],
        ["politifact-1", "False", "insufficient-neutral", "conflicting", "None"],
        ["politifact-1", "False", "supports", "conflicting", "True"],
        ["politifact-1", "False", "not_applicable", "irrelevant", "-"],
        ["factly-2", "True", "supports", "gold", "True"],
        ["factly-2", "True", "insufficient-refutes", "conflicting", "None"],
        [
            "checkyourfact-4",
            "None",
            "refutes",
            "conflicting",
            "False",
        ],  # Half True: None, as the authors' scale
        ["checkyourfact-4", "None", "insufficient-supports", "conflicting", "None"],  # CUB App. B.3
    ]
    forms = wh.sql("SELECT template FROM query_form ORDER BY query_form_id")["template"].tolist()
    assert (
        forms[0]
        == (
            "Is the following claim True or False? If you are not sure or cannot answer, say None.\n\n"
            'Claimant: Viral post\nClaim: "5G causes cancer."\nAnswer:'
        )
        and len(forms) == 3
    )
    ctx = wh.sql("SELECT context FROM stg_fixed_context ORDER BY context_id LIMIT 1")
    assert ctx.iloc[0, 0] == 'Evidence: "No study links 5G to cancer."'  # the separator joins it to the query
    ds = wh.sql("SELECT source_format, source_sha256 FROM dataset").values.tolist()
    assert ds == [["druid", hashlib.sha256((tmp_path / "druid.tsv").read_bytes()).hexdigest()]]


def test_druid_bad_rows_exit_2(tmp_path, run_cli, db_path):
    assert run_cli("ingest", "demo", "--only", "demo").exit_code == 0
    before = Path(db_path).read_bytes()
    bad = [list(r) for r in DRUID]
    bad[4][12] = "maybe"
    r = run_cli("ingest", "druid", druid_tsv(tmp_path / "a.tsv", bad))
    assert (
        r.exit_code == 2 and "a.tsv: row 5, column 'evidence_stance': stance 'maybe' is not one" in r.output
    )
    bad = [list(r) for r in DRUID]
    bad[1][11] = "perhaps"
    r = run_cli("ingest", "druid", druid_tsv(tmp_path / "b.tsv", bad))
    assert r.exit_code == 2 and "row 2, column 'relevant': expected True or False, got 'perhaps'" in r.output
    r = run_cli("ingest", "druid", druid_tsv(tmp_path / "c.tsv", [DRUID[6]]))
    assert r.exit_code == 2 and "every row is left out (claims without a factcheck_verdict" in r.output
    assert Path(db_path).read_bytes() == before
