"""The run's rows: its identity (what makes two runs the same), finding a run to resume, and
committing one unit's score rows with its ``run_unit`` row in ONE transaction."""

from __future__ import annotations

import json

from ...sqlfiles import read_sql
from ...storage import runs
from ...storage.store import Store, utcnow
from ..options import ScoreConfig
from ..texts import SCORE_TABLES, UnitResult

RUN_KIND = "persuasion"


def run_identity(model: str, dtype: str, quantization: str | None, config: ScoreConfig) -> dict:
    """What makes two runs of a sample the same run (a rerun with it resumes)."""
    return {
        "model": model,
        "dtype": dtype,
        "quantization": quantization or "none",
        "score": config.to_json_dict(),
    }


def same_run(stored: dict | None, identity: dict) -> bool:
    """Whether a stored run's identity is ``identity``: model, dtype and quantization equal, and
    the options equal once each side's missing fields are filled in (``ScoreConfig.filled``: a
    field the stored run predates takes the value its runs had, by default the field's current
    default). So adding a ``ScoreConfig`` field whose default reproduces the old behaviour keeps
    every older unfinished run resumable by the same command."""
    if not isinstance(stored, dict) or not isinstance(stored.get("score"), dict):
        return False
    rest = {k: v for k, v in stored.items() if k != "score"}
    if rest != {k: v for k, v in identity.items() if k != "score"}:
        return False
    return ScoreConfig.filled(stored["score"]) == ScoreConfig.filled(identity["score"])


def find_resumable(store: Store, sample_id: int, identity: dict) -> int | None:
    """The newest unfinished run of this sample with the same model and options (:func:`same_run`),
    if any."""
    return runs.find_resumable(
        store, RUN_KIND, lambda cfg: same_run(json.loads(cfg).get("identity"), identity), sample_id=sample_id
    )


def refresh_counts(store: Store, run_id: int) -> tuple[int, int]:
    """Recount the run's done units and prompts from ``run_unit`` into the ``run`` row."""
    done, prompts = store.query(read_sql("ctxprior.scoring.runs", "sql/unit_counts.sql"), [run_id])[0]
    store.execute("UPDATE run SET units_done = ?, prompts_done = ? WHERE run_id = ?", [done, prompts, run_id])
    return int(done), int(prompts)


def write_unit(store: Store, run_id: int, res: UnitResult) -> None:
    """One transaction: the unit's rows (if it succeeded) and its run_unit row."""
    s = res.spec
    with store.transaction():
        prev = store.query(
            "SELECT status, attempts FROM run_unit WHERE run_id = ? AND unit_id = ?", [run_id, s.unit_id]
        )
        if prev and prev[0][0] == "done":
            return  # never write a unit twice
        attempts = (prev[0][1] or 0) + 1 if prev else 1
        store.execute("DELETE FROM run_unit WHERE run_id = ? AND unit_id = ?", [run_id, s.unit_id])
        store.execute("DELETE FROM run_unit_engine WHERE run_id = ? AND unit_id = ?", [run_id, s.unit_id])
        if res.error is None:
            for table in SCORE_TABLES:
                t = res.tables.get(table)
                if t is not None and t.num_rows:
                    store.insert_arrow(table, t)
        store.insert_arrow(
            "run_unit",
            {
                "run_id": [run_id],
                "unit_id": [s.unit_id],
                "relation_id": [s.relation_id],
                "query_form_id": [s.query_form_id],
                "shard": [s.shard],
                "status": ["done" if res.error is None else "failed"],
                "n_prompts": [res.n_prompts],
                "attempts": [attempts],
                "worker": [res.worker],
                "error": [res.error],
                "seconds": [res.seconds],
                "finished_at": [utcnow()],
            },
        )
        if res.engine:
            store.insert_arrow(
                "run_unit_engine",
                {"run_id": [run_id], "unit_id": [s.unit_id], **{k: [v] for k, v in res.engine.items()}},
            )
        refresh_counts(store, run_id)
